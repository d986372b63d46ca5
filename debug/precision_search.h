// `debug precision` as library code: finds how many layers (from the start
// or from the end of the network) must run at the higher precision for the
// check to pass, then, with `prune`, drops marked layers that turn out not to
// matter. Building the engine for a set of marked layers is the caller's job.
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

}  // namespace vkg::debug
