// Argument group: the global Vulkan options every tool takes: `--device
// INDEX|NAME-SUBSTRING`, `--vk-validation` (also VKGRAPHY_VK_VALIDATION=1),
// `--vk-disable-fp16`, `--vk-disable-subgroup-size-control`,
// `--vk-disable-cooperative-matrix`, `--vk-disable-int64`, `--vk-disable-subgroup-shuffle`,
// `--vk-disable-texel-buffers`,
// `--vk-disable-nan-preserve`, and `--vk-force-staging` (also
// VKGRAPHY_VK_FORCE_STAGING=1).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/vulkan/device_info.h"

namespace vkg::tools {

struct VulkanArgs {
  std::string device;       // "" = default preference (discrete, integrated, virtual, cpu)
  bool validation = false;  // --vk-validation
  bool disable_fp16 = false;  // --vk-disable-fp16
  bool disable_subgroup_size_control = false;  // --vk-disable-subgroup-size-control
  bool disable_cooperative_matrix = false;     // --vk-disable-cooperative-matrix
  bool disable_cooperative_matrix_khr = false;  // --vk-disable-cooperative-matrix-khr
  bool disable_int64 = false;                  // --vk-disable-int64
  bool disable_subgroup_shuffle = false;       // --vk-disable-subgroup-shuffle
  bool disable_texel_buffers = false;          // --vk-disable-texel-buffers
  bool disable_nan_preserve = false;           // --vk-disable-nan-preserve
  bool disable_host_specialization = false;    // --vk-disable-host-specialization
  bool disable_canonical_texel_views = false;  // --vk-disable-canonical-texel-views
  bool force_staging = false;  // --vk-force-staging

  void add_to(CLI::App& app);
  // The selection options: --device, and validation from the flag or the
  // environment (throws Error on a malformed VKGRAPHY_VK_VALIDATION).
  vk::DeviceOptions options() const;
};

// The process-wide instance main() adds to the root app.
VulkanArgs& vulkan_args();
// vulkan_args().options(): what every tool uses to open Vulkan.
vk::DeviceOptions vulkan_device_options();

}  // namespace vkg::tools
