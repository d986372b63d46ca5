// Per-layer isolation (`run --vk --ref --isolate-layers`, docs/debug.md
// "Per-layer isolation"): every layer of a built engine runs twice, one layer
// at a time, on the engine's own buffers and dispatches (the plan is never
// changed): once on the reference backend's values of its inputs, which shows
// the error the layer introduces, and once chained as in a normal run, which
// shows the total error of its outputs. Reference values are computed node by
// node and dropped after their last use; device results are reduced to
// statistics at once: only the per-layer rows below are kept.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/data/comparator.h"
#include "runtime/engine/engine.h"
#include "runtime/vulkan/executor.h"

namespace vkg::debug {

// One engine layer's errors against the reference. Errors are the statistic
// the comparator checks (--check-error-stat: the max for elemwise and max, else
// the mean, median or quantile) over all the layer's outputs, worst output first.
struct LayerIsolation {
  std::string layer;  // engine layer name ("conv1+bn1+relu1")
  std::string op;     // its ONNX op ("Reformat", "Constant" for inserted layers)
  std::string tactic;
  std::string precision;      // "fp32", "fp16"
  double introduced = 0;      // absolute error of its outputs run on the reference's inputs
  double introduced_rel = 0;  // relative error, same run
  double inherited = 0;       // the largest total absolute error among its inputs (0: model inputs, weights)
  double total = 0;           // absolute error of its outputs in the chained run
  double total_rel = 0;
  bool passed = true;        // the introduced error is within tolerance (--atol/--rtol/--check-error-stat)
  bool total_passed = true;  // the total error is within tolerance
  std::string note;          // why a value is missing ("no reference value for 'x'"), else ""
};

struct IsolationResult {
  std::vector<LayerIsolation> layers;  // in engine order
  // Index into layers of the first layer whose introduced error is over tolerance; -1 when all pass.
  int first_failed = -1;
};

// Isolates every layer of `engine`, which was built from `graph` and which
// `executor` runs (made with the caller's options, fault switches included).
// `inputs` hold every graph input. Throws Error for an engine with branching or
// loop layers (control flow evaluated on the device).
IsolationResult isolate_layers(const Graph& graph, const Engine& engine, vk::EngineExecutor& executor,
                               const TensorMap& inputs, const CompareOptions& options);

// The table a user reads: one row per layer (#, layer, tactic, precision,
// introduced abs/rel, inherited, total, verdict), several lines.
std::string format_isolation_table(const IsolationResult& result);

}  // namespace vkg::debug
