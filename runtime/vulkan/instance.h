// The Vulkan instance: loader entry, optional Khronos validation layer, and a
// debug messenger that records every validation message so callers can turn
// them into errors (every test runs with validation on and zero messages).
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/vulkan/device_info.h"

namespace vkg::vk {

// A physical device handle with what vkgraphy knows about it.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  DeviceInfo info;
};

// Queries everything DeviceInfo holds; `index` is the device's place in the instance's list.
DeviceInfo query_device_info(VkInstance instance, VkPhysicalDevice device, uint32_t index);

// True when the device lists the extension `name`.
bool has_device_extension(VkPhysicalDevice device, const char* name);

class Instance {
 public:
  // Creates a Vulkan 1.2 instance. With `validation`, enables VK_LAYER_KHRONOS_validation
  // and VK_EXT_debug_utils (Error if the layer is not installed). Throws Error when no
  // Vulkan driver is installed.
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }

  // Every device the loader reports, in its order. Throws Error if there is none.
  std::vector<PhysicalDevice> physical_devices() const;
  // The device `selector` names (DeviceOptions::device, see select_device()).
  PhysicalDevice select(const std::string& selector) const;

  // Validation messages (warnings and errors of every type) recorded so far, oldest first.
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages();
  // Throws Error "validation layer: N message(s) during <where>: ..." if any was recorded, then clears them.
  void check_validation(const std::string& where);
  // With validation on, names `handle` (of `type`, made on `device`) so that the layer's messages
  // about it say which pipeline or shader they concern; nothing without validation.
  void name_object(VkDevice device, VkObjectType type, uint64_t handle, const std::string& name) const;

 private:
  struct MessageLog {
    std::mutex mutex;
    std::vector<std::string> messages;
  };
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  bool validation_ = false;
  std::unique_ptr<MessageLog> log_ = std::make_unique<MessageLog>();
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  PFN_vkSetDebugUtilsObjectNameEXT set_object_name_ = nullptr;
};

}  // namespace vkg::vk
