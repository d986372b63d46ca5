// The builder's device timer (PlanTimer, runtime/engine/builder.h) on a Vulkan
// device: runs a tactic's plan on scratch buffers and reads its time from
// timestamp queries. Pipelines are compiled once per (shader, specialization)
// and kept for the rest of the build.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/engine/builder.h"
#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"

namespace vkg::vk {

class VulkanPlanTimer : public PlanTimer {
 public:
  // Throws Error when the device has no timestamps on its compute queue.
  explicit VulkanPlanTimer(Device& device);
  ~VulkanPlanTimer() override;

  // Each timed run is recorded between two timestamps in one submission after
  // `warmup` untimed runs. When one run takes longer than about 20 ms, fewer
  // samples are taken (at least 1) so that slow candidates do not stall the build.
  std::vector<double> time(const LayerPlan& plan, const std::vector<Buffer>& inputs, const std::vector<Buffer>& outputs,
                           int warmup, int samples) override;

  // One run on the given data, read back (--validate-tactics).
  std::vector<Tensor> run(const LayerPlan& plan, const std::vector<Tensor>& inputs, const std::vector<Buffer>& outputs,
                          bool inject_fault) override;

  size_t pipelines_compiled() const { return pipelines_.size(); }

 private:
  struct Prepared;
  // Buffers and descriptor sets for `plan`; inputs with `contents` (may be
  // shorter, or hold nullptr) are filled with them, the rest with a harmless pattern.
  std::unique_ptr<Prepared> prepare(const LayerPlan& plan, const std::vector<Buffer>& inputs,
                                    const std::vector<Buffer>& outputs, const std::vector<const Tensor*>& contents);
  const ComputePipeline& pipeline(const Dispatch& d);

  Device& device_;
  std::map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
};

}  // namespace vkg::vk
