// The builder's graph rewrite (DESIGN.md, "Graph optimization"), between
// constant folding and tactic selection. It works on the nodes left to run:
// - no-ops disappear: Identity, inference-mode Dropout, and Reshape, Flatten,
//   Squeeze and Unsqueeze (contiguous data) make their output an alias of
//   their input, sharing its device buffer;
// - a Conv, ConvTranspose or Gemm with constant weights absorbs a following
//   bias Add and BatchNormalization into new weights.
// A fused layer is named after the nodes it holds ("conv1+bn1") and remembers
// them, so that every user-facing file and flag can speak in ONNX node names.
// A tensor the user reads (a model output or a marked tensor) is never fused
// away or aliased: the node producing it stays a layer of its own.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/graph.h"

namespace vkg {

struct OptimizedLayer {
  Node node;                       // what the tactics see: a model node, or a fused one (folded weights)
  std::vector<std::string> nodes;  // ONNX node names held, in graph order (one for an unfused node)
};

struct OptimizedGraph {
  std::vector<OptimizedLayer> layers;           // in graph order
  std::map<std::string, std::string> aliases;   // tensor -> the tensor whose buffer it shares
  std::map<std::string, Tensor> constants;      // weights made by folding, named "<layer>:<input>"
  std::vector<std::string> removed;             // no-op nodes that became aliases
};

struct GraphOptimizerOptions {
  bool fusion = true;                  // false: every node is a layer of its own (--no-fusion)
  std::set<std::string> keep_tensors;  // tensors read by the user: never aliased or fused away
};

// `nodes` are the graph's nodes left to run (unique names, graph order);
// `constant` returns a tensor's build-time value or nullptr. Only float32
// weights are folded. Layers keep their nodes' tensor names (an alias's
// consumers still see its own shape); the builder resolves aliases to buffers.
OptimizedGraph optimize_graph(const std::vector<const Node*>& nodes,
                              const std::function<const Tensor*(const std::string&)>& constant,
                              const GraphOptimizerOptions& options);

// True for ops that only move or copy data (no arithmetic): they never round
// what passes through them, so the builder runs them in the precision their
// input already has instead of inserting reformats around them.
bool moves_data_only(const std::string& op);

}  // namespace vkg
