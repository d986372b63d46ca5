// The builder's device timer (PlanTimer, runtime/engine/builder.h) on a Vulkan
// device: runs a tactic's plan on scratch buffers and reads its time from
// timestamp queries. Pipelines are compiled once per (shader, specialization)
// and kept for the rest of the build.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/engine/builder.h"
#include "runtime/vulkan/compile_workers.h"
#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/pipeline_compiler.h"

namespace vkg::vk {

class VulkanPlanTimer : public PlanTimer {
 public:
  // GPUs lower their clocks while they idle (the host compiling the next pipeline or
  // uploading the next candidate's data) and raise them again only after tens of
  // milliseconds of work: samples taken right after such a gap measure the clock, not
  // the shader. On an H200 (2026-11-27), 4096^3 GEMMs timed after two warm-up runs
  // came out up to 5x slow (3.4 against 0.65 ms) and in no stable order; 25 ms of
  // warm-up left some 1.4x slow; after 100 ms three calls agreed within 0.5% (3.469,
  // 3.453, 3.461 ms), though another tactic still varied once. The untimed runs
  // before the samples therefore last this long on GPUs (counted from the probe run,
  // which ran at the idle clock: at full clock they take less), and none on CPU devices
  // (lavapipe), whose clocks the build's own host work keeps up. After an idle gap of
  // less than 50 ms (the builder, timing one layer after another) a tenth of it.
  static constexpr double kGpuWarmupMs = 100;
  static double default_warmup_ms(const DeviceInfo& info);

  // Throws Error when the device has no timestamps on its compute queue.
  // `min_warmup_ms`: the least device time of untimed runs before the samples
  // (default: default_warmup_ms).
  // `compile_threads`: the threads that create a layer's candidates before they are timed
  // (PipelineCompiler; 0: one per core). `compile_workers`: the worker processes that compile
  // them side by side on a driver that compiles one pipeline at a time in a process
  // (compile_workers.h; default: default_compile_workers()).
  explicit VulkanPlanTimer(Device& device, std::optional<double> min_warmup_ms = std::nullopt,
                           unsigned compile_threads = 0, std::optional<unsigned> compile_workers = std::nullopt);
  ~VulkanPlanTimer() override;

  // Each timed run is recorded between two timestamps in one submission after
  // `warmup` untimed runs, more where they take less than the minimum warm-up
  // time. When one run takes longer than about 20 ms, fewer samples are taken (at
  // least 1) so that slow candidates do not stall the build. Without `known_run_ns` one
  // untimed probe run comes first and sizes both.
  std::vector<double> time(const LayerPlan& plan, const std::vector<Buffer>& inputs, const std::vector<Buffer>& outputs,
                           int warmup, int samples, double known_run_ns) override;

  // One run on the given data, read back (--validate-tactics).
  std::vector<Tensor> run(const LayerPlan& plan, const std::vector<Tensor>& inputs, const std::vector<Buffer>& outputs,
                          bool inject_fault) override;

  // Creates the pipelines of `plans` not created yet, in parallel (PipelineCompiler), and where
  // compile workers run, compiles their machine code with them (CompileWorkers).
  void compile(const std::vector<const LayerPlan*>& plans) override;

  size_t pipelines_compiled() const { return pipelines_.size(); }
  const CompileWorkers& workers() const { return workers_; }

 private:
  struct Prepared;
  // Buffers and descriptor sets for `plan`; inputs with `contents` (may be
  // shorter, or hold nullptr) are filled with them, the rest with a harmless pattern.
  std::unique_ptr<Prepared> prepare(const LayerPlan& plan, const std::vector<Buffer>& inputs,
                                    const std::vector<Buffer>& outputs, const std::vector<const Tensor*>& contents);
  const ComputePipeline& pipeline(const Dispatch& d);

  Device& device_;
  double min_warmup_ns_;
  std::optional<std::chrono::steady_clock::time_point> last_end_;  // of the last timed submission
  std::map<std::string, std::shared_ptr<const ComputePipeline>> pipelines_;  // from the device's pool
  PipelineCompiler compiler_;
  CompileWorkers workers_;
};

}  // namespace vkg::vk
