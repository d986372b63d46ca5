#include "runtime/vulkan/compute_pipeline.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "runtime/vulkan/shader_table.h"
#include "runtime/vulkan/spirv_cache.h"
#include "runtime/vulkan/spirv_specialize.h"
#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

namespace {

// Throws Error naming the pipeline where its bindings, push constants or required subgroup size
// are more than the device gives.
void check_fits_device(const PipelineDesc& desc, uint32_t texel_bindings, const DeviceInfo& info) {
  const uint32_t texels = uint32_t(std::popcount(texel_bindings)), storage = desc.bindings - texels;
  VKG_CHECK(storage <= info.max_storage_buffers_per_stage, "pipeline '" << desc.name << "': " << storage
                                                                        << " storage buffers exceed the device's "
                                                                        << info.max_storage_buffers_per_stage);
  VKG_CHECK(texels == 0 || (info.texel_buffers && texels <= info.max_sampled_images_per_stage),
            "pipeline '" << desc.name << "' reads " << texels << " uniform texel buffer(s), which '" << info.name
                         << "' cannot give (texel buffers "
                         << (info.texel_buffers ? "limited to " + std::to_string(info.max_sampled_images_per_stage)
                                                : std::string("unavailable or switched off"))
                         << ")");
  VKG_CHECK(desc.push_constant_bytes % 4 == 0 && desc.push_constant_bytes <= info.max_push_constants_bytes,
            "pipeline '" << desc.name << "': " << desc.push_constant_bytes
                         << " bytes of push constants (must be a multiple of 4, at most "
                         << info.max_push_constants_bytes << ")");
  if (desc.subgroup_size != 0) {
    const uint32_t size = desc.subgroup_size;
    VKG_CHECK(info.subgroup_size_control && size >= info.min_subgroup_size && size <= info.max_subgroup_size &&
                  std::has_single_bit(size),
              "pipeline '" << desc.name << "' requires subgroups of " << size << " invocations, which '" << info.name
                           << "' cannot give (subgroup size control "
                           << (info.subgroup_size_control ? "from " + std::to_string(info.min_subgroup_size) + " to " +
                                                                std::to_string(info.max_subgroup_size)
                                                          : std::string("unavailable or switched off"))
                           << ")");
  }
}

}  // namespace

ComputePipeline::ComputePipeline(Device& device, std::span<const uint32_t> spirv, PipelineDesc desc)
    : device_(&device), desc_(std::move(desc)) {
  const DeviceInfo& info = device.info();
  VKG_CHECK(!spirv.empty() && spirv[0] == 0x07230203u, "pipeline '" << desc_.name << "': not SPIR-V (bad magic)");
  const uint32_t declared = desc_.bindings >= 32 ? ~0u : (1u << desc_.bindings) - 1;
  texel_bindings_ = texel_buffer_bindings(spirv) & declared;
  read_only_bindings_ = vk::read_only_bindings(spirv) & declared;
  check_fits_device(desc_, texel_bindings_, info);
  VkDevice dev = device.handle();
  try {
    const bool host_specialized = create_module(spirv);
    const Instance& instance = device.instance();
    const std::string key = pipeline_key(desc_);
    instance.name_object(dev, VK_OBJECT_TYPE_SHADER_MODULE, reinterpret_cast<uint64_t>(module_), key);
    create_layouts(key);
    create_pipeline(host_specialized, key);
  } catch (...) {
    release();
    throw;
  }
}

bool ComputePipeline::create_module(std::span<const uint32_t> spirv) {
  const DeviceInfo& info = device_->info();
  std::vector<uint32_t> patched;
  if (info.nan_preserve) {
    patched = preserving_nan(spirv, info.nan_preserve_fp16);
    spirv = patched;
  }
  std::optional<std::vector<uint32_t>> specialized;
  if (info.host_specialization && !desc_.specialization.empty()) {
    SpirvCache& cache = SpirvCache::process();
    specialized = cache.find(spirv, desc_.specialization);
    if (!specialized) {
      specialized = specialize_spirv(spirv, desc_.specialization);
      if (specialized) cache.store(spirv, desc_.specialization, *specialized);
    }
    if (specialized) spirv = *specialized;
  }
  VkShaderModuleCreateInfo module{};
  module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module.codeSize = spirv.size_bytes();
  module.pCode = spirv.data();
  VKG_VK_CHECK(vkCreateShaderModule(device_->handle(), &module, nullptr, &module_),
               "pipeline '" << desc_.name << "': shader module");
  return specialized.has_value();
}

void ComputePipeline::create_layouts(const std::string& key) {
  VkDevice dev = device_->handle();
  std::vector<VkDescriptorSetLayoutBinding> bindings(desc_.bindings);
  for (uint32_t i = 0; i < desc_.bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType =
        (texel_bindings_ >> i & 1u) != 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_layout{};
  set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_layout.bindingCount = uint32_t(bindings.size());
  set_layout.pBindings = bindings.data();
  VKG_VK_CHECK(vkCreateDescriptorSetLayout(dev, &set_layout, nullptr, &set_layout_),
               "pipeline '" << desc_.name << "': descriptor set layout");

  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.size = desc_.push_constant_bytes;
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &set_layout_;
  layout.pushConstantRangeCount = desc_.push_constant_bytes > 0 ? 1 : 0;
  layout.pPushConstantRanges = &push;
  VKG_VK_CHECK(vkCreatePipelineLayout(dev, &layout, nullptr, &layout_), "pipeline '" << desc_.name << "': layout");
  device_->instance().name_object(dev, VK_OBJECT_TYPE_PIPELINE_LAYOUT, reinterpret_cast<uint64_t>(layout_), key);
}

void ComputePipeline::create_pipeline(bool host_specialized, const std::string& key) {
  VkDevice dev = device_->handle();
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (const SpecConstant& c : desc_.specialization) {
    entries.push_back({c.id, uint32_t(values.size() * sizeof(uint32_t)), sizeof(uint32_t)});
    values.push_back(c.value);
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = uint32_t(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = values.size() * sizeof(uint32_t);
  spec.pData = values.data();

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO;
  subgroup.requiredSubgroupSize = desc_.subgroup_size;
  VkComputePipelineCreateInfo pipeline{};
  pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  if (desc_.subgroup_size != 0) {
    pipeline.stage.pNext = &subgroup;
    const auto local = std::find_if(desc_.specialization.begin(), desc_.specialization.end(),
                                    [](const SpecConstant& c) { return c.id == 0; });
    if (local != desc_.specialization.end() && local->value % desc_.subgroup_size == 0)
      pipeline.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline.stage.module = module_;
  pipeline.stage.pName = "main";
  pipeline.stage.pSpecializationInfo = entries.empty() || host_specialized ? nullptr : &spec;
  pipeline.layout = layout_;
  VKG_VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &pipeline, nullptr, &pipeline_),
               "pipeline '" << desc_.name << "': creating the compute pipeline");
  device_->instance().name_object(dev, VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<uint64_t>(pipeline_), key);
}

PipelineDesc pipeline_desc(const Dispatch& d) {
  PipelineDesc desc;
  desc.name = d.shader;
  desc.bindings = uint32_t(d.bindings.size());
  desc.push_constant_bytes = uint32_t(d.push.size() * 4);
  for (const SpecValue& s : d.spec) desc.specialization.push_back(SpecConstant{s.id, s.value});
  desc.subgroup_size = d.subgroup_size;
  return desc;
}

std::string pipeline_key(const PipelineDesc& desc) {
  std::ostringstream key;
  key << desc.name << '|' << desc.bindings << '|' << desc.push_constant_bytes << "|sg" << desc.subgroup_size;
  for (const SpecConstant& s : desc.specialization) key << '|' << s.id << '=' << s.value;
  return key.str();
}

std::optional<PipelineDesc> parse_pipeline_key(const std::string& key) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t bar = key.find('|', start);
    fields.push_back(key.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  auto number = [](const std::string& text, uint32_t& out) {
    if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long long v = std::stoull(text);
    out = uint32_t(v);
    return v <= 0xffffffffull;
  };
  PipelineDesc desc;
  if (fields.size() < 4 || fields[0].empty() || fields[0].find_first_of(" \t\n") != std::string::npos ||
      !number(fields[1], desc.bindings) || !number(fields[2], desc.push_constant_bytes) ||
      fields[3].compare(0, 2, "sg") != 0 || !number(fields[3].substr(2), desc.subgroup_size))
    return std::nullopt;
  desc.name = fields[0];
  for (size_t i = 4; i < fields.size(); ++i) {
    const size_t eq = fields[i].find('=');
    SpecConstant c;
    if (eq == std::string::npos || !number(fields[i].substr(0, eq), c.id) || !number(fields[i].substr(eq + 1), c.value))
      return std::nullopt;
    desc.specialization.push_back(c);
  }
  return desc;
}

ComputePipeline::~ComputePipeline() { release(); }

ComputePipeline::ComputePipeline(ComputePipeline&& other) noexcept
    : device_(other.device_),
      desc_(std::move(other.desc_)),
      module_(std::exchange(other.module_, VK_NULL_HANDLE)),
      set_layout_(std::exchange(other.set_layout_, VK_NULL_HANDLE)),
      layout_(std::exchange(other.layout_, VK_NULL_HANDLE)),
      pipeline_(std::exchange(other.pipeline_, VK_NULL_HANDLE)),
      texel_bindings_(other.texel_bindings_),
      read_only_bindings_(other.read_only_bindings_),
      dispatched_(other.dispatched()) {}

ComputePipeline& ComputePipeline::operator=(ComputePipeline&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    desc_ = std::move(other.desc_);
    module_ = std::exchange(other.module_, VK_NULL_HANDLE);
    set_layout_ = std::exchange(other.set_layout_, VK_NULL_HANDLE);
    layout_ = std::exchange(other.layout_, VK_NULL_HANDLE);
    pipeline_ = std::exchange(other.pipeline_, VK_NULL_HANDLE);
    texel_bindings_ = other.texel_bindings_;
    read_only_bindings_ = other.read_only_bindings_;
    dispatched_.store(other.dispatched(), std::memory_order_relaxed);
  }
  return *this;
}

void ComputePipeline::release() {
  if (device_ == nullptr || device_->hung()) return;
  VkDevice dev = device_->handle();
  if (pipeline_ != VK_NULL_HANDLE) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (module_ != VK_NULL_HANDLE) vkDestroyShaderModule(dev, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

VkFormat texel_view_format(const PipelineDesc& desc, uint32_t binding) {
  const bool f32_variant = desc.name.size() >= 4 && desc.name.compare(desc.name.size() - 4, 4, ".f32") == 0;
  const auto f32_bits = std::find_if(desc.specialization.begin(), desc.specialization.end(),
                                     [](const SpecConstant& c) { return c.id == kF32BindingsSpec; });
  const bool fused_f32 = f32_bits != desc.specialization.end() && (f32_bits->value >> binding & 1u) != 0;
  return f32_variant || fused_f32 ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R16G16B16A16_SFLOAT;
}

namespace {

std::vector<BufferRegion> whole(std::span<const Buffer* const> buffers) {
  std::vector<BufferRegion> regions;
  for (const Buffer* b : buffers) regions.push_back({b, 0, 0});
  return regions;
}

// The bytes the texel view of binding `i` spans for the `size` bytes of region `r`; Error where
// that is more texels than the device's maxTexelBufferElements.
uint64_t texel_view_size(const PipelineDesc& desc, const BufferRegion& r, size_t i, uint64_t size,
                         const DeviceInfo& info) {
  const uint64_t texel_bytes = texel_view_format(desc, uint32_t(i)) == VK_FORMAT_R32G32B32A32_SFLOAT ? 16 : 8;
  // The region's texels, a partial last one included where the allocation holds its bytes.
  const uint64_t room = r.buffer->allocated_size() - r.offset;
  size = std::min((size + texel_bytes - 1) / texel_bytes * texel_bytes, room / texel_bytes * texel_bytes);
  // One class of view for the driver (DeviceProfile::canonical_texel_views): a range whose
  // second byte is not zero, within the room every buffer keeps for it.
  if (info.canonical_texel_views && (size & 0xff00u) == 0 && size + kTexelViewSlack <= room &&
      (size + kTexelViewSlack) / texel_bytes <= info.max_texel_buffer_elements)
    size += kTexelViewSlack;
  const uint64_t texels = size / texel_bytes;
  VKG_CHECK(texels <= info.max_texel_buffer_elements,
            "pipeline '" << desc.name << "': binding " << i << " is " << texels
                         << " texels, above the device's maxTexelBufferElements of " << info.max_texel_buffer_elements);
  return size;
}

// The bytes binding `i` binds of region `r` (DescriptorSet::ranges), after checking that the region
// lies in its buffer and meets the device's offset alignment and range limit for its kind of binding.
uint64_t bound_size(const PipelineDesc& desc, const BufferRegion& r, size_t i, bool is_texel, const DeviceInfo& info) {
  VKG_CHECK(r.buffer != nullptr && r.buffer->handle() != VK_NULL_HANDLE,
            "pipeline '" << desc.name << "': binding " << i << " has no buffer");
  VKG_CHECK(r.offset < r.buffer->size() && r.size <= r.buffer->size() - r.offset,
            "pipeline '" << desc.name << "': binding " << i << " (" << r.size << " bytes at " << r.offset
                         << ") lies outside its buffer of " << r.buffer->size() << " bytes");
  const uint64_t size = r.size != 0 ? r.size : r.buffer->size() - r.offset;
  const uint64_t alignment = std::max<uint64_t>(
      1, is_texel ? info.min_texel_buffer_offset_alignment : info.min_storage_buffer_offset_alignment);
  VKG_CHECK(r.offset % alignment == 0, "pipeline '" << desc.name << "': binding " << i << " starts at byte " << r.offset
                                                    << " of its buffer, not a multiple of the device's "
                                                    << (is_texel ? "texel" : "storage") << " buffer offset alignment "
                                                    << alignment);
  if (is_texel) return texel_view_size(desc, r, i, size, info);
  VKG_CHECK(size <= info.max_storage_buffer_range,
            "pipeline '" << desc.name << "': binding " << i << " is " << size
                         << " bytes, above the device's maxStorageBufferRange of " << info.max_storage_buffer_range);
  return size;
}

}  // namespace

DescriptorSet::DescriptorSet(Device& device, const ComputePipeline& pipeline, std::span<const Buffer* const> buffers)
    : DescriptorSet(device, pipeline, std::span<const BufferRegion>(whole(buffers))) {}

DescriptorSet::DescriptorSet(Device& device, const ComputePipeline& pipeline, std::span<const BufferRegion> regions)
    : device_(&device) {
  const PipelineDesc& desc = pipeline.desc();
  VKG_CHECK(regions.size() == desc.bindings,
            "pipeline '" << desc.name << "' takes " << desc.bindings << " buffers, got " << regions.size());
  const uint32_t texel = pipeline.texel_bindings();
  auto is_texel = [&](size_t i) { return (texel >> i & 1u) != 0; };
  const DeviceInfo& info = device.info();
  std::vector<uint64_t> sizes(regions.size());
  for (size_t i = 0; i < regions.size(); ++i) sizes[i] = bound_size(desc, regions[i], i, is_texel(i), info);
  try {
    allocate_set(pipeline);
    write_bindings(pipeline, regions, sizes);
  } catch (...) {
    release();
    throw;
  }
}

void DescriptorSet::allocate_set(const ComputePipeline& pipeline) {
  const PipelineDesc& desc = pipeline.desc();
  VkDevice dev = device_->handle();
  const uint32_t texels = uint32_t(std::popcount(pipeline.texel_bindings()));
  std::vector<VkDescriptorPoolSize> pool_sizes = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(1, desc.bindings - texels)}};
  if (texels > 0) pool_sizes.push_back({VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texels});
  VkDescriptorPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pool.maxSets = 1;
  pool.poolSizeCount = uint32_t(pool_sizes.size());
  pool.pPoolSizes = pool_sizes.data();
  VKG_VK_CHECK(vkCreateDescriptorPool(dev, &pool, nullptr, &pool_), "pipeline '" << desc.name << "': descriptor pool");

  VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  alloc.descriptorPool = pool_;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  VKG_VK_CHECK(vkAllocateDescriptorSets(dev, &alloc, &set_), "pipeline '" << desc.name << "': descriptor set");
}

void DescriptorSet::write_bindings(const ComputePipeline& pipeline, std::span<const BufferRegion> regions,
                                   const std::vector<uint64_t>& sizes) {
  const PipelineDesc& desc = pipeline.desc();
  const uint32_t texel = pipeline.texel_bindings();
  auto is_texel = [&](size_t i) { return (texel >> i & 1u) != 0; };
  VkDevice dev = device_->handle();
  const DeviceInfo& info = device_->info();
  std::vector<VkDescriptorBufferInfo> infos(regions.size());
  std::vector<VkWriteDescriptorSet> writes(regions.size());
  views_.assign(regions.size(), VK_NULL_HANDLE);
  for (size_t i = 0; i < regions.size(); ++i) {
    const BufferRegion& r = regions[i];
    // The whole of a buffer with room for canonical texel views would bind that room too.
    const bool whole_buffer = r.offset == 0 && r.size == 0 && !info.canonical_texel_views;
    ranges_.push_back({r.offset, sizes[i]});
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set_;
    writes[i].dstBinding = uint32_t(i);
    writes[i].descriptorCount = 1;
    if (is_texel(i)) {
      VkBufferViewCreateInfo view{};
      view.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
      view.buffer = r.buffer->handle();
      view.format = texel_view_format(desc, uint32_t(i));
      view.offset = r.offset;
      view.range = whole_buffer ? VK_WHOLE_SIZE : sizes[i];
      VKG_VK_CHECK(vkCreateBufferView(dev, &view, nullptr, &views_[i]),
                   "pipeline '" << desc.name << "': texel buffer view of binding " << i);
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      writes[i].pTexelBufferView = &views_[i];
    } else {
      infos[i] = {r.buffer->handle(), r.offset, whole_buffer ? VK_WHOLE_SIZE : sizes[i]};
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
  }
  vkUpdateDescriptorSets(dev, uint32_t(writes.size()), writes.data(), 0, nullptr);
}

DescriptorSet::~DescriptorSet() { release(); }

DescriptorSet::DescriptorSet(DescriptorSet&& other) noexcept
    : device_(other.device_),
      pool_(std::exchange(other.pool_, VK_NULL_HANDLE)),
      set_(std::exchange(other.set_, VK_NULL_HANDLE)),
      views_(std::move(other.views_)),
      ranges_(std::move(other.ranges_)) {}

DescriptorSet& DescriptorSet::operator=(DescriptorSet&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    pool_ = std::exchange(other.pool_, VK_NULL_HANDLE);
    set_ = std::exchange(other.set_, VK_NULL_HANDLE);
    views_ = std::move(other.views_);
    ranges_ = std::move(other.ranges_);
    other.views_.clear();
  }
  return *this;
}

void DescriptorSet::release() {
  if (device_ == nullptr || device_->hung()) return;
  // Destroying the pool frees its set.
  if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_->handle(), pool_, nullptr);
  for (VkBufferView view : views_)
    if (view != VK_NULL_HANDLE) vkDestroyBufferView(device_->handle(), view, nullptr);
  views_.clear();
  pool_ = VK_NULL_HANDLE;
  set_ = VK_NULL_HANDLE;
}

}  // namespace vkg::vk
