// Storage buffers with their own memory, placed by what they are for and by
// the device's memory path (DeviceInfo::memory_path(), DESIGN.md "Memory and
// execution"): device-local always, host-mapped only where that path allows.
// Single owner: movable, not copyable.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/vulkan/device.h"

namespace vkg::vk {

// What a buffer holds; decides its memory type and whether the host maps it.
enum class BufferUse : uint8_t {
  Device,     // activations, scratch: device-local; mapped only on the unified path
  HostWrite,  // weights, inputs: device-local; mapped on the unified and resizable-BAR paths
  HostRead,   // outputs (and tensors both written and read by the host): mapped only on the unified path
  Staging,    // host memory for transfers: host-visible and coherent, host-cached where the device has it
};

// The room a buffer keeps after its bytes where the device's profile asks for canonical_texel_views.
inline constexpr size_t kTexelViewSlack = 256;
// The bytes a buffer of `bytes` allocates on a device of this profile (Buffer::allocated_size).
size_t allocation_bytes(size_t bytes, const DeviceInfo& info);

class Buffer {
 public:
  // A buffer of `bytes` (> 0, allocated rounded up to 16) usable as a storage buffer, a uniform
  // texel buffer and a transfer source/destination.
  Buffer(Device& device, size_t bytes, BufferUse use = BufferUse::Device);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  size_t size() const { return bytes_; }
  // What the device holds: whole vec4 texels of fp32, and where the device's profile asks for
  // canonical_texel_views, room for a texel view 256 bytes longer than the buffer, and a size that
  // is not a power of two (DeviceProfile::canonical_texel_views).
  size_t allocated_size() const { return allocated_; }
  // True when the host reads and writes the buffer in place.
  bool host_mapped() const { return mapped_ != nullptr; }

  // Copy host bytes in or out at `offset`; Error if the range is outside the
  // buffer. In place when mapped, otherwise through a temporary staging buffer
  // and a copy on the device's queue (synchronous: for tests and one-off
  // transfers; StagedUpload batches many). Call download only after the work
  // that writes the buffer has finished.
  void upload(const void* data, size_t bytes, size_t offset = 0);
  void download(void* data, size_t bytes, size_t offset = 0) const;

  template <class T> void upload(std::span<const T> values, size_t offset = 0) {
    upload(values.data(), values.size_bytes(), offset);
  }
  template <class T> void download(std::span<T> values, size_t offset = 0) const {
    download(values.data(), values.size_bytes(), offset);
  }

  // The mapped bytes (Error when the buffer is not host-mapped). After writing,
  // call flush(); before reading what the device wrote, call invalidate().
  std::byte* mapped();
  const std::byte* mapped() const;
  void flush() const;
  void invalidate() const;

 private:
  void release();
  void check_range(size_t bytes, size_t offset, const char* what) const;

  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  size_t bytes_ = 0;
  size_t allocated_ = 0;
  bool coherent_ = true;
};

// Uploads many buffers at once: in place where a buffer is mapped, otherwise
// gathered into staging buffers of up to kChunkBytes and copied in one
// submission per chunk. The data must stay alive until finish() returns.
class StagedUpload {
 public:
  static constexpr size_t kChunkBytes = size_t(64) << 20;

  explicit StagedUpload(Device& device) : device_(device) {}
  void add(Buffer& dst, const void* data, size_t bytes);
  // Performs the pending copies and waits for them; throws Error on a device failure.
  void finish();
  // Bytes that went through staging so far.
  uint64_t staged_bytes() const { return staged_bytes_; }

 private:
  struct Pending {
    Buffer* dst;
    const void* data;
    size_t bytes;
  };
  Device& device_;
  std::vector<Pending> pending_;
  uint64_t staged_bytes_ = 0;
};

}  // namespace vkg::vk
