// Records compute work into one command buffer, submits it to the device's
// compute queue and waits on a fence with a bounded timeout (an Error, never a
// hang), with timestamp queries read back in nanoseconds. begin() starts a new
// recording once the previous submission finished; a recording begun with
// `reusable` can be submitted again and again without recording it anew (an
// execution context records its engine once).
//
//   ComputeCommands cmd(device, /*max_timestamps=*/2);
//   cmd.begin();
//   uint32_t t0 = cmd.write_timestamp();
//   cmd.dispatch(pipeline, set, groups, 1, 1, &n, sizeof n);
//   uint32_t t1 = cmd.write_timestamp();
//   cmd.submit_and_wait();
//   double ns = cmd.elapsed_ns(t0, t1);
//
// Declare it after the buffers, pipelines and sets it uses, so that it is
// destroyed first: after a timeout its destructor waits (bounded) for the work.
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"

namespace vkg::vk {

class ComputeCommands {
 public:
  // How long submit_and_wait() waits by default. Generous because lavapipe
  // compiles a pipeline's machine code at its first dispatch when Mesa's
  // on-disk shader cache is cold: on a fresh machine the first run of some
  // fp16 pipelines took over 10 s (2026-11-25), which a shorter limit reported
  // as a hung device.
  static constexpr std::chrono::milliseconds kDefaultTimeout{120000};
  // After a timeout, how long the destructor still waits for the work before
  // giving the device up as hung (its handles are then leaked, not destroyed).
  static constexpr std::chrono::milliseconds kGracePeriod{10000};

  // `max_timestamps` > 0 needs timestamp support on the compute queue (Error otherwise).
  ComputeCommands(Device& device, uint32_t max_timestamps = 0);
  ~ComputeCommands();
  ComputeCommands(const ComputeCommands&) = delete;
  ComputeCommands& operator=(const ComputeCommands&) = delete;

  // Starts recording (discarding earlier commands and timestamps). A reusable
  // recording may be submitted many times; its timestamps are reset on every submission.
  void begin(bool reusable = false);
  // Binds the pipeline and set, pushes `push_bytes` of constants and dispatches.
  // Group counts must be > 0 and within the device's maxComputeWorkGroupCount.
  void dispatch(const ComputePipeline& pipeline, const DescriptorSet& set, uint32_t groups_x, uint32_t groups_y,
                uint32_t groups_z, const void* push = nullptr, uint32_t push_bytes = 0);
  // A dispatch of no workgroups, with zeroed push constants: runs nothing, but a driver that
  // compiles a pipeline's machine code at its first dispatch (llvmpipe) compiles it here
  // (compile_pipeline_code).
  void empty_dispatch(const ComputePipeline& pipeline, const DescriptorSet& set);
  // Copies `bytes` from src at src_offset to dst at dst_offset (both ranges inside the buffers).
  void copy(const Buffer& src, const Buffer& dst, size_t bytes, size_t src_offset = 0, size_t dst_offset = 0);
  // Makes shader and transfer writes of earlier commands visible to later dispatches, copies and the host.
  void barrier();
  // Records a timestamp after all earlier commands complete; returns its query index.
  uint32_t write_timestamp();
  // Ends recording (if still recording), submits and waits. A finished reusable
  // recording is submitted again. Throws Error if the work does not finish
  // within `timeout` (the device then takes no new work) or the device is lost.
  void submit_and_wait(std::chrono::milliseconds timeout = kDefaultTimeout);

  // After submit_and_wait(): every timestamp written, in nanoseconds (device time base).
  std::vector<uint64_t> timestamps_ns() const;
  // Nanoseconds between two timestamps written in this recording.
  double elapsed_ns(uint32_t begin_query, uint32_t end_query) const;

 private:
  // Binds the pipeline, its set and push constants and records the dispatch (the checks every form shares).
  void bind_and_dispatch(const ComputePipeline& pipeline, const DescriptorSet& set, const uint32_t (&groups)[3],
                         const void* push, uint32_t push_bytes);
  enum class State { Idle, Recording, Ready, Pending, Done };

  Device& device_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t max_timestamps_ = 0;
  uint32_t timestamps_written_ = 0;
  State state_ = State::Idle;
  bool reusable_ = false;
  std::vector<uint64_t> results_ns_;
};

// Makes the driver compile `pipeline`'s machine code now, if it has not run yet in this process:
// an empty dispatch on placeholder buffers, submitted and waited for. Drivers that compile at
// vkCreateComputePipelines have nothing left to do; llvmpipe compiles at the first dispatch, and
// keeps the result in Mesa's on-disk shader cache (runtime/vulkan/compile_workers.h).
void compile_pipeline_code(Device& device, const ComputePipeline& pipeline);

}  // namespace vkg::vk
