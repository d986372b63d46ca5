// `debug reduce` as library code: finds the smallest subgraph of an ONNX model
// that still fails the check. Phases, as Polygraphy runs them and then some:
//   0. the original model is checked first (a model that passes is reported,
//      not "reduced");
//   1. outputs: which node's outputs, made the graph outputs, still fail;
//   2. inputs: which node's inputs, made the graph inputs, still fail
//      (branches that are cut off are frozen to reference-backend values);
//   3. prune (vkgraphy's addition): removes single nodes at the edges of the
//      result while it still fails, so bisect isolates a node as well as
//      linear does and branches that are not needed go away.
#pragma once

#include <optional>
#include <string>

#include "debug/iteration_loop.h"
#include "debug/markers.h"
#include "debug/reduce_graph.h"

namespace vkg::debug {

struct ReduceOptions {
  SearchMode mode = SearchMode::Bisect;
  bool reduce_outputs = true;
  bool reduce_inputs = true;
  bool prune = true;
};

struct ReduceResult {
  bool original_fails = false;
  std::optional<Boundary> bad;   // the smallest failing subgraph (unset when none failed)
  std::optional<Boundary> good;  // a passing subgraph close in size to `bad` (for --min-good)
  size_t bad_nodes = 0;
};

// Runs the phases on `graph`, one iteration of `loop` per candidate; every
// candidate is written to loop.iter_artifact() before its check. Throws
// StopRequested when the user stops the session.
ReduceResult reduce_model(const ReductionGraph& graph, IterationLoop& loop, const ReduceOptions& options);

}  // namespace vkg::debug
