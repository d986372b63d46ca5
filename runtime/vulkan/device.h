// The logical Vulkan device vkgraphy computes on: one compute queue, a command
// pool for it, and fp16 arithmetic / 16-bit storage enabled when the device has them.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>

#include "runtime/vulkan/instance.h"

namespace vkg::vk {

class PipelinePool;

class Device {
 public:
  // `instance` must outlive the device. Throws Error if the device is unsupported
  // (DeviceInfo::unsupported_reason()) or cannot be created.
  Device(Instance& instance, const PhysicalDevice& physical);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Instance& instance() const { return instance_; }
  const DeviceInfo& info() const { return physical_.info; }
  VkPhysicalDevice physical_handle() const { return physical_.handle; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return physical_.info.compute_queue_family; }
  VkCommandPool command_pool() const { return command_pool_; }

  // The device's compute pipelines, shared by every engine on it (pipeline_pool.h).
  PipelinePool& pipelines() const { return *pipelines_; }

  // Features enabled at creation (those the device supports).
  bool fp16_arithmetic() const { return physical_.info.shader_float16; }
  bool storage_16bit() const { return physical_.info.storage_buffer_16bit; }

  // A memory type index allowed by `type_bits` with all `required` properties,
  // preferring one that also has `preferred`. Throws Error if none fits.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;
  bool memory_type_coherent(uint32_t type) const;

  // Submitted work did not finish within its timeout: no new work is accepted.
  void mark_timed_out() { timed_out_ = true; }
  bool timed_out() const { return timed_out_; }
  // Work did not finish even after a grace period: from then on the device is
  // not waited on or destroyed (that could hang); its handles are leaked.
  void mark_hung() { timed_out_ = hung_ = true; }
  bool hung() const { return hung_; }

 private:
  Instance& instance_;
  PhysicalDevice physical_;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  bool timed_out_ = false;
  bool hung_ = false;
  std::unique_ptr<PipelinePool> pipelines_;  // destroyed first: its pipelines need the device
};

}  // namespace vkg::vk
