#include "runtime/vulkan/device_info.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "runtime/core/error.h"

namespace vkg::vk {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "[0] llvmpipe (...) (cpu)" lines for error messages.
std::string device_list_text(const std::vector<DeviceInfo>& devices) {
  std::ostringstream os;
  for (size_t i = 0; i < devices.size(); ++i) {
    os << (i ? "; " : "") << "[" << devices[i].index << "] " << devices[i].name << " ("
       << device_type_name(devices[i].type) << ")";
  }
  return os.str();
}

bool env_switch(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return false;
  const std::string v = lower(value);
  if (v.empty() || v == "0" || v == "false" || v == "off" || v == "no") return false;
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  VKG_THROW(name << "='" << value << "': expected 1/0, true/false, on/off or yes/no");
}

}  // namespace

int default_preference_rank(DeviceType t) {
  switch (t) {
    case DeviceType::Discrete: return 0;
    case DeviceType::Integrated: return 1;
    case DeviceType::Virtual: return 2;
    case DeviceType::Cpu: return 3;
    case DeviceType::Other: return 4;
  }
  return 4;
}

namespace {

// The named features' switches, in switched_off's order.
std::array<std::pair<const char*, bool DeviceOptions::*>, 8> feature_switches() {
  return {{{"fp16", &DeviceOptions::disable_fp16},
           {"subgroup-size-control", &DeviceOptions::disable_subgroup_size_control},
           {"cooperative-matrix", &DeviceOptions::disable_cooperative_matrix},
           {"cooperative-matrix-khr", &DeviceOptions::disable_cooperative_matrix_khr},
           {"int64", &DeviceOptions::disable_int64},
           {"subgroup-shuffle", &DeviceOptions::disable_subgroup_shuffle},
           {"texel-buffers", &DeviceOptions::disable_texel_buffers},
           {"nan-preserve", &DeviceOptions::disable_nan_preserve}}};
}

}  // namespace

DeviceOptions switches_of(const DeviceInfo& info) {
  DeviceOptions options;
  options.device = std::to_string(info.index);
  for (const auto& [name, off] : feature_switches())
    if (std::find(info.switched_off.begin(), info.switched_off.end(), name) != info.switched_off.end())
      options.*off = true;
  // Host specialization is the CPU drivers' default (instance.cpp): off there only by its switch.
  options.disable_host_specialization = info.type == DeviceType::Cpu && !info.host_specialization;
  options.disable_canonical_texel_views = info.driver_name == "llvmpipe" && !info.canonical_texel_views;
  options.force_staging = info.force_staging;
  return options;
}

std::vector<std::string> switch_words(const DeviceOptions& options) {
  std::vector<std::string> words;
  for (const auto& [name, off] : feature_switches())
    if (options.*off) words.push_back(name);
  if (options.disable_host_specialization) words.push_back("host-specialization");
  if (options.disable_canonical_texel_views) words.push_back("canonical-texel-views");
  if (options.force_staging) words.push_back("force-staging");
  return words;
}

DeviceOptions options_from_switch_words(const std::vector<std::string>& words) {
  DeviceOptions options;
  const auto switches = feature_switches();
  for (const std::string& w : words) {
    const auto feature = std::find_if(switches.begin(), switches.end(), [&](const auto& s) { return w == s.first; });
    if (feature != switches.end())
      options.*(feature->second) = true;
    else if (w == "host-specialization")
      options.disable_host_specialization = true;
    else if (w == "canonical-texel-views")
      options.disable_canonical_texel_views = true;
    else if (w == "force-staging")
      options.force_staging = true;
    else
      VKG_THROW("unknown device switch '" << w << "'");
  }
  return options;
}

void apply_switches(DeviceInfo& info, const DeviceOptions& options) {
  info.switched_off.clear();
  for (const auto& [name, off] : feature_switches()) {
    if (options.*off && info.has_feature(name)) info.switched_off.push_back(name);
  }
  if (options.disable_fp16) info.shader_float16 = info.storage_buffer_16bit = false;
  if (options.disable_subgroup_size_control) info.subgroup_size_control = false;
  if (options.disable_int64) info.shader_int64 = false;
  if (options.disable_subgroup_shuffle) info.subgroup_shuffle = false;
  if (options.disable_texel_buffers) info.texel_buffers = false;
  if (options.disable_nan_preserve) info.nan_preserve = info.nan_preserve_fp16 = false;
  if (options.disable_host_specialization) info.host_specialization = false;
  if (options.disable_canonical_texel_views) info.canonical_texel_views = false;
  if (options.disable_cooperative_matrix_khr && info.cooperative_matrix_khr) {
    // VK_NV_cooperative_matrix where the device has it too.
    info.cooperative_matrix_khr = false;
    info.cooperative_matrix_shapes = info.cooperative_matrix_nv_shapes;
    info.cooperative_matrix = !info.cooperative_matrix_shapes.empty();
  }
  if (options.disable_cooperative_matrix || !info.fp16()) {
    info.cooperative_matrix = info.cooperative_matrix_khr = info.cooperative_matrix_emulated = false;
    info.cooperative_matrix_shapes.clear();
  }
  info.force_staging = options.force_staging;
}

bool validation_from_env() { return env_switch("VKGRAPHY_VK_VALIDATION"); }
bool force_staging_from_env() { return env_switch("VKGRAPHY_VK_FORCE_STAGING"); }
bool sync_validation_from_env() { return env_switch("VKGRAPHY_VK_SYNC_VALIDATION"); }
bool emulated_cooperative_matrix_from_env() { return env_switch("VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX"); }

size_t select_device(const std::vector<DeviceInfo>& devices, const std::string& selector) {
  VKG_CHECK(!devices.empty(), "no Vulkan device found");
  if (selector.empty()) {
    size_t best = devices.size();
    for (size_t i = 0; i < devices.size(); ++i) {
      if (!devices[i].unsupported_reason().empty()) continue;
      if (best == devices.size() ||
          default_preference_rank(devices[i].type) < default_preference_rank(devices[best].type))
        best = i;
    }
    VKG_CHECK(best < devices.size(), "no usable Vulkan device: " << devices[0].name << ": "
                                         << devices[0].unsupported_reason()
                                         << (devices.size() > 1 ? " (and the others likewise)" : ""));
    return best;
  }
  size_t chosen = devices.size();
  if (all_digits(selector)) {
    const unsigned long index = selector.size() > 9 ? ~0ul : std::stoul(selector);
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].index == index) chosen = i;
    }
    VKG_CHECK(chosen < devices.size(), "--device " << selector << ": no Vulkan device has index " << selector
                                                   << " (devices: " << device_list_text(devices) << ")");
  } else {
    const std::string needle = lower(selector);
    for (size_t i = 0; i < devices.size() && chosen == devices.size(); ++i) {
      if (lower(devices[i].name).find(needle) != std::string::npos) chosen = i;
    }
    VKG_CHECK(chosen < devices.size(), "--device '" << selector << "' matches no Vulkan device name (devices: "
                                                    << device_list_text(devices) << ")");
  }
  const std::string why = devices[chosen].unsupported_reason();
  VKG_CHECK(why.empty(), "--device " << selector << " selects '" << devices[chosen].name
                                     << "', which vkgraphy cannot use: " << why);
  return chosen;
}

}  // namespace vkg::vk
