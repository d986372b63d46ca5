// A compute pipeline built from SPIR-V words: its shader module, a descriptor
// set layout (bindings 0..N-1 of set 0: storage buffers, and uniform texel
// buffers where the shader declares them), an optional push constant range and
// specialization constants. A DescriptorSet binds buffers to one pipeline's
// layout. Single owners: movable, not copyable.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/device.h"

namespace vkg::vk {

// One 32-bit specialization constant (`layout(constant_id = id)`); bools are 0/1.
struct SpecConstant {
  uint32_t id = 0;
  uint32_t value = 0;

  static SpecConstant u32(uint32_t id, uint32_t v) { return {id, v}; }
  static SpecConstant i32(uint32_t id, int32_t v) { return {id, std::bit_cast<uint32_t>(v)}; }
  static SpecConstant f32(uint32_t id, float v) { return {id, std::bit_cast<uint32_t>(v)}; }
  static SpecConstant boolean(uint32_t id, bool v) { return {id, v ? 1u : 0u}; }
};

struct PipelineDesc {
  std::string name;                        // for messages and logs, e.g. "elementwise/add.f32"
  uint32_t bindings = 0;                   // bindings 0..bindings-1 of set 0
  uint32_t push_constant_bytes = 0;        // multiple of 4; 0: none
  std::vector<SpecConstant> specialization;
  // Required subgroup size (DeviceInfo::subgroup_size_control), with full
  // subgroups when the workgroup size (constant 0) is a multiple of it; 0: the driver's choice.
  uint32_t subgroup_size = 0;
};

// The pipeline a dispatch runs on (its shader, bindings, push words, specialization, subgroup size).
PipelineDesc pipeline_desc(const Dispatch& d);
// A key naming a pipeline: pipelines with equal keys are interchangeable.
// "<name>|<bindings>|<push bytes>|sg<subgroup size>|<id>=<value>|...", one line of printable text.
std::string pipeline_key(const PipelineDesc& desc);
// The PipelineDesc a pipeline_key names; nullopt when `key` is not one.
std::optional<PipelineDesc> parse_pipeline_key(const std::string& key);

class ComputePipeline {
 public:
  // Throws Error naming desc.name if the SPIR-V is empty or the driver rejects it,
  // or if the layout exceeds the device's limits.
  ComputePipeline(Device& device, std::span<const uint32_t> spirv, PipelineDesc desc);
  ~ComputePipeline();
  ComputePipeline(ComputePipeline&& other) noexcept;
  ComputePipeline& operator=(ComputePipeline&& other) noexcept;
  ComputePipeline(const ComputePipeline&) = delete;
  ComputePipeline& operator=(const ComputePipeline&) = delete;

  const PipelineDesc& desc() const { return desc_; }
  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  // Bit b: binding b is a uniform texel buffer (texel_buffer_bindings of the SPIR-V).
  uint32_t texel_bindings() const { return texel_bindings_; }
  // Bit b: binding b is only read (read_only_bindings of the SPIR-V).
  uint32_t read_only_bindings() const { return read_only_bindings_; }
  // Whether a command buffer has dispatched the pipeline (ComputeCommands): from then on its
  // machine code exists on every driver, also on those that compile at the first dispatch.
  bool dispatched() const { return dispatched_.load(std::memory_order_relaxed); }
  void mark_dispatched() const { dispatched_.store(true, std::memory_order_relaxed); }

 private:
  // The constructor's steps after its checks. create_module returns whether the host specialized the
  // SPIR-V (DeviceInfo::host_specialization), which then takes no specialization info.
  bool create_module(std::span<const uint32_t> spirv);
  void create_layouts(const std::string& key);  // the descriptor set layout and the pipeline layout
  void create_pipeline(bool host_specialized, const std::string& key);
  void release();

  Device* device_ = nullptr;
  PipelineDesc desc_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  uint32_t texel_bindings_ = 0;
  uint32_t read_only_bindings_ = 0;
  mutable std::atomic<bool> dispatched_{false};
};

// The format of the view through which a pipeline's texel binding reads its buffer: vec4s of the
// shader variant's storage type (fp32 for "<shader>.f32", else fp16), or fp32 where the dispatch
// fuses a reformat into that binding (specialization constant 40, shaders/common/f32_bindings.glsl).
VkFormat texel_view_format(const PipelineDesc& desc, uint32_t binding);

// Bytes [offset, offset + size) of a buffer; size 0: to the buffer's end.
struct BufferRegion {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Buffers, or regions of them, bound to a pipeline's bindings 0..N-1 (a texel binding through a
// view of texel_view_format), with its own pool.
class DescriptorSet {
 public:
  // `buffers` must match pipeline.desc().bindings in number; each must fit the
  // device's maxStorageBufferRange, or maxTexelBufferElements texels when bound
  // as a texel buffer, and a region's offset the device's offset alignment for
  // its kind of binding. Throws Error otherwise.
  DescriptorSet(Device& device, const ComputePipeline& pipeline, std::span<const BufferRegion> regions);
  // Whole buffers.
  DescriptorSet(Device& device, const ComputePipeline& pipeline, std::span<const Buffer* const> buffers);
  ~DescriptorSet();
  DescriptorSet(DescriptorSet&& other) noexcept;
  DescriptorSet& operator=(DescriptorSet&& other) noexcept;
  DescriptorSet(const DescriptorSet&) = delete;
  DescriptorSet& operator=(const DescriptorSet&) = delete;

  VkDescriptorSet handle() const { return set_; }
  // The byte range (offset, size) each binding was given: the region asked for, its texel views
  // rounded to whole texels and, on devices with canonical_texel_views, lengthened.
  const std::vector<std::pair<uint64_t, uint64_t>>& ranges() const { return ranges_; }

 private:
  // The constructor's steps after its checks: the pool and its one set, then a view for each texel
  // binding and the writes of all bindings (`sizes`: the bytes each binds).
  void allocate_set(const ComputePipeline& pipeline);
  void write_bindings(const ComputePipeline& pipeline, std::span<const BufferRegion> regions,
                      const std::vector<uint64_t>& sizes);
  void release();

  Device* device_ = nullptr;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  std::vector<VkBufferView> views_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

}  // namespace vkg::vk
