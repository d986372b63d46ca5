#include "runtime/vulkan/buffer.h"

#include <bit>
#include <cstring>
#include <utility>

#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

namespace {

bool maps(BufferUse use, MemoryPath path) {
  switch (use) {
    case BufferUse::Device:
    case BufferUse::HostRead: return path == MemoryPath::Unified;
    case BufferUse::HostWrite: return path != MemoryPath::Staging;
    case BufferUse::Staging: return true;
  }
  return false;
}

}  // namespace

size_t allocation_bytes(size_t bytes, const DeviceInfo& info) {
  size_t size = (bytes + 15) / 16 * 16;
  if (info.canonical_texel_views) {
    size += kTexelViewSlack;
    if (std::has_single_bit(size)) size += 16;
  }
  return size;
}

Buffer::Buffer(Device& device, size_t bytes, BufferUse use)
    : device_(&device), bytes_(bytes), allocated_(allocation_bytes(bytes, device.info())) {
  VKG_CHECK(bytes > 0, "cannot create an empty Vulkan buffer");
  VkDevice dev = device.handle();
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  // Whole vec4 texels of fp32: a texel view (DescriptorSet) reads the last partial one in bounds.
  info.size = allocated_size();
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VKG_VK_CHECK(vkCreateBuffer(dev, &info, nullptr, &buffer_), "creating a " << bytes << "-byte Vulkan buffer");
  try {
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(dev, buffer_, &req);
    const bool mapped = maps(use, device.info().memory_path());
    VkMemoryPropertyFlags required = 0, preferred = 0;
    if (use == BufferUse::Staging) {
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    } else if (mapped) {
      required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    } else {
      required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    }
    const uint32_t type = device.memory_type(req.memoryTypeBits, required, preferred);
    coherent_ = device.memory_type_coherent(type);
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    VKG_VK_CHECK(vkAllocateMemory(dev, &alloc, nullptr, &memory_), "allocating " << req.size << " bytes of Vulkan memory");
    VKG_VK_CHECK(vkBindBufferMemory(dev, buffer_, memory_, 0), "binding Vulkan buffer memory");
    if (mapped) VKG_VK_CHECK(vkMapMemory(dev, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "mapping Vulkan buffer memory");
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
      allocated_(std::exchange(other.allocated_, 0)),
      coherent_(other.coherent_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    mapped_ = std::exchange(other.mapped_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    allocated_ = std::exchange(other.allocated_, 0);
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
  VKG_CHECK(buffer_ != VK_NULL_HANDLE, what << " on a moved-from Vulkan buffer");
  VKG_CHECK(offset <= bytes_ && bytes <= bytes_ - offset, what << " of " << bytes << " bytes at offset " << offset
                                                             << " is outside a " << bytes_ << "-byte Vulkan buffer");
}

std::byte* Buffer::mapped() {
  VKG_CHECK(mapped_ != nullptr, "a Vulkan buffer that is not host-mapped was accessed in place");
  return static_cast<std::byte*>(mapped_);
}

const std::byte* Buffer::mapped() const { return const_cast<Buffer*>(this)->mapped(); }

void Buffer::flush() const {
  if (coherent_ || mapped_ == nullptr) return;
  const VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0, VK_WHOLE_SIZE};
  VKG_VK_CHECK(vkFlushMappedMemoryRanges(device_->handle(), 1, &range), "flushing Vulkan buffer memory");
}

void Buffer::invalidate() const {
  if (coherent_ || mapped_ == nullptr) return;
  const VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, memory_, 0, VK_WHOLE_SIZE};
  VKG_VK_CHECK(vkInvalidateMappedMemoryRanges(device_->handle(), 1, &range), "invalidating Vulkan buffer memory");
}

void Buffer::upload(const void* data, size_t bytes, size_t offset) {
  check_range(bytes, offset, "upload");
  if (bytes == 0) return;
  if (mapped_ != nullptr) {
    std::memcpy(static_cast<char*>(mapped_) + offset, data, bytes);
    flush();
    return;
  }
  Buffer staging(*device_, bytes, BufferUse::Staging);
  staging.upload(data, bytes);
  ComputeCommands cmd(*device_);
  cmd.begin();
  cmd.copy(staging, *this, bytes, 0, offset);
  cmd.submit_and_wait();
}

void Buffer::download(void* data, size_t bytes, size_t offset) const {
  check_range(bytes, offset, "download");
  if (bytes == 0) return;
  if (mapped_ != nullptr) {
    invalidate();
    std::memcpy(data, static_cast<const char*>(mapped_) + offset, bytes);
    return;
  }
  Buffer staging(*device_, bytes, BufferUse::Staging);
  ComputeCommands cmd(*device_);
  cmd.begin();
  cmd.copy(*this, staging, bytes, offset, 0);
  cmd.submit_and_wait();
  staging.download(data, bytes);
}

void StagedUpload::add(Buffer& dst, const void* data, size_t bytes) {
  if (bytes == 0) return;
  if (dst.host_mapped()) {
    dst.upload(data, bytes);
    return;
  }
  VKG_CHECK(bytes <= dst.size(), "staged upload of " << bytes << " bytes into a " << dst.size() << "-byte buffer");
  pending_.push_back({&dst, data, bytes});
}

void StagedUpload::finish() {
  size_t first = 0;
  while (first < pending_.size()) {
    size_t last = first, total = 0;
    while (last < pending_.size() && (last == first || total + pending_[last].bytes <= kChunkBytes))
      total += pending_[last++].bytes;
    Buffer staging(device_, total, BufferUse::Staging);
    ComputeCommands cmd(device_);
    cmd.begin();
    size_t offset = 0;
    for (size_t i = first; i < last; ++i) {
      std::memcpy(staging.mapped() + offset, pending_[i].data, pending_[i].bytes);
      cmd.copy(staging, *pending_[i].dst, pending_[i].bytes, offset, 0);
      offset += pending_[i].bytes;
    }
    staging.flush();
    cmd.submit_and_wait();
    staged_bytes_ += total;
    first = last;
  }
  pending_.clear();
}

}  // namespace vkg::vk
