// The builder's graph rewrite (DESIGN.md, "Graph optimization"), between
// constant folding and tactic selection. It works on the nodes left to run:
// - no-ops disappear: Identity, inference-mode Dropout, and Reshape, Flatten,
//   Squeeze and Unsqueeze (contiguous data), and a Mul or Div by constant ones
//   that leave the shape alone (x * 1, x / 1: bit for bit x) make their output
//   an alias of their input, sharing its device buffer;
// - a Conv, ConvTranspose, Gemm or MatMul with constant weights absorbs a
//   following BatchNormalization, and Add, Sub, Mul or Div by a per-channel or
//   single-element constant (bias, learnable scale), into new weights;
// - a float Add, Sub, Mul or Div absorbs a following Add, Sub, Mul or Div of
//   its result with a tensor of the output's shape or a single element, and
//   then one more (an elementwise chain in one dispatch: x * s + r, or
//   x * s + x + Resize(y) with the upsampling below); the layer runs where its
//   last node stood, so that a chained operand computed after the first op exists;
// - a Conv, ConvTranspose, Gemm or MatMul, or a float Add, Sub, Mul or Div
//   (with its chained op), then absorbs a following activation
//   (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish or its pattern
//   x*Clip(x+3,0,6)/6, Tanh, GELU as Gelu or its Erf pattern, x*HardSigmoid(x),
//   x*Sigmoid(x)), which its shader
//   applies as it stores (shaders/common/epilogue.glsl), and after it (or
//   with no activation: attention scores scaled after their MatMul) any Add,
//   Sub, Mul or Div by single-element constants (a scale and shift the
//   epilogue applies after the activation).
// - a float Add, Sub, Mul or Div absorbs a Resize (or Upsample) that it alone reads, where the
//   Resize upsamples the last two axes by whole factors in nearest mode (input o / factor for
//   output o) and the op's other operand has the output's shape: the layer reads the Resize's
//   input through the factors (an FPN's top-down Add(lateral, Resize(coarser))), and the
//   upsampled tensor is never written. The op may be a chained one; one upsampled
//   operand per layer.
// - a GlobalAveragePool read only by a pointwise Conv (1x1 kernel, one group, unit strides, no
//   padding) whose result, after what that Conv absorbs as above, is read only by another pointwise
//   Conv, becomes one layer with both (a squeeze-and-excitation gate: pool, reduce, expand), which
//   one dispatch computes (squeeze_gate below).
// - a ConvTranspose whose kernel equals its strides (2-D, one group, no padding, dilation or output
//   padding), after what it absorbs as above, read only by another such ConvTranspose becomes one
//   layer with it and what that one absorbs (transpose_pair below): the upsampling head of a text
//   detector (DBNet, PP-OCR det), whose larger intermediate tensor is then never written.
// - LayerNormalization written out over a suffix of the axes (ReduceMean, Sub, Pow 2 or a Mul of
//   the difference by itself, ReduceMean, Add of a constant epsilon, Sqrt, Div, then optionally a
//   Mul and an Add by constants that vary at most along the normalized axes: how exporters of
//   opsets before 17 write it, PP-OCRv4 rec among them) becomes one LayerNormalization layer, the
//   scale and shift expanded to the normalized shape.
// - a Transpose of the last two axes read only by a MatMul (both of whose inputs are runtime
//   tensors) is read by it with those axes' strides swapped (fold-transpose): attention's K^T.
// A fused layer is named after the nodes it holds ("conv1+bn1") and remembers
// them, so that every user-facing file and flag can speak in ONNX node names.
// A tensor the user reads (a model output or a marked tensor) is never fused
// away or aliased: the node producing it stays a layer of its own.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/engine/rewrites.h"
#include "runtime/engine/tactic.h"

namespace vkg {

// The fused activation kinds: specialization constant 20 of the shaders (shaders/common/epilogue.glsl).
enum class Activation : uint32_t {
  None = 0,
  Relu = 1,
  Clip = 2,
  LeakyRelu = 3,
  Sigmoid = 4,
  HardSigmoid = 5,
  HardSwish = 6,
  Tanh = 7,
  Gelu = 8,
  MulHardSigmoid = 9,
  MulSigmoid = 10,
};
struct FusedActivation {
  Activation kind = Activation::None;
  float alpha = 0, beta = 0;
  // Applied after the activation: v * post_scale + post_shift (specialization constants 23, 24).
  float post_scale = 1, post_shift = 0;
};
// The specialization constants 20-24 that make a shader's epilogue (shaders/common/epilogue.glsl)
// apply `a`; the scale and shift only where they are not 1 and 0.
std::vector<SpecValue> epilogue_spec(const FusedActivation& a);

// A chained elementwise op (the second or third op of an elementwise chain): the
// fused node's third (fourth) input is its other operand; operand_first when that
// operand is the op's first input (v = op(D, v)), else v = op(v, D). Carried as the
// attributes "vkgraphy.chain_op" and "vkgraphy.chain_operand_first" ("vkgraphy.chain_op2",
// "vkgraphy.chain_operand_first2" for the second chained op).
struct ChainedOp {
  std::string op;  // Add, Sub, Mul or Div
  bool operand_first = false;
};
std::vector<ChainedOp> chained_ops(const Node& node);  // none, one or two

// A binary op that absorbed a nearest upsampling of one operand (graph_optimizer.h): that
// operand (`input`: 0 or 1, or 2 or 3 for a chained op's) is the Resize's input, read at
// (h / factor_h, w / factor_w) of its last two axes. Carried as the attribute
// "vkgraphy.upsample" = [input, factor_h, factor_w].
struct UpsampledOperand {
  size_t input = 0;
  int64_t factor_h = 1, factor_w = 1;
};
std::optional<UpsampledOperand> upsampled_operand(const Node& node);
// True when the fused MatMul `node` reads input `input` transposed (fold-transpose: its last two
// axes swapped; the tensor bound is the Transpose's input).
bool reads_transposed(const Node& node, size_t input);

// A fused node carries its activation as attributes: "vkgraphy.activation" (the kind), "vkgraphy.alpha",
// "vkgraphy.beta", and kPostScaleAttr and kPostShiftAttr (when not 1 and 0). nullopt for a node
// without one.
std::optional<FusedActivation> fused_activation(const Node& node);
inline constexpr const char* kPostScaleAttr = "vkgraphy.post_scale";
inline constexpr const char* kPostShiftAttr = "vkgraphy.post_shift";

// A GlobalAveragePool that absorbed a squeeze-and-excitation gate (the header's fusion): inputs X,
// W1 [C1][C], B1 [C1], W2 [C2][C1], B2 [C2] (the two pointwise Convs' folded weights), output
// [N][C2][1...]; the first Conv's activation (kind None when it has none) is carried as the
// attributes "vkgraphy.gate", "vkgraphy.gate_alpha", "vkgraphy.gate_beta",
// "vkgraphy.gate_post_scale" and "vkgraphy.gate_post_shift", the second's as fused_activation's.
// nullopt for a node that is not a gate.
std::optional<FusedActivation> squeeze_gate(const Node& node);

// A ConvTranspose that absorbed a second one (the header's fusion): inputs X, W1 [C][C1][kh1][kw1],
// B1 [C1], W2 [C1][C2][kh2][kw2], B2 [C2] (folded weights), the first's attributes, output
// [N][C2][H * kh1 * kh2][W * kw1 * kw2]; the first's activation (kind None when it has none) is
// carried as the attributes "vkgraphy.pair", "vkgraphy.pair_alpha", "vkgraphy.pair_beta",
// "vkgraphy.pair_post_scale" and "vkgraphy.pair_post_shift", the second kernel as
// "vkgraphy.pair_kernel", the second's activation as fused_activation's. nullopt for a node that
// is not a pair.
struct TransposePair {
  FusedActivation inner;
  std::vector<int64_t> kernel;  // the second ConvTranspose's [kh2, kw2] (its strides)
};
std::optional<TransposePair> transpose_pair(const Node& node);

struct OptimizedLayer {
  Node node;                       // what the tactics see: a model node, or a fused one (folded weights)
  std::vector<std::string> nodes;  // ONNX node names held, in graph order (one for an unfused node)
};

struct OptimizedGraph {
  std::vector<OptimizedLayer> layers;          // in graph order
  std::map<std::string, std::string> aliases;  // tensor -> the tensor whose buffer it shares
  std::map<std::string, Tensor> constants;     // weights made by folding, named "<layer>:<input>"
  std::vector<std::string> removed;            // no-op nodes that became aliases
  std::vector<AppliedRewrite> rewrites;        // every rewrite applied, in the order the layers come out
};

struct GraphOptimizerOptions {
  // The rewrites that may apply (rewrites.h); with fusion off, every node is a layer of its own (--no-fusion).
  RewriteFilter rewrites;
  std::set<std::string> keep_tensors;  // tensors read by the user: never aliased or fused away
  std::function<std::optional<Shape>(const std::string&)> shape_of;  // a tensor's static shape, nullopt when unknown
  std::function<bool(const std::string&)> is_float;                  // a tensor of a float type (false when unknown)
  int64_t opset = 0;  // the model's (Resize's parameters depend on it); 0: Resizes are not fused
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
