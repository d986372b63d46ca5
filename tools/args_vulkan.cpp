#include "tools/args_vulkan.h"

#include <cstdlib>

namespace vkg::tools {

void VulkanArgs::add_to(CLI::App& app) {
  auto* g = "Vulkan";
  app.add_option("--device", device,
                 "Vulkan device to use: its index in `inspect device`, or a case-insensitive substring of its "
                 "name (default: VKGRAPHY_DEVICE, else a discrete GPU, else integrated, else a CPU driver)")
      ->group(g);
  app.add_flag("--vk-validation", validation,
               "Enable the Khronos validation layer; any validation message is an error "
               "(also VKGRAPHY_VK_VALIDATION=1)")
      ->group(g);
  app.add_flag("--vk-disable-fp16", disable_fp16,
               "Treat the device as having no fp16 support (to test fp32 fallbacks, or avoid a driver's fp16 bugs)")
      ->group(g);
  app.add_flag("--vk-disable-subgroup-size-control", disable_subgroup_size_control,
               "Treat the device as having no subgroup size control: pipelines take the driver's subgroup size")
      ->group(g);
  app.add_flag("--vk-disable-cooperative-matrix", disable_cooperative_matrix,
               "Treat the device as having no cooperative matrices: the tensor-core tactics (gemm.coopmat*) decline")
      ->group(g);
  app.add_flag("--vk-disable-cooperative-matrix-khr", disable_cooperative_matrix_khr,
               "Treat the device as having no VK_KHR_cooperative_matrix: the tensor-core tactics use "
               "VK_NV_cooperative_matrix where the device has it, else decline")
      ->group(g);
  app.add_flag("--vk-disable-int64", disable_int64,
               "Treat the device as having no 64-bit integers: the wide-load tactics (gemm.block*_wide_a, "
               "conv.*_wide_a) decline, and fp32 layers keep the storage-buffer builds of the shaders that store "
               "eight values at a time")
      ->group(g);
  app.add_flag("--vk-disable-subgroup-shuffle", disable_subgroup_shuffle,
               "Treat the device as having no subgroup shuffles: the block GEMMs that share A's rows through them "
               "(*_shuffle_a) decline")
      ->group(g);
  app.add_flag("--vk-disable-texel-buffers", disable_texel_buffers,
               "Treat the device as having no texel buffers: shaders read every tensor through storage buffers "
               "(the inputs of the block GEMMs, elementwise binary ops, row-tile convolutions, Winograd transforms and "
               "global pooling otherwise go through uniform texel buffers)")
      ->group(g);
  app.add_flag("--vk-disable-nan-preserve", disable_nan_preserve,
               "Treat the device as unable to preserve NaN and infinity: pipelines leave the driver free to assume "
               "finite values, and a NaN may vanish in a Relu or a max (by default every pipeline declares "
               "SignedZeroInfNanPreserve where the device supports it)")
      ->group(g);
  app.add_flag("--vk-disable-host-specialization", disable_host_specialization,
               "Give the driver each shader as written with its specialization constants, also on a CPU driver "
               "(lavapipe), where vkgraphy otherwise folds the constants into the SPIR-V first and the driver "
               "creates pipelines several times faster")
      ->group(g);
  app.add_flag("--vk-disable-canonical-texel-views", disable_canonical_texel_views,
               "Bind texel buffers as they are, also on lavapipe, where vkgraphy otherwise gives every buffer and "
               "texel view sizes of one class, so that the driver compiles a pipeline once for every binding "
               "(without it an engine's first run compiles again what its build compiled)")
      ->group(g);
  app.add_flag("--vk-force-staging", force_staging,
               "Keep device memory unmapped and move weights, inputs and outputs through staging buffers, as on a "
               "discrete GPU (also VKGRAPHY_VK_FORCE_STAGING=1)")
      ->group(g);
}

vk::DeviceOptions VulkanArgs::options() const {
  vk::DeviceOptions options;
  // A side-by-side debug job's commands get their device this way (debug/side_by_side.h).
  const char* env_device = std::getenv("VKGRAPHY_DEVICE");
  options.device = device.empty() && env_device ? env_device : device;
  options.validation = validation || vk::validation_from_env();
  options.disable_fp16 = disable_fp16;
  options.disable_subgroup_size_control = disable_subgroup_size_control;
  options.disable_cooperative_matrix = disable_cooperative_matrix;
  options.disable_cooperative_matrix_khr = disable_cooperative_matrix_khr;
  options.disable_int64 = disable_int64;
  options.disable_subgroup_shuffle = disable_subgroup_shuffle;
  options.disable_texel_buffers = disable_texel_buffers;
  options.disable_nan_preserve = disable_nan_preserve;
  options.disable_host_specialization = disable_host_specialization;
  options.disable_canonical_texel_views = disable_canonical_texel_views;
  options.force_staging = force_staging || vk::force_staging_from_env();
  return options;
}

VulkanArgs& vulkan_args() {
  static VulkanArgs args;
  return args;
}

vk::DeviceOptions vulkan_device_options() { return vulkan_args().options(); }

}  // namespace vkg::tools
