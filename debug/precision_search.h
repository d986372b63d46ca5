// `debug precision` as library code. Two searches:
//  - minimal_precision_set: a 1-minimal set of layers to run at the higher
//    precision (the check passes, and fails when any one of them is dropped),
//    starting from the layers an fp16-risk analysis flags;
//  - search_precision (Polygraphy's modes): how many layers from the start or
//    from the end of the network must run at the higher precision, then, with
//    `prune`, drops marked layers that turn out not to matter.
// Building the engine for a set of marked layers is the caller's job.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "debug/iteration_loop.h"
#include "debug/markers.h"

namespace vkg::debug {

struct PrecisionSearchOptions {
  SearchMode mode = SearchMode::Bisect;
  bool forward = true;  // mark layers from the network inputs (false: from the outputs)
  bool prune = false;   // afterwards, try unmarking each marked layer
};

// Writes the iteration artifact for the layers named (indices into the candidate layer list).
using MarkLayersFn = std::function<void(const std::vector<size_t>& marked)>;

// The marked layers of the passing configuration (indices into `layers`, in
// network order), or nullopt when no configuration passed. Throws StopRequested
// when the user stops the session.
std::optional<std::vector<size_t>> search_precision(const std::vector<std::string>& layers,
                                                    const std::string& precision_name, IterationLoop& loop,
                                                    const PrecisionSearchOptions& options, const MarkLayersFn& make);

// What an iteration that marks `marked` tries ("2 layer(s) in float32: conv1 conv2"): the debug
// replay's key, the same whether the iteration runs here or in a side-by-side job.
std::string describe_marked(const std::vector<std::string>& layers, const std::vector<size_t>& marked,
                            const std::string& precision);
// The `count` layers marked from the network inputs (`forward`) or outputs, in network order:
// what bisect and linear iteration with that count marks.
std::vector<size_t> select_layers(size_t num_layers, size_t count, bool forward);
// --prune after a search that ran elsewhere (side by side): unmarks each layer of `marked` in
// turn, one iteration each, keeping it unmarked where the check still passes.
std::vector<size_t> prune_marked(const std::vector<std::string>& layers, const std::string& precision_name,
                                 IterationLoop& loop, const std::vector<size_t>& marked, const MarkLayersFn& make);

// A 1-minimal set of marked layers (indices into `layers`, in network order),
// or nullopt when no configuration passed. `risk` holds each layer's fp16-risk
// score (NodeRisk::score: 0 none, below 1 underflow, 1 and above overflow).
//  1. The layers at risk are marked and checked; when that fails, or when none
//     is at risk and no layer marked fails, every layer is marked (nullopt if
//     that fails too). With none at risk, no layer marked is checked first.
//  2. Layers are dropped from the passing set while it still passes: the
//     layers without overflow risk as groups that halve when dropping them
//     fails, the least risky first; then each overflow layer alone.
//  3. Every layer left has been dropped alone from the final set and failed
//     (layers last tried against a larger set are tried again).
// Each configuration is checked once (results are remembered), so on a
// model whose overflow layers the analysis flags exactly, it takes one check
// plus one per flagged layer. Throws StopRequested when the user stops.
std::optional<std::vector<size_t>> minimal_precision_set(const std::vector<std::string>& layers,
                                                         const std::vector<double>& risk,
                                                         const std::string& precision_name, IterationLoop& loop,
                                                         const MarkLayersFn& make);

}  // namespace vkg::debug
