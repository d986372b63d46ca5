// How vkgraphy lists the Vulkan devices, fills each one's plain-data profile
// (runtime/engine/device_profile.h) and picks one (`--device`), with the
// switches that turn a feature off. Free of Vulkan headers, so tools can list
// and select devices without including Vulkan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/engine/device_profile.h"

namespace vkg::vk {

// The device profile, by the names the Vulkan layer and the tools use.
using DeviceInfo = vkg::DeviceProfile;
using vkg::CooperativeMatrixShape;
using vkg::device_type_name;
using vkg::DeviceType;
using vkg::format_device_info;
using vkg::memory_path_name;
using vkg::MemoryHeap;
using vkg::MemoryPath;

// How a tool opens Vulkan: the `--device` selector and `--vk-validation`.
struct DeviceOptions {
  // "" picks the default; all digits: the device at that index; otherwise a
  // case-insensitive substring of the device name (the first match wins).
  std::string device;
  // Enables the Khronos validation layer; every message it reports is an error.
  bool validation = false;
  // Treats the device as having no fp16 support (shaderFloat16, 16-bit storage),
  // whatever it reports: to test and to work around a driver's fp16 bugs.
  bool disable_fp16 = false;
  // Keeps device memory unmapped and moves every transfer through staging
  // buffers, as on a discrete GPU without resizable BAR: to test that path on
  // unified-memory devices (lavapipe) and to work around a driver's mapping bugs.
  bool force_staging = false;
  // Treat the device as having no subgroup size control: pipelines take the
  // driver's subgroup size (to compare, or avoid a driver's bugs).
  bool disable_subgroup_size_control = false;
  // Treat the device as having no cooperative matrices: the tensor-core
  // tactics decline (to compare, or avoid a driver's bugs).
  bool disable_cooperative_matrix = false;
  // Treat the device as having no VK_KHR_cooperative_matrix: the tensor-core tactics use
  // VK_NV_cooperative_matrix where the device has it, else decline (to compare the two, or avoid a driver's bugs).
  bool disable_cooperative_matrix_khr = false;
  // Treat the device as having no 64-bit integers: the wide-load tactics
  // (gemm.block*_wide_a, conv.*_wide_a) decline (to compare, or avoid a driver's bugs).
  bool disable_int64 = false;
  // Treat the device as having no subgroup shuffles: the tactics that share A's rows through them
  // (*_shuffle_a) decline (to compare, or avoid a driver's bugs).
  bool disable_subgroup_shuffle = false;
  // Treat the device as having no texel buffers: shaders read every tensor
  // through storage buffers (to compare, or avoid a driver's bugs).
  bool disable_texel_buffers = false;
  // Treat the device as unable to preserve NaN and infinity: pipelines leave the driver free to
  // assume finite values (to compare speed, or avoid a driver's bugs); NaN may then vanish.
  bool disable_nan_preserve = false;
  // Give the driver every shader with its specialization info, as written, even where the
  // profile specializes on the host (to compare, or avoid a bug of the host's specialization).
  bool disable_host_specialization = false;
  // Bind texel buffers as they are, even where the profile gives them one class
  // (DeviceProfile::canonical_texel_views): to compare, or avoid a bug of that workaround.
  bool disable_canonical_texel_views = false;
};

// Applies the feature switches of `options` (disable_fp16, force_staging,
// disable_subgroup_size_control, disable_cooperative_matrix, disable_cooperative_matrix_khr, disable_int64,
// disable_subgroup_shuffle, disable_texel_buffers,
// disable_nan_preserve, disable_host_specialization, disable_canonical_texel_views)
// to a device's info.
void apply_switches(DeviceInfo& info, const DeviceOptions& options);
// The feature switches that made `info` from its device's own profile (its switched_off features,
// host specialization and the memory path), for another process to open the device as this one did
// (runtime/vulkan/compile_workers.h). `device` is the device's index; validation is left off.
DeviceOptions switches_of(const DeviceInfo& info);
// The switches `options` turns on, as words (a feature's name for its disable_ switch,
// "host-specialization", "canonical-texel-views", "force-staging"), and the options such words give (Error on an unknown one).
std::vector<std::string> switch_words(const DeviceOptions& options);
DeviceOptions options_from_switch_words(const std::vector<std::string>& words);

// True when VKGRAPHY_VK_VALIDATION asks for validation ("1", "true", "on", "yes");
// unset, empty, "0", "false", "off", "no" mean off; anything else is an Error.
bool validation_from_env();
// The same reading of VKGRAPHY_VK_FORCE_STAGING (DeviceOptions::force_staging).
bool force_staging_from_env();
// The same reading of VKGRAPHY_VK_SYNC_VALIDATION: with validation on, the layer's synchronization
// validation too (hazards between dispatches that no barrier orders; slower).
bool sync_validation_from_env();
// The same reading of VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX: a device without cooperative
// matrices gets emulated ones (DeviceProfile::cooperative_matrix_emulated), so that the tests run
// the tensor-core tactics' shaders on lavapipe. For tests: slow, never a user's choice.
bool emulated_cooperative_matrix_from_env();

// Rank of a device type in the default choice: lower is preferred
// (discrete, then integrated, then virtual, then CPU, then other).
int default_preference_rank(DeviceType t);

// Picks a device from `devices` by `selector` (see DeviceOptions::device) and
// returns its position in `devices`. The default skips unsupported devices and
// prefers by default_preference_rank, then by index. Throws vkg::Error when
// nothing matches, the match is unsupported, or `devices` is empty.
size_t select_device(const std::vector<DeviceInfo>& devices, const std::string& selector);

// Lists the Vulkan devices, with the switches of `options` applied (creates and destroys an instance; with
// options.validation, validation messages during the listing are an Error).
// Throws vkg::Error when no Vulkan driver or device is present.
std::vector<DeviceInfo> list_devices(const DeviceOptions& options);

// False when no Vulkan driver is installed or none reports a device; `why` gets the reason.
bool vulkan_available(std::string* why = nullptr);

}  // namespace vkg::vk
