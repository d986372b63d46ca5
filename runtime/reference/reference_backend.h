// The CPU reference backend: runs a Graph node by node with the reference
// kernels. It is the oracle every other backend is compared against.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/reference/kernel.h"

namespace vkg {

using TensorMap = std::map<std::string, Tensor>;

// Called after each node of the top-level graph has run, with its index in
// graph.nodes, the node, its inputs (nullptr for omitted ones; initializers included) and its outputs.
// The tensors live only for the call: an observer keeps statistics, not values.
using NodeObserver = std::function<void(size_t index, const Node& node, const std::vector<const Tensor*>& inputs,
                                        const std::vector<Tensor>& outputs)>;

class ReferenceBackend {
 public:
  // Throws Error listing every node whose op has no reference kernel.
  explicit ReferenceBackend(const Graph& graph);

  // Runs the graph. `inputs` must hold every graph input. Returns the tensors named in
  // `outputs` (graph outputs when empty). Any tensor of the graph may be requested.
  // With an observer, it sees every node as it runs, while tensors are freed
  // after their last use as in any run.
  TensorMap run(const TensorMap& inputs, const std::vector<std::string>& outputs = {},
                const NodeObserver& observer = nullptr) const;

  // Ops of the graph (and its subgraphs) that have no reference kernel ("Op (node names)"),
  // empty if all run.
  static std::vector<std::string> unsupported_ops(const Graph& graph);

 private:
  const Graph& graph_;
};

// Runs a Graph node by node on demand, keeping each tensor only while something
// still needs it: a later node, or a hold the caller declared. For callers that
// walk the graph's values in order without keeping them all (per-layer isolation).
class ReferenceStepper {
 public:
  // `inputs` must hold every graph input (checked as ReferenceBackend::run does).
  // `holds` says how many times the caller will release() each tensor; a tensor
  // neither a later node nor a hold needs is freed as soon as it is produced or used.
  // Throws Error listing the ops without a reference kernel.
  ReferenceStepper(const Graph& graph, const TensorMap& inputs, std::map<std::string, int> holds);

  // The value of `name` (a graph input, an initializer or a node output), running
  // nodes in graph order until it is produced; nullptr when the graph never
  // produces it or it was already freed.
  const Tensor* value(const std::string& name);
  // Ends one of the caller's holds on `name`.
  void release(const std::string& name);
  // How many computed tensors are alive now (for tests of the freeing).
  size_t live() const { return values_.size(); }

 private:
  void run_next();
  void drop_if_unused(const std::string& name);

  const Graph& graph_;
  std::map<std::string, Tensor> values_;
  std::map<std::string, int> uses_;              // remaining node reads plus holds, per tensor
  std::vector<std::vector<std::string>> reads_;  // per node, each tensor once
  size_t next_ = 0;
};

// Runs one node on the given inputs (nullptr for omitted ones). Used by constant folding;
// a node with subgraphs needs `subgraphs` (ReferenceBackend::run provides it).
std::vector<Tensor> run_reference_node(const Node& node, int64_t opset, const std::vector<const Tensor*>& inputs,
                                       const SubgraphRunner* subgraphs = nullptr);

}  // namespace vkg
