// `vkgraphy inspect device`: lists the Vulkan devices with their driver,
// type, fp16 support, subgroup size, limits and timestamps, and marks the one
// `--device` (or the default preference) selects.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/core/logger.h"
#include "runtime/vulkan/device_info.h"
#include "tools/args_vulkan.h"

namespace vkg::tools {

namespace {

void inspect_device() {
  const vk::DeviceOptions options = vulkan_device_options();
  const std::vector<vk::DeviceInfo> devices = vk::list_devices(options);
  const size_t selected = vk::select_device(devices, options.device);
  std::string out = "==== Vulkan devices (" + std::to_string(devices.size()) + ") ====\n";
  for (size_t i = 0; i < devices.size(); ++i) {
    out += "\n" + vk::format_device_info(devices[i]);
    if (i == selected) out += "    (selected" + std::string(options.device.empty() ? " by default" : " by --device") + ")\n";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  out += options.validation ? "\n\nKhronos validation layer: on (any validation message is an error)"
                            : "\n\nKhronos validation layer: off (--vk-validation or VKGRAPHY_VK_VALIDATION=1 turns it on)";
  VKG_INFO(out);
}

}  // namespace

// Adds `device` under `inspect`; to be called from add_inspect_tool().
void add_inspect_device(CLI::App& inspect) {
  CLI::App* device = inspect.add_subcommand("device", "List the Vulkan devices and show which one --device selects");
  device->fallthrough();
  device->callback([] { inspect_device(); });
}

}  // namespace vkg::tools
