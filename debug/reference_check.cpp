#include "debug/reference_check.h"

#include <algorithm>

#include "runtime/core/logger.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"

namespace vkg::debug {

ReferenceCheck::ReferenceCheck(const Graph& graph, std::vector<TensorMap> feeds, CompareOptions options)
    : graph_(graph), feeds_(std::move(feeds)), options_(std::move(options)) {}

bool ReferenceCheck::check(vk::Context& ctx, const Engine& engine) {
  std::vector<std::string> outputs;
  for (int32_t t : engine.outputs) outputs.push_back(engine.tensors[size_t(t)].name);
  if (reference_.empty()) {
    const ReferenceBackend backend(graph_);
    for (const TensorMap& feed : feeds_) reference_.push_back(backend.run(feed, outputs));
  }
  vk::ExecutorOptions options;
  options.faulty_tactics = vk::faulty_tactics_from_env();
  options.faulty_layers = vk::faulty_layers_from_env();
  vk::EngineExecutor executor(ctx.device(), engine, options);
  failed_.clear();
  bool passed = true;
  for (size_t i = 0; i < feeds_.size(); ++i) {
    const CompareResult r = compare_outputs("vulkan", executor.run(feeds_[i]), "reference", reference_[i], options_);
    passed = passed && r.passed;
    for (const OutputComparison& o : r.per_output)
      if (!o.passed && std::find(failed_.begin(), failed_.end(), o.name) == failed_.end()) failed_.push_back(o.name);
  }
  ctx.check_validation("the check's run");
  return passed;
}

}  // namespace vkg::debug
