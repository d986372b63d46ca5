// The interface of a reference (CPU) kernel: one plain function per ONNX op.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

// Runs a subgraph of the node being executed (an If branch, a Loop or Scan body): its
// formal inputs bound to `inputs` in order, the names it does not define read from the
// graphs that enclose it. Returns the subgraph's outputs in order.
using SubgraphRunner = std::function<std::vector<Tensor>(const Graph& body, const std::vector<Tensor>& inputs)>;

// What a kernel sees of one node execution.
struct KernelContext {
  const Node& node;
  int64_t opset;                        // version of the default ONNX domain
  std::vector<const Tensor*> inputs;    // nullptr for an omitted optional input
  // Set for nodes with subgraphs when the backend runs a whole graph; null in
  // one-node runs (constant folding, which never folds such nodes).
  const SubgraphRunner* run_subgraph = nullptr;

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // Throws Error naming the node when the input is absent.
  const Tensor& input(size_t i) const;
  size_t num_outputs() const { return node.outputs.size(); }
  // Runs a subgraph; throws Error naming the node when subgraphs cannot run here.
  std::vector<Tensor> run(const Graph& body, const std::vector<Tensor>& inputs) const;
};

// Computes all outputs of the node (at least as many as the node declares that are
// not omitted; extra trailing ones are dropped). Throws Error on invalid inputs or
// attributes, with a message naming the node.
using RefKernel = std::function<std::vector<Tensor>(const KernelContext&)>;

class OpRegistry {
 public:
  // Throws Error when the op already has a kernel.
  void add(const std::string& op_type, RefKernel kernel);
  // nullptr when the op has no reference kernel.
  const RefKernel* find(const std::string& op_type) const;
  std::vector<std::string> op_types() const;  // sorted

  // The registry of all reference kernels.
  static const OpRegistry& reference();

 private:
  std::map<std::string, RefKernel> kernels_;
};

// Each op family file defines one of these and registers its ops in it,
// one `registry.add("Op", kernel)` line per op.
void register_elementwise_ops(OpRegistry& registry);
void register_linalg_ops(OpRegistry& registry);     // Conv, ConvTranspose, Gemm, MatMul, pooling
void register_normalization_ops(OpRegistry& registry);  // norms, softmax, reductions, ArgMax
void register_shape_ops(OpRegistry& registry);      // data movement, shape and constant ops
void register_resize_ops(OpRegistry& registry);     // Resize, Pad
void register_recurrent_ops(OpRegistry& registry);  // RNN, GRU, LSTM
void register_control_flow_ops(OpRegistry& registry);  // If, Loop, Scan
void register_attention_ops(OpRegistry& registry);     // RotaryEmbedding, Attention
void register_grid_sample_ops(OpRegistry& registry);   // GridSample
void register_signal_ops(OpRegistry& registry);        // window functions, MelWeightMatrix, DFT, STFT
void register_detection_ops(OpRegistry& registry);     // NonMaxSuppression, RoiAlign

}  // namespace vkg
