// Which nodes of a graph the Vulkan engine builder can take (`vkgraphy inspect capability`, as
// Polygraphy's `inspect capability` asks TensorRT's parser): each node is built alone, at the
// shapes the graph knows, with the caller's precision options and device profile, and nothing timed.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/engine/builder.h"

namespace vkg {

struct NodeCapability {
  bool supported = false;
  std::string reason;  // why not, from the builder (its first line); "" when supported
};

// Builds `node` of `graph` alone: its runtime inputs (and the outer-scope tensors its subgraphs
// read) become graph inputs with the types and shapes `graph` knows, its constant inputs stay
// weights, its outputs are the outputs. `config` gives the precision options (--fp16, layer
// precisions); tactics are taken in heuristic order (optimization level 0).
NodeCapability node_capability(const Graph& graph, const Node& node, BuilderConfig config,
                               const DeviceProfile& device);

}  // namespace vkg
