// Worker processes that compile pipelines side by side for a driver that compiles one pipeline at
// a time in a process (DeviceProfile::compiles_in_one_thread: llvmpipe, lavapipe's compiler).
//
// llvmpipe runs LLVM at a pipeline's first dispatch, not at vkCreateComputePipelines, and only one
// at a time in a process whichever thread, device or instance asks (docs/bench.md, "Build time on
// lavapipe"); LLVM is most of a cold engine build there. It keeps what it compiled in Mesa's
// on-disk shader cache, keyed by the shader and its pipeline layout, which every process reads:
// measured (2026-12-01) a block GEMM whose first dispatch compiled for 1,248 ms ran its first
// dispatch in 2.7 ms in a second process, the cache entry on disk 0.1-0.3 ms after the first
// dispatch finished. So a worker process that opens the same device with the same switches and
// dispatches a pipeline once compiles it for the builder, and the builder's own first dispatch
// reads it from the cache. The builder compiles a layer's candidates from the front of the list
// while the workers take them from its back, before any is timed: the workers never run beside
// a timed sample.
//
// The worker program is `vkgraphy_compile_worker` (tools/compile_worker/main.cpp). Its protocol,
// one line each way on a socket (file descriptor 3 in the worker):
//   open <uuid> <device> [<switch>...]   ->  ready | error <message>
//   compile <pipeline_key>              ->  done  | error <message>
// A worker that fails, hangs or exits costs nothing but time: what it was given is compiled in the
// builder's process, where an error reaches the build as it would without workers.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"

namespace vkg::vk {

// The worker program: $VKGRAPHY_COMPILE_WORKER where set, else vkgraphy_compile_worker beside the
// running program, else the one this build made; "" when none of them exists.
std::string compile_worker_program();

// Workers a build starts by default: $VKGRAPHY_COMPILE_WORKERS where set (a count; 0: none), else
// one per core beyond the first, at most 8 (cores: the process's CPU affinity, or $LP_NUM_THREADS
// where set, lavapipe's share of them). Throws Error on a malformed $VKGRAPHY_COMPILE_WORKERS.
unsigned default_compile_workers();

class CompileWorkers {
 public:
  // Up to `count` workers for `device`, started at the first compile() that has work for them, and
  // only where the device's profile says compiles_in_one_thread and a worker program exists.
  CompileWorkers(Device& device, unsigned count);
  // Closes the workers' sockets and waits for them to exit.
  ~CompileWorkers();
  CompileWorkers(const CompileWorkers&) = delete;
  CompileWorkers& operator=(const CompileWorkers&) = delete;

  // Compiles the machine code of every pipeline of `pipelines` not dispatched yet in this process:
  // this thread from the front of the list (compile_pipeline_code), the workers from its back.
  // Compile errors are not thrown here: a pipeline that fails is left for its first real dispatch.
  void compile(std::span<const ComputePipeline* const> pipelines);
  // The same for pipelines this process has yet to create: the workers start on `descs` (distinct
  // pipelines) at once, this thread once `create` has made their pipelines here (one per desc, in
  // order; null where one failed), so that the workers compile while this thread creates.
  using Create = std::function<std::vector<const ComputePipeline*>()>;
  void compile(std::span<const PipelineDesc> descs, const Create& create);

  // Whether workers may run for this device (its profile, the count, the program).
  bool enabled() const { return count_ > 0; }
  unsigned started() const;
  size_t compiled_here() const { return compiled_here_; }
  size_t compiled_by_workers() const { return compiled_by_workers_; }

 private:
  struct Worker;
  struct Batch;
  void start_workers();
  void serve(Worker& worker, Batch& batch);

  Device& device_;
  unsigned count_;
  std::string program_;
  bool started_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t compiled_here_ = 0;
  size_t compiled_by_workers_ = 0;
};

// The worker's side (tools/compile_worker/main.cpp): answers the protocol above on `fd` until the
// builder closes it. Returns the worker's exit status.
int serve_compile_jobs(int fd);

}  // namespace vkg::vk
