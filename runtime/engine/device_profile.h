// What the builder and the tactics know about a device (DESIGN.md, "Layout"): a
// plain-data profile that prints and compares: features, limits, subgroup
// sizes, cooperative-matrix shapes, the memory path, and the named properties
// tactics rely on with the switches that turned some off. The Vulkan layer
// fills it from a VkPhysicalDevice (runtime/vulkan/device_info.h, list_devices);
// tests fill it by hand. Free of Vulkan headers: runtime/engine and
// runtime/tactics include nothing from runtime/vulkan.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace vkg {

// VkPhysicalDeviceType, in vkgraphy's terms.
enum class DeviceType { Discrete, Integrated, Virtual, Cpu, Other };
const char* device_type_name(DeviceType t);  // "discrete", "integrated", "virtual", "cpu", "other"

// How weights, activations, inputs and outputs reach device memory (DESIGN.md,
// "Memory and execution"); `inspect device` prints it.
enum class MemoryPath {
  Unified,  // device-local memory is host-visible and host-cached (integrated GPUs, CPU drivers): all in place
  Rebar,    // device-local memory is host-visible but uncached (resizable BAR): host writes in place, reads staged
  Staging,  // device-local memory is not host-visible (or staging is forced): every transfer goes through staging
};
const char* memory_path_name(MemoryPath p);  // "unified", "resizable-bar", "staging"

// One device memory heap.
struct MemoryHeap {
  uint64_t size_bytes = 0;
  bool device_local = false;
};

// One shape of a cooperative-matrix multiply-add a subgroup can do: D (m x n)
// = A (m x k) * B (k x n) + C, A and B fp16, C and D fp16 or fp32 (acc32).
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  bool acc32 = false;
  bool operator==(const CooperativeMatrixShape&) const = default;
};

// One multiply-add that VK_KHR_cooperative_matrix reports (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR),
// whatever its types, as `inspect device` lists it: D (m x n, result_type) = A (m x k) * B (k x n) + C.
struct CooperativeMatrixProperties {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, result_type;  // "f16", "f32", "bf16", "s8", "u32", ...
  bool saturating = false;                          // saturatingAccumulation
  std::string scope;                                // "subgroup", "workgroup", "device", "queue-family"
  bool operator==(const CooperativeMatrixProperties&) const = default;
};

struct DeviceProfile {
  uint32_t index = 0;       // position in the instance's device list: `--device INDEX`
  std::string name;         // deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string driver_name;  // VkPhysicalDeviceDriverProperties::driverName, e.g. "llvmpipe"
  std::string driver_info;  // driverInfo, e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
  DeviceType type = DeviceType::Other;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t api_version = 0;  // VK_MAKE_API_VERSION encoded
  uint32_t driver_version = 0;
  std::string uuid;  // pipelineCacheUUID as hex: identifies device + driver build

  // Features vkgraphy uses.
  bool shader_float16 = false;        // fp16 arithmetic in shaders
  bool storage_buffer_16bit = false;  // fp16/int16 elements in storage buffers
  bool shader_int64 = false;          // 64-bit integers in shaders (8 floats per load or store)
  uint32_t subgroup_size = 0;         // the default subgroup size of compute shaders
  // Subgroup shuffles in compute shaders (VK_SUBGROUP_FEATURE_SHUFFLE_BIT): the block GEMMs that
  // share A's rows through them (gemm/block_shuffle_a.comp, *_shuffle_a tactics).
  bool subgroup_shuffle = false;
  // Subgroup size control (Vulkan 1.3 / VK_EXT_subgroup_size_control, for
  // compute, with full subgroups): a pipeline can require any power of two in
  // [min_subgroup_size, max_subgroup_size] (Dispatch::subgroup_size).
  bool subgroup_size_control = false;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  // Cooperative matrices: the fp16 shapes a subgroup multiplies, through VK_KHR_cooperative_matrix
  // (AMD RDNA3, Intel Arc, NVIDIA; the tensor-core tactics' "_khr" shaders) where the device and
  // this build have it, else through VK_NV_cooperative_matrix (NVIDIA; the shaders without suffix).
  bool cooperative_matrix = false;
  bool cooperative_matrix_khr = false;  // cooperative_matrix_shapes are KHR's, and the KHR shaders run
  // Emulated for tests on a device without them ($VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX, lavapipe):
  // 16x16x16 fp16 shapes, the "_emu" builds of the shaders that have one (shaders/common/coopmat.glsl).
  bool cooperative_matrix_emulated = false;
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;
  // What the device reports through each extension: every KHR multiply-add (`inspect device`), and
  // the NV fp16 shapes, which stand in when a switch turns the KHR form off.
  std::vector<CooperativeMatrixProperties> cooperative_matrix_khr_properties;
  std::vector<CooperativeMatrixShape> cooperative_matrix_nv_shapes;
  // Uniform texel buffers of fp32 and fp16 vec4s (R32G32B32A32_SFLOAT and
  // R16G16B16A16_SFLOAT views): shaders read tensors through them where the
  // device loads texels faster than storage buffers (lavapipe gathers texels
  // in SIMD and loads storage buffers one invocation at a time).
  bool texel_buffers = false;
  uint32_t max_texel_buffer_elements = 0;  // texels per view
  // NaN and infinity preserved (Vulkan 1.2 float controls, shaderSignedZeroInfNanPreserveFloat32 and
  // ...Float16): every pipeline declares SignedZeroInfNanPreserve (runtime/vulkan/shader_table.h, preserving_nan),
  // so that NaN reaches the outputs as the reference backend gives it (Relu(NaN) = NaN, a max over a
  // NaN is NaN) instead of the driver folding compares and selects into min/max that drop it.
  bool nan_preserve = false;
  bool nan_preserve_fp16 = false;

  // Limits.
  uint32_t max_workgroup_size[3] = {0, 0, 0};
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint32_t max_shared_memory_bytes = 0;
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_push_constants_bytes = 0;
  uint32_t max_bound_descriptor_sets = 0;
  uint32_t max_storage_buffers_per_stage = 0;
  uint32_t max_sampled_images_per_stage = 0;  // uniform texel buffers count here
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t min_texel_buffer_offset_alignment = 0;
  std::vector<MemoryHeap> heaps;
  // A memory type that is device-local, host-visible and host-coherent on the
  // largest device-local heap (so it can hold the whole model), and whether it is host-cached too.
  bool device_local_host_visible = false;
  bool device_local_host_cached = false;
  // What the driver gets wrong or does slowly (ncnn's bug_* properties), which tactics and the
  // builder take into account:
  // - loop_iteration_limit: llvmpipe (lavapipe) ends every loop of a shader invocation once all
  //   its loops together ran about 65535 iterations (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS; seen
  //   failing from about 8,000 in shaders with barriers): a longer-running invocation silently
  //   computes a wrong result, so tactics whose invocations loop longer decline. 0: no limit.
  // - fp16_slower: fp16 arithmetic is slower than fp32 (CPU devices), so a timed --fp16 build
  //   would keep nearly every layer in fp32 (BuilderConfig::fp16_policy).
  uint32_t loop_iteration_limit = 0;
  bool fp16_slower = false;
  // Pipelines get SPIR-V specialized on the host, without specialization info
  // (runtime/vulkan/spirv_specialize.h): CPU drivers, which translate a whole general shader
  // before they drop what its constants rule out. Not part of the device's identity for
  // timings: the driver compiles the same shader either way.
  bool host_specialization = false;
  // The driver compiles a pipeline's machine code at its first dispatch, one pipeline at a time in
  // a process, and keeps it in an on-disk cache that other processes read (llvmpipe, with Mesa's
  // shader cache on): the builder's worker processes compile a layer's candidates side by side
  // (runtime/vulkan/compile_workers.h). Not part of the device's identity for timings.
  bool compiles_in_one_thread = false;
  // The driver compiles a pipeline again for texel buffers of another class (llvmpipe, Mesa 22.3:
  // a texel buffer's shader state holds whether its buffer's size is a power of two, and the
  // view's byte range read as a mip level, its second byte zero or not): an engine's pipelines
  // compiled again at its first run, where its buffers are not the ones its build timed (PP-OCRv4
  // det: 45 more compiles, 14 s). Then every buffer gets a size that is not a power of two and room
  // for every texel view to have a range with a nonzero second byte (runtime/vulkan/buffer.h,
  // DescriptorSet), so one compile serves every binding. Off with --vk-disable-canonical-texel-views.
  bool canonical_texel_views = false;
  // Memory path switch (--vk-force-staging): device memory is never mapped, as on a discrete GPU.
  bool force_staging = false;
  // The features the device has that a switch turned off (has_feature names, in that order):
  // part of the device's identity for timings, as tactics build and run differently without them.
  std::vector<std::string> switched_off;

  // The queue family vkgraphy computes on and its timestamps.
  uint32_t compute_queue_family = 0;
  bool has_compute_queue = false;
  uint32_t timestamp_valid_bits = 0;  // 0: no timestamps on the compute queue
  float timestamp_period_ns = 0;      // nanoseconds per timestamp tick

  bool timestamps() const { return has_compute_queue && timestamp_valid_bits > 0 && timestamp_period_ns > 0; }
  bool fp16() const { return shader_float16 && storage_buffer_16bit; }
  // True when cooperative matrices can run m x n x k with fp16 inputs and fp16 or fp32 (acc32) accumulators.
  bool cooperative_matrix_shape(uint32_t m, uint32_t n, uint32_t k, bool acc32) const;
  // The named device properties tactics rely on (Tactic::device_feature):
  // "fp16", "subgroup-size-control", "cooperative-matrix", "cooperative-matrix-khr", "int64", "texel-buffers",
  // "nan-preserve";
  // throws Error on another name.
  bool has_feature(const std::string& name) const;
  MemoryPath memory_path() const;
  // vkgraphy's shaders need Vulkan 1.2 and a compute queue; empty when usable, else why not.
  std::string unsupported_reason() const;
  std::string api_version_string() const;  // "1.3.230"
};

// Multi-line description of a device (name, driver, type, features, limits, timestamps).
std::string format_device_info(const DeviceProfile& info);
std::ostream& operator<<(std::ostream& os, const DeviceProfile& info);

}  // namespace vkg
