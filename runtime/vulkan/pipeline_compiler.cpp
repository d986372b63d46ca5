#include "runtime/vulkan/pipeline_compiler.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "runtime/core/logger.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {

PipelineCompiler::PipelineCompiler(Device& device, unsigned threads)
    : device_(device), threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())) {}

std::vector<std::shared_ptr<const ComputePipeline>> PipelineCompiler::compile(std::span<const PipelineDesc> descs) const {
  std::vector<std::shared_ptr<const ComputePipeline>> out(descs.size());
  std::vector<std::string> errors(descs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < descs.size(); i = next++) {
      try {
        out[i] = device_.pipelines().get(builtin_shader(descs[i].name), descs[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    const unsigned workers = std::min<unsigned>(threads_, unsigned(descs.size()));
    for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  // Logged here, on the calling thread (the logger is not shared between threads). A pipeline
  // that failed is built again alone when its candidate is timed, where the error reaches it.
  for (size_t i = 0; i < descs.size(); ++i)
    if (!errors[i].empty()) VKG_EXTRA_VERBOSE("pipeline '" << descs[i].name << "' not created ahead: " << errors[i]);
  return out;
}

}  // namespace vkg::vk
