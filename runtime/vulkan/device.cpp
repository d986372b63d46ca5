#include "runtime/vulkan/device.h"

#include <vector>

#include "runtime/core/logger.h"
#include "runtime/vulkan/cooperative_matrix.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

Device::Device(Instance& instance, const PhysicalDevice& physical) : instance_(instance), physical_(physical) {
  const std::string why = physical_.info.unsupported_reason();
  VKG_CHECK(why.empty(), "Vulkan device '" << physical_.info.name << "' cannot be used: " << why);
  vkGetPhysicalDeviceMemoryProperties(physical_.handle, &memory_);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = queue_family();
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  VkPhysicalDeviceVulkan11Features f11{};
  f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f11.storageBuffer16BitAccess = physical_.info.storage_buffer_16bit ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.shaderFloat16 = physical_.info.shader_float16 ? VK_TRUE : VK_FALSE;
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderInt64 = physical_.info.shader_int64 ? VK_TRUE : VK_FALSE;
  features.pNext = &f11;
  // The optional features, when the device has them and no switch turned them off.
  std::vector<const char*> extensions;
  void** tail = &f12.pNext;
  VkPhysicalDeviceSubgroupSizeControlFeatures size_control{};
  size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  if (physical_.info.subgroup_size_control) {
    size_control.subgroupSizeControl = size_control.computeFullSubgroups = VK_TRUE;
    *tail = &size_control, tail = &size_control.pNext;
    if (physical_.info.api_version < VK_API_VERSION_1_3) extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  CooperativeMatrixFeatures coopmat;
  if (physical_.info.cooperative_matrix) {
    // The cooperative-matrix shaders declare the memory model (query_device_info checked both features).
    // With it enabled, every shader's Device-scope atomics (pool/unpool's atomicMax) need the device scope too.
    f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = VK_TRUE;
    enable_cooperative_matrices(physical_.info, coopmat, tail, extensions);
  }

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VKG_VK_CHECK(vkCreateDevice(physical_.handle, &info, nullptr, &device_),
               "creating a Vulkan device on '" << physical_.info.name << "'");
  vkGetDeviceQueue(device_, queue_family(), 0, &queue_);

  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = queue_family();
  const VkResult r = vkCreateCommandPool(device_, &pool, nullptr, &command_pool_);
  if (r != VK_SUCCESS) {
    vkDestroyDevice(device_, nullptr);
    VKG_THROW("creating a command pool on '" << physical_.info.name << "': " << vk_result_name(r));
  }
  pipelines_ = std::make_unique<PipelinePool>(*this);
  VKG_VERBOSE("Device opened: " << physical_.info.name << " (" << device_type_name(physical_.info.type)
                                << ", queue family " << queue_family() << ", fp16 arithmetic "
                                << (fp16_arithmetic() ? "on" : "off") << ", 16-bit storage "
                                << (storage_16bit() ? "on" : "off") << ")");
}

Device::~Device() {
  pipelines_.reset();
  if (hung_) {
    VKG_WARNING("Vulkan device '" << physical_.info.name << "' has work that never finished; not destroying it");
    return;
  }
  vkDeviceWaitIdle(device_);
  vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

uint32_t Device::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  VKG_CHECK(fallback != UINT32_MAX, "Vulkan device '" << physical_.info.name
                                                      << "' has no memory type with properties 0x" << std::hex
                                                      << required << " for this resource");
  return fallback;
}

bool Device::memory_type_coherent(uint32_t type) const {
  return (memory_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
}

}  // namespace vkg::vk
