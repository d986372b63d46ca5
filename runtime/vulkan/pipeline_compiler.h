// Creates a batch of compute pipelines on several threads before the builder times them.
//
// vkCreateComputePipelines may be called from several threads at once, and most drivers compile
// there: a layer's candidates are created together, one per core. llvmpipe (lavapipe, Mesa 22.3)
// does only the front half there (SPIR-V to NIR, about 10 ms a pipeline) and runs LLVM, most of
// the cost (0.1 to 1 s a pipeline), at the pipeline's first dispatch, one pipeline at a time
// in a process: compiling ahead on helper devices, or helper instances, ran no faster than
// compiling in place (docs/bench.md, "Build time on lavapipe"). There worker processes compile
// side by side (compile_workers.h), and the builder compiles fewer candidates
// (BuilderConfig::prune_for_device).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device.h"

namespace vkg::vk {

class PipelineCompiler {
 public:
  // `threads`: 0 for one per core; 1 creates on the calling thread.
  PipelineCompiler(Device& device, unsigned threads);

  // Creates a pipeline on the device for each desc, in parallel, through the device's pool
  // (pipeline_pool.h: one made before is not made again); an entry is null where that
  // pipeline failed to build (the caller builds it again, alone, for the error).
  std::vector<std::shared_ptr<const ComputePipeline>> compile(std::span<const PipelineDesc> descs) const;

 private:
  Device& device_;
  unsigned threads_;
};

}  // namespace vkg::vk
