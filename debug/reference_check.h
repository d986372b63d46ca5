// A check a debug tool runs itself when no --check command is given (`debug rewrites`): the engine
// and the reference backend on the same inputs, compared with the comparator's options, as
// `vkgraphy run MODEL --vk --ref` compares them (--atol, --rtol, --check-error-stat, ...).
#pragma once

#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/data/comparator.h"
#include "runtime/engine/engine.h"
#include "runtime/vulkan/context.h"

namespace vkg::debug {

class ReferenceCheck {
 public:
  // `feeds`: the data loader's inputs, one map per iteration. The reference runs once, on the
  // first check.
  ReferenceCheck(const Graph& graph, std::vector<TensorMap> feeds, CompareOptions options);

  // Runs `engine` on `ctx`'s device on every feed (with the fault switches of the environment,
  // as `run` does) and compares its outputs with the reference's, logging the comparison. True
  // when every feed passes.
  bool check(vk::Context& ctx, const Engine& engine);
  // The outputs that failed the last check, in the engine's order.
  const std::vector<std::string>& failed_outputs() const { return failed_; }

 private:
  const Graph& graph_;
  std::vector<TensorMap> feeds_;
  CompareOptions options_;
  std::vector<TensorMap> reference_;  // per feed, once computed
  std::vector<std::string> failed_;
};

}  // namespace vkg::debug
