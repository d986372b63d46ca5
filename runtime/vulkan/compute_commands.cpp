#include "runtime/vulkan/compute_commands.h"

#include <vector>

#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

ComputeCommands::ComputeCommands(Device& device, uint32_t max_timestamps)
    : device_(device), max_timestamps_(max_timestamps) {
  VKG_CHECK(max_timestamps == 0 || device.info().timestamps(),
            "Vulkan device '" << device.info().name << "' has no timestamp queries on its compute queue");
  VkDevice dev = device.handle();
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = device.command_pool();
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VKG_VK_CHECK(vkAllocateCommandBuffers(dev, &alloc, &cmd_), "allocating a command buffer");
  VkFenceCreateInfo fence{};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkResult r = vkCreateFence(dev, &fence, nullptr, &fence_);
  if (r == VK_SUCCESS && max_timestamps > 0) {
    VkQueryPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    pool.queryType = VK_QUERY_TYPE_TIMESTAMP;
    pool.queryCount = max_timestamps;
    r = vkCreateQueryPool(dev, &pool, nullptr, &queries_);
  }
  if (r != VK_SUCCESS) {
    if (fence_ != VK_NULL_HANDLE) vkDestroyFence(dev, fence_, nullptr);
    vkFreeCommandBuffers(dev, device.command_pool(), 1, &cmd_);
    VKG_THROW("creating a fence or timestamp query pool: " << vk_result_name(r));
  }
}

ComputeCommands::~ComputeCommands() {
  VkDevice dev = device_.handle();
  if (state_ == State::Pending && !device_.hung()) {
    const uint64_t grace_ns = uint64_t(kGracePeriod.count()) * 1000000ull;
    if (vkWaitForFences(dev, 1, &fence_, VK_TRUE, grace_ns) != VK_SUCCESS) device_.mark_hung();
  }
  // Work that never finished may still use these handles: leak rather than destroy them.
  if (device_.hung()) return;
  if (queries_ != VK_NULL_HANDLE) vkDestroyQueryPool(dev, queries_, nullptr);
  vkDestroyFence(dev, fence_, nullptr);
  vkFreeCommandBuffers(dev, device_.command_pool(), 1, &cmd_);
}

void ComputeCommands::begin(bool reusable) {
  VKG_CHECK(!device_.timed_out(), "Vulkan device '" << device_.info().name << "' takes no new work after a timeout");
  VKG_VK_CHECK(vkResetCommandBuffer(cmd_, 0), "resetting a command buffer");
  VkCommandBufferBeginInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  info.flags = reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  reusable_ = reusable;
  VKG_VK_CHECK(vkBeginCommandBuffer(cmd_, &info), "beginning a command buffer");
  if (queries_ != VK_NULL_HANDLE) vkCmdResetQueryPool(cmd_, queries_, 0, max_timestamps_);
  timestamps_written_ = 0;
  results_ns_.clear();
  state_ = State::Recording;
}

void ComputeCommands::dispatch(const ComputePipeline& pipeline, const DescriptorSet& set, uint32_t groups_x,
                               uint32_t groups_y, uint32_t groups_z, const void* push, uint32_t push_bytes) {
  const DeviceInfo& info = device_.info();
  const uint32_t groups[3] = {groups_x, groups_y, groups_z};
  for (int i = 0; i < 3; ++i) {
    VKG_CHECK(groups[i] > 0 && groups[i] <= info.max_workgroup_count[i],
              "dispatch of '" << pipeline.desc().name << "': " << groups[i] << " workgroups in dimension " << i
                              << " (the device allows 1.." << info.max_workgroup_count[i] << ")");
  }
  bind_and_dispatch(pipeline, set, groups, push, push_bytes);
}

void ComputeCommands::empty_dispatch(const ComputePipeline& pipeline, const DescriptorSet& set) {
  const std::vector<uint32_t> zeros(pipeline.desc().push_constant_bytes / 4, 0);
  const uint32_t none[3] = {0, 0, 0};
  bind_and_dispatch(pipeline, set, none, zeros.data(), uint32_t(zeros.size() * 4));
}

void ComputeCommands::bind_and_dispatch(const ComputePipeline& pipeline, const DescriptorSet& set,
                                        const uint32_t (&groups)[3], const void* push, uint32_t push_bytes) {
  VKG_CHECK(state_ == State::Recording, "dispatch of '" << pipeline.desc().name << "' outside begin()/submit");
  VKG_CHECK(push_bytes == pipeline.desc().push_constant_bytes,
            "dispatch of '" << pipeline.desc().name << "': " << push_bytes << " bytes of push constants, the pipeline takes "
                            << pipeline.desc().push_constant_bytes);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
  VkDescriptorSet handle = set.handle();
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &handle, 0, nullptr);
  if (push_bytes > 0) vkCmdPushConstants(cmd_, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdDispatch(cmd_, groups[0], groups[1], groups[2]);
  pipeline.mark_dispatched();
}

void ComputeCommands::copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t src_offset, size_t dst_offset) {
  VKG_CHECK(state_ == State::Recording, "buffer copy outside begin()/submit");
  VKG_CHECK(bytes > 0 && src_offset <= src.size() && bytes <= src.size() - src_offset && dst_offset <= dst.size() &&
                bytes <= dst.size() - dst_offset,
            "buffer copy of " << bytes << " bytes from offset " << src_offset << " of a " << src.size()
                              << "-byte buffer to offset " << dst_offset << " of a " << dst.size() << "-byte buffer");
  VkBufferCopy region{};
  region.srcOffset = src_offset;
  region.dstOffset = dst_offset;
  region.size = bytes;
  vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), 1, &region);
}

void ComputeCommands::barrier() {
  VKG_CHECK(state_ == State::Recording, "barrier outside begin()/submit");
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &barrier, 0, nullptr, 0, nullptr);
}

uint32_t ComputeCommands::write_timestamp() {
  VKG_CHECK(state_ == State::Recording, "timestamp outside begin()/submit");
  VKG_CHECK(timestamps_written_ < max_timestamps_,
            "more than the " << max_timestamps_ << " timestamps this command buffer was created for");
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, timestamps_written_);
  return timestamps_written_++;
}

void ComputeCommands::submit_and_wait(std::chrono::milliseconds timeout) {
  if (state_ == State::Recording) {
    // Shader and transfer writes become visible to the host once the fence signals (host reads after the wait).
    VkMemoryBarrier to_host{};
    to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
    state_ = State::Idle;
    VKG_VK_CHECK(vkEndCommandBuffer(cmd_), "ending a command buffer");
    state_ = State::Ready;
  }
  VKG_CHECK(state_ == State::Ready || (state_ == State::Done && reusable_),
            "submit without a recording (begin() first; only a reusable recording is submitted again)");
  VKG_CHECK(!device_.timed_out(), "Vulkan device '" << device_.info().name << "' takes no new work after a timeout");
  results_ns_.clear();
  VkDevice dev = device_.handle();
  VKG_VK_CHECK(vkResetFences(dev, 1, &fence_), "resetting a fence");
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  VKG_VK_CHECK(vkQueueSubmit(device_.queue(), 1, &submit, fence_), "submitting compute work");
  const uint64_t timeout_ns = uint64_t(timeout.count()) * 1000000ull;
  const VkResult r = vkWaitForFences(dev, 1, &fence_, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT) {
    state_ = State::Pending;
    device_.mark_timed_out();
    VKG_THROW("compute work on '" << device_.info().name << "' did not finish within " << timeout.count()
                                  << " ms; the device is unusable from now on");
  }
  if (r == VK_ERROR_DEVICE_LOST) {
    state_ = State::Pending;
    device_.mark_hung();
  }
  VKG_VK_CHECK(r, "waiting for compute work on '" << device_.info().name << "'");
  state_ = State::Done;

  if (timestamps_written_ > 0) {
    std::vector<uint64_t> ticks(timestamps_written_);
    VKG_VK_CHECK(vkGetQueryPoolResults(dev, queries_, 0, timestamps_written_, ticks.size() * sizeof(uint64_t),
                                       ticks.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "reading timestamp queries");
    const uint32_t bits = device_.info().timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    const double period = device_.info().timestamp_period_ns;
    for (uint64_t t : ticks) results_ns_.push_back(uint64_t(double(t & mask) * period));
  }
}

std::vector<uint64_t> ComputeCommands::timestamps_ns() const {
  VKG_CHECK(state_ == State::Done, "timestamps read before submit_and_wait() finished");
  return results_ns_;
}

double ComputeCommands::elapsed_ns(uint32_t begin_query, uint32_t end_query) const {
  VKG_CHECK(state_ == State::Done, "timestamps read before submit_and_wait() finished");
  VKG_CHECK(begin_query < results_ns_.size() && end_query < results_ns_.size(),
            "timestamp query " << std::max(begin_query, end_query) << " was not written (" << results_ns_.size()
                               << " were)");
  return double(results_ns_[end_query]) - double(results_ns_[begin_query]);
}

void compile_pipeline_code(Device& device, const ComputePipeline& pipeline) {
  if (pipeline.dispatched()) return;
  // Placeholders of one texel (16 bytes) per binding: nothing reads them, the layout needs them bound.
  std::vector<Buffer> placeholders;
  placeholders.reserve(pipeline.desc().bindings);
  std::vector<const Buffer*> bound;
  for (uint32_t b = 0; b < pipeline.desc().bindings; ++b) bound.push_back(&placeholders.emplace_back(device, 16));
  const DescriptorSet set(device, pipeline, bound);
  ComputeCommands cmd(device);
  cmd.begin();
  cmd.empty_dispatch(pipeline, set);
  cmd.submit_and_wait();
}

}  // namespace vkg::vk
