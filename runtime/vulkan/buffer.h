// A storage buffer with its own memory, host-visible and persistently mapped
// (device-local staging comes later). Single owner: movable, not copyable.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <span>

#include "runtime/vulkan/device.h"

namespace vkg::vk {

class Buffer {
 public:
  // A buffer of `bytes` (> 0) usable as a storage buffer and a transfer source/destination.
  Buffer(Device& device, size_t bytes);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  size_t size() const { return bytes_; }

  // Copy host bytes in or out at `offset`; Error if the range is outside the buffer.
  // Call download only after the work that writes the buffer has finished.
  void upload(const void* data, size_t bytes, size_t offset = 0);
  void download(void* data, size_t bytes, size_t offset = 0) const;

  template <class T> void upload(std::span<const T> values, size_t offset = 0) {
    upload(values.data(), values.size_bytes(), offset);
  }
  template <class T> void download(std::span<T> values, size_t offset = 0) const {
    download(values.data(), values.size_bytes(), offset);
  }

 private:
  void release();
  void check_range(size_t bytes, size_t offset, const char* what) const;

  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  size_t bytes_ = 0;
  bool coherent_ = true;
};

}  // namespace vkg::vk
