#include "runtime/vulkan/buffer.h"

#include <cstring>
#include <utility>

#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

Buffer::Buffer(Device& device, size_t bytes) : device_(&device), bytes_(bytes) {
  VKG_CHECK(bytes > 0, "cannot create an empty Vulkan buffer");
  VkDevice dev = device.handle();
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VKG_VK_CHECK(vkCreateBuffer(dev, &info, nullptr, &buffer_), "creating a " << bytes << "-byte Vulkan buffer");
  try {
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(dev, buffer_, &req);
    const uint32_t type = device.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                             VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    coherent_ = device.memory_type_coherent(type);
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    VKG_VK_CHECK(vkAllocateMemory(dev, &alloc, nullptr, &memory_), "allocating " << req.size << " bytes of Vulkan memory");
    VKG_VK_CHECK(vkBindBufferMemory(dev, buffer_, memory_, 0), "binding Vulkan buffer memory");
    VKG_VK_CHECK(vkMapMemory(dev, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "mapping Vulkan buffer memory");
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(other.memory_, VK_NULL_HANDLE)),
      mapped_(std::exchange(other.mapped_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      coherent_(other.coherent_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    mapped_ = std::exchange(other.mapped_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    coherent_ = other.coherent_;
  }
  return *this;
}

void Buffer::release() {
  if (device_ == nullptr || device_->hung()) return;
  if (mapped_ != nullptr) vkUnmapMemory(device_->handle(), memory_);
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(device_->handle(), buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_->handle(), memory_, nullptr);
  mapped_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
}

void Buffer::check_range(size_t bytes, size_t offset, const char* what) const {
  VKG_CHECK(mapped_ != nullptr, what << " on a moved-from Vulkan buffer");
  VKG_CHECK(offset <= bytes_ && bytes <= bytes_ - offset, what << " of " << bytes << " bytes at offset " << offset
                                                             << " is outside a " << bytes_ << "-byte Vulkan buffer");
}

void Buffer::upload(const void* data, size_t bytes, size_t offset) {
  check_range(bytes, offset, "upload");
  if (bytes == 0) return;
  std::memcpy(static_cast<char*>(mapped_) + offset, data, bytes);
  if (!coherent_) {
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    VKG_VK_CHECK(vkFlushMappedMemoryRanges(device_->handle(), 1, &range), "flushing Vulkan buffer memory");
  }
}

void Buffer::download(void* data, size_t bytes, size_t offset) const {
  check_range(bytes, offset, "download");
  if (bytes == 0) return;
  if (!coherent_) {
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    VKG_VK_CHECK(vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range), "invalidating Vulkan buffer memory");
  }
  std::memcpy(data, static_cast<const char*>(mapped_) + offset, bytes);
}

}  // namespace vkg::vk
