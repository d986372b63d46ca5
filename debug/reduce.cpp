#include "debug/reduce.h"

#include <limits>
#include <map>
#include <set>

#include "runtime/core/logger.h"

namespace vkg::debug {

namespace {

// `b` without the graph inputs that none of its nodes reads.
Boundary trimmed(const ReductionGraph& graph, Boundary b) {
  std::set<std::string> read(b.outputs.begin(), b.outputs.end());
  for (size_t i : graph.nodes_of(b))
    for (const std::string& t : graph.node_inputs(i)) read.insert(t);
  std::erase_if(b.inputs, [&](const std::string& t) { return !read.count(t); });
  return b;
}

class Reducer {
 public:
  Reducer(const ReductionGraph& graph, IterationLoop& loop) : graph_(graph), loop_(loop) {}

  // Checks the candidate `b` (once: a subgraph seen before keeps its result).
  bool check(const Boundary& b, const std::string& phase, std::optional<int> remaining) {
    const size_t nodes = graph_.nodes_of(b).size();
    const std::string what = graph_.describe(b);
    bool passed;
    if (nodes == 0) {
      VKG_VERBOSE("Skipping " << phase << " candidate " << what << ": it keeps no node");
      return true;
    }
    if (auto it = seen_.find(what); it != seen_.end()) {
      VKG_VERBOSE("Skipping " << phase << " candidate " << what << ": already " << (it->second ? "passed" : "failed"));
      return it->second;
    }
    passed = loop_.run(phase + ": " + what,
                       [&] { save_reduced_model(graph_.materialize(b), loop_.iter_artifact()); }, remaining);
    seen_[what] = passed;
    if (passed) goods_.emplace_back(nodes, b);
    return passed;
  }

  // A passing subgraph close in size to one of `bad_nodes` nodes, as Polygraphy picks it:
  // the largest smaller one, else the smallest larger one.
  std::optional<Boundary> min_good(size_t bad_nodes) const {
    std::optional<std::pair<size_t, Boundary>> below, above;
    for (const auto& [n, b] : goods_) {
      if (n < bad_nodes && (!below || n > below->first)) below.emplace(n, b);
      if (n >= bad_nodes && (!above || n < above->first)) above.emplace(n, b);
    }
    if (below) return below->second;
    if (above) return above->second;
    return std::nullopt;
  }

 private:
  const ReductionGraph& graph_;
  IterationLoop& loop_;
  std::map<std::string, bool> seen_;
  std::vector<std::pair<size_t, Boundary>> goods_;
};

}  // namespace

ReduceResult reduce_model(const ReductionGraph& graph, IterationLoop& loop, const ReduceOptions& options) {
  Reducer reducer(graph, loop);
  ReduceResult result;
  Boundary current = trimmed(graph, graph.whole());

  VKG_START("Checking the original model (" << graph.nodes_of(current).size() << " nodes)");
  result.original_fails = !reducer.check(current, "original", std::nullopt);
  if (!result.original_fails) return result;

  if (options.reduce_outputs && graph.num_nodes() > 0) {
    VKG_START("Reducing model outputs");
    ReduceMarker marker(options.mode, graph.num_nodes(), /*invert=*/false);
    while (!marker.done()) {
      const Boundary b = trimmed(graph, {current.inputs, graph.node_outputs(marker.node_index())});
      const bool passed = reducer.check(b, "outputs", marker.remaining());
      marker.step(passed, graph.nodes_of(b).size());
    }
    if (marker.best_bad()) current = trimmed(graph, {current.inputs, graph.node_outputs(*marker.best_bad())});
    VKG_FINISH("Finished reducing model outputs: " << graph.describe(current));
  }

  if (options.reduce_inputs) {
    VKG_START("Reducing model inputs");
    const std::vector<size_t> kept = graph.nodes_of(current);
    ReduceMarker marker(options.mode, kept.size(), /*invert=*/true);
    while (!marker.done()) {
      const Boundary b = trimmed(graph, {graph.node_inputs(kept[marker.node_index()]), current.outputs});
      const bool passed = reducer.check(b, "inputs", marker.remaining());
      marker.step(passed, graph.nodes_of(b).size());
    }
    if (marker.best_bad()) current = trimmed(graph, {graph.node_inputs(kept[*marker.best_bad()]), current.outputs});
    VKG_FINISH("Finished reducing model inputs: " << graph.describe(current));
  }

  // Pruning moves the outputs (sink nodes) or the inputs (source nodes) only where the user lets reduce move them.
  if (options.prune && (options.reduce_outputs || options.reduce_inputs) && graph.nodes_of(current).size() > 1) {
    VKG_START("Pruning single nodes at the edges of " << graph.describe(current));
    for (bool changed = true; changed && graph.nodes_of(current).size() > 1;) {
      changed = false;
      const std::vector<size_t> kept = graph.nodes_of(current);
      for (auto it = kept.rbegin(); it != kept.rend() && !changed; ++it) {
        const std::optional<Boundary> candidates[] = {
            options.reduce_outputs ? graph.without_sink(current, *it) : std::nullopt,
            options.reduce_inputs ? graph.without_source(current, *it) : std::nullopt};
        for (const std::optional<Boundary>& candidate : candidates) {
          if (!candidate) continue;
          const Boundary b = trimmed(graph, *candidate);
          if (!reducer.check(b, "prune " + graph.node_name(*it), static_cast<int>(kept.size()))) {
            current = b;
            changed = true;
            break;
          }
        }
      }
    }
    VKG_FINISH("Finished pruning: " << graph.describe(current));
  }

  result.bad = current;
  result.bad_nodes = graph.nodes_of(current).size();
  result.good = reducer.min_good(result.bad_nodes);
  return result;
}

}  // namespace vkg::debug
