#include "runtime/vulkan/instance.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <strings.h>

#include "runtime/core/logger.h"
#include "runtime/vulkan/cooperative_matrix.h"
#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// Mesa's on-disk shader cache is on unless MESA_SHADER_CACHE_DISABLE (or its older name
// MESA_GLSL_CACHE_DISABLE) says true, as Mesa reads them.
bool mesa_shader_cache_on() {
  for (const char* name : {"MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DISABLE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && (!std::strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"))) return false;
  }
  return true;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const VkLayerProperties& l : layers) {
    if (std::strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(PFN_vkDebugUtilsMessengerCallbackEXT callback, void* user) {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = callback;
  info.pUserData = user;
  return info;
}

DeviceType device_type(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceType::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceType::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceType::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceType::Cpu;
    case VK_PHYSICAL_DEVICE_TYPE_OTHER: return DeviceType::Other;
    case VK_PHYSICAL_DEVICE_TYPE_MAX_ENUM: return DeviceType::Other;
  }
  return DeviceType::Other;
}

std::string hex_uuid(const uint8_t* bytes, size_t n) {
  std::string out;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

// Copies the compute limits vkgraphy plans dispatches and bindings against.
void read_limits(const VkPhysicalDeviceLimits& l, DeviceInfo& info) {
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
  }
  info.max_workgroup_invocations = l.maxComputeWorkGroupInvocations;
  info.max_shared_memory_bytes = l.maxComputeSharedMemorySize;
  info.max_storage_buffer_range = l.maxStorageBufferRange;
  info.max_push_constants_bytes = l.maxPushConstantsSize;
  info.max_bound_descriptor_sets = l.maxBoundDescriptorSets;
  info.max_storage_buffers_per_stage = l.maxPerStageDescriptorStorageBuffers;
  info.max_sampled_images_per_stage = l.maxPerStageDescriptorSampledImages;
  info.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  info.min_texel_buffer_offset_alignment = l.minTexelBufferOffsetAlignment;
  info.timestamp_period_ns = l.timestampPeriod;
  info.max_texel_buffer_elements = l.maxTexelBufferElements;
}

// The device's identity, driver, workarounds and limits, from one vkGetPhysicalDeviceProperties2 call
// (its 1.2 structs where `v12`); returns the subgroup size control properties that read_features needs.
VkPhysicalDeviceSubgroupSizeControlProperties read_properties(VkPhysicalDevice device, bool v12, bool size_control,
                                                              DeviceInfo& info) {
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceSubgroupSizeControlProperties size_props{};
  size_props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
  VkPhysicalDeviceFloatControlsProperties float_controls{};
  float_controls.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props.pNext = &subgroup;
  if (v12) subgroup.pNext = &driver, driver.pNext = &float_controls;
  if (v12 && size_control) float_controls.pNext = &size_props;
  vkGetPhysicalDeviceProperties2(device, &props);
  const VkPhysicalDeviceProperties& p = props.properties;

  info.name = p.deviceName;
  info.driver_name = v12 ? driver.driverName : "";
  info.driver_info = v12 ? driver.driverInfo : "";
  info.type = device_type(p.deviceType);
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  info.api_version = p.apiVersion;
  info.driver_version = p.driverVersion;
  info.uuid = hex_uuid(p.pipelineCacheUUID, VK_UUID_SIZE);
  info.subgroup_size = subgroup.subgroupSize;
  info.subgroup_shuffle = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0 &&
                          (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (v12 && driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) info.loop_iteration_limit = 65535;
  info.fp16_slower = info.type == DeviceType::Cpu;
  info.host_specialization = info.type == DeviceType::Cpu;
  info.compiles_in_one_thread = v12 && driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE && mesa_shader_cache_on();
  info.canonical_texel_views = v12 && driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
  info.nan_preserve = v12 && float_controls.shaderSignedZeroInfNanPreserveFloat32;
  info.nan_preserve_fp16 = info.nan_preserve && float_controls.shaderSignedZeroInfNanPreserveFloat16;
  read_limits(p.limits, info);
  return size_props;
}

// 16-bit storage, fp16 and int64 arithmetic, subgroup size control and cooperative matrices, from one
// vkGetPhysicalDeviceFeatures2 call (its 1.2 structs where `v12`).
void read_features(VkInstance instance, VkPhysicalDevice device, bool v12, bool size_control,
                   const VkPhysicalDeviceSubgroupSizeControlProperties& size_props, DeviceInfo& info) {
  VkPhysicalDeviceVulkan11Features f11{};
  f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDevice16BitStorageFeatures storage16{};
  storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDeviceSubgroupSizeControlFeatures size_features{};
  size_features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  CooperativeMatrixFeatures coopmat;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  if (v12) {
    features.pNext = &f11;
    f11.pNext = &f12;
    void** tail = &f12.pNext;
    if (size_control) *tail = &size_features, tail = &size_features.pNext;
    coopmat.chain_for_query(device, tail);
  } else {
    features.pNext = &storage16;
  }
  vkGetPhysicalDeviceFeatures2(device, &features);
  info.storage_buffer_16bit = v12 ? f11.storageBuffer16BitAccess : storage16.storageBuffer16BitAccess;
  info.shader_float16 = v12 && f12.shaderFloat16;
  info.shader_int64 = features.features.shaderInt64 == VK_TRUE;
  info.subgroup_size_control = v12 && size_control && size_features.subgroupSizeControl &&
                               size_features.computeFullSubgroups &&
                               (size_props.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (info.subgroup_size_control) {
    info.min_subgroup_size = size_props.minSubgroupSize;
    info.max_subgroup_size = size_props.maxSubgroupSize;
  }
  // The cooperative-matrix shaders declare the Vulkan memory model (GL_KHR_memory_scope_semantics, which
  // their loads take), so the device must enable that feature with the extension, and its device scope,
  // which the other shaders' atomics use once the memory model is on.
  if (v12) {
    const bool memory_model = f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope;
    read_cooperative_matrices(instance, device, coopmat, memory_model, info);
  }
}

// Texel buffers are on where the device allows any texel and both view formats (fp32 and fp16 vec4s)
// can back a uniform texel buffer.
void read_texel_buffers(VkPhysicalDevice device, DeviceInfo& info) {
  info.texel_buffers = info.max_texel_buffer_elements > 0;
  for (VkFormat format : {VK_FORMAT_R32G32B32A32_SFLOAT, VK_FORMAT_R16G16B16A16_SFLOAT}) {
    VkFormatProperties props{};
    vkGetPhysicalDeviceFormatProperties(device, format, &props);
    if ((props.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) == 0) info.texel_buffers = false;
  }
}

// The memory heaps, and whether the host can map (and cache) device-local memory.
void read_memory(VkPhysicalDevice device, DeviceInfo& info) {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  uint64_t largest_local = 0;
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    const bool local = (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    info.heaps.push_back({memory.memoryHeaps[i].size, local});
    if (local) largest_local = std::max<uint64_t>(largest_local, memory.memoryHeaps[i].size);
  }
  // A small host-visible window into device memory (the 256 MiB BAR without resizable BAR) does not count.
  const VkMemoryPropertyFlags mappable =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryType& type = memory.memoryTypes[i];
    if ((type.propertyFlags & mappable) != mappable || memory.memoryHeaps[type.heapIndex].size < largest_local)
      continue;
    info.device_local_host_visible = true;
    if (type.propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) info.device_local_host_cached = true;
  }
}

// The compute queue: the first family with compute, preferring one with timestamps.
void read_compute_queue(VkPhysicalDevice device, DeviceInfo& info) {
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
  for (uint32_t i = 0; i < family_count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    if (!info.has_compute_queue || (info.timestamp_valid_bits == 0 && families[i].timestampValidBits > 0)) {
      info.has_compute_queue = true;
      info.compute_queue_family = i;
      info.timestamp_valid_bits = families[i].timestampValidBits;
    }
  }
}

}  // namespace

bool has_device_extension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()) != VK_SUCCESS) return false;
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

DeviceInfo query_device_info(VkInstance instance, VkPhysicalDevice device, uint32_t index) {
  DeviceInfo info;
  info.index = index;

  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(device, &base);
  const bool v12 = base.apiVersion >= VK_API_VERSION_1_2;
  const bool size_control = base.apiVersion >= VK_API_VERSION_1_3 ||
                            has_device_extension(device, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  const VkPhysicalDeviceSubgroupSizeControlProperties size_props = read_properties(device, v12, size_control, info);
  read_features(instance, device, v12, size_control, size_props, info);
  read_texel_buffers(device, info);
  read_memory(device, info);
  read_compute_queue(device, info);
  return info;
}

Instance::Instance(bool validation) : validation_(validation) {
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation_) {
    VKG_CHECK(has_layer(kValidationLayer),
              "--vk-validation: the Khronos validation layer (" << kValidationLayer
                                                                << ") is not installed (Debian: vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "vkgraphy";
  app.pEngineName = "vkgraphy";
  app.apiVersion = VK_API_VERSION_1_3;  // the most vkgraphy uses (subgroup size control); 1.2 drivers still load
  // Chained into the create info, the messenger also sees instance creation and destruction.
  VkDebugUtilsMessengerCreateInfoEXT debug = messenger_info(&Instance::on_message, log_.get());
  // Synchronization validation (VKGRAPHY_VK_SYNC_VALIDATION=1): the layer also reports hazards between
  // dispatches that no barrier orders, which the executor's barrier placement (hazards.h) must not leave.
  const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  features.pNext = &debug;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = !validation_ ? nullptr : sync_validation_from_env() ? static_cast<const void*>(&features) : &debug;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = uint32_t(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  const VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED) {
    VKG_THROW("no Vulkan 1.2 driver found (" << vk_result_name(r)
                                             << "); install one, e.g. Mesa's lavapipe (Debian: mesa-vulkan-drivers)");
  }
  VKG_VK_CHECK(r, "creating the Vulkan instance");
  if (validation_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr || create(instance_, &debug, nullptr, &messenger_) != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      VKG_THROW("--vk-validation: cannot create the validation debug messenger");
    }
    set_object_name_ = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
        vkGetInstanceProcAddr(instance_, "vkSetDebugUtilsObjectNameEXT"));
  }
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT types,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  const std::string text = data && data->pMessage ? data->pMessage : "(no message)";
  // Info messages come from the loader and the layer's own start-up; they are not findings.
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    VKG_EXTRA_VERBOSE("Vulkan: " << text);
    return VK_FALSE;
  }
  (void)types;
  VKG_ERROR("Vulkan validation: " << text);
  auto* log = static_cast<MessageLog*>(user);
  std::lock_guard<std::mutex> lock(log->mutex);
  log->messages.push_back(text);
  return VK_FALSE;
}

void Instance::name_object(VkDevice device, VkObjectType type, uint64_t handle, const std::string& name) const {
  if (set_object_name_ == nullptr || handle == 0) return;
  VkDebugUtilsObjectNameInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT;
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = name.c_str();
  (void)set_object_name_(device, &info);
}

std::vector<std::string> Instance::validation_messages() const {
  std::lock_guard<std::mutex> lock(log_->mutex);
  return log_->messages;
}

void Instance::clear_validation_messages() {
  std::lock_guard<std::mutex> lock(log_->mutex);
  log_->messages.clear();
}

void Instance::check_validation(const std::string& where) {
  std::vector<std::string> messages;
  {
    std::lock_guard<std::mutex> lock(log_->mutex);
    messages.swap(log_->messages);
  }
  if (messages.empty()) return;
  VKG_THROW("Vulkan validation layer: " << messages.size() << " message(s) during " << where
                                        << "; the first: " << messages.front());
}

std::vector<PhysicalDevice> Instance::physical_devices() const {
  uint32_t count = 0;
  VKG_VK_CHECK(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "listing Vulkan devices");
  std::vector<VkPhysicalDevice> handles(count);
  VKG_VK_CHECK(vkEnumeratePhysicalDevices(instance_, &count, handles.data()), "listing Vulkan devices");
  VKG_CHECK(count > 0, "no Vulkan device found: the installed Vulkan drivers report none"
                       " (is VK_DRIVER_FILES pointing at a driver for this machine?)");
  std::vector<PhysicalDevice> devices;
  for (uint32_t i = 0; i < count; ++i) devices.push_back({handles[i], query_device_info(instance_, handles[i], i)});
  return devices;
}

PhysicalDevice Instance::select(const std::string& selector) const {
  const std::vector<PhysicalDevice> devices = physical_devices();
  std::vector<DeviceInfo> infos;
  for (const PhysicalDevice& d : devices) infos.push_back(d.info);
  return devices[select_device(infos, selector)];
}

std::vector<DeviceInfo> list_devices(const DeviceOptions& options) {
  Instance instance(options.validation);
  std::vector<DeviceInfo> infos;
  for (const PhysicalDevice& d : instance.physical_devices()) apply_switches(infos.emplace_back(d.info), options);
  instance.check_validation("listing Vulkan devices");
  return infos;
}

bool vulkan_available(std::string* why) {
  try {
    Instance instance(false);
    instance.physical_devices();
    return true;
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

}  // namespace vkg::vk
