// The inside of optimize_graph (graph_optimizer.h), shared by the files that
// hold its rewrites: graph_optimizer.cpp (the driver: no-ops, then one layer
// per remaining node), graph_fold.cpp (bias and BatchNormalization folding into
// a producer's weights), graph_activation.cpp (the activation patterns and the
// attributes a fused layer carries), graph_tail.cpp (what a producer absorbs
// after it: folds, elementwise chains, upsampled operands, activation, scale
// and shift) and graph_patterns.cpp (the multi-node layers: squeeze gate,
// ConvTranspose pair, LayerNormalization). Not an interface of the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/engine/graph_optimizer.h"

namespace vkg::graph_rewrite {

using ConstantFn = std::function<const Tensor*(const std::string&)>;

bool is_binary(const Node& n, const std::string& op);
// The other input of a binary node that reads `x` once.
std::string other_input(const Node& n, const std::string& x);
void set_float_attr(Node& n, const char* name, float value);

bool is_arithmetic(const Node& n);
bool scalar_near(const Tensor* t, double value);

// ---------------------------------------------------------------------------
// Folding into a producer's weights (graph_fold.cpp)

// A per-channel affine map y*scale + shift over `channels` channels.
struct ChannelAffine {
  std::vector<float> scale, shift;
};

// The affine map of a consumer that a producer with `channels` output channels on
// axis `axis` of a rank-`rank` output can absorb: a BatchNormalization in
// inference mode (channels on axis 1), or an Add, Sub, Mul or Div (by) a
// constant that varies at most along the channel axis.
std::optional<ChannelAffine> channel_affine(const Node& n, const std::string& x, int64_t channels, size_t axis,
                                            size_t rank, const ConstantFn& constant);

// A producer that can absorb per-channel affine maps into its weights.
class FoldableProducer {
 public:
  // nullopt when `n` is not a Conv, ConvTranspose, Gemm or MatMul with float32
  // constant weights (and bias), or its output channels cannot be located.
  static std::optional<FoldableProducer> make(const Node& n, const ConstantFn& constant, int output_rank);

  int64_t channels() const { return channels_; }
  size_t axis() const { return axis_; }
  size_t rank() const { return rank_; }

  void absorb(const ChannelAffine& a);

  // The fused node, named `name`, writing `output`; its folded weights go into `constants`.
  Node finish(const std::string& name, const std::string& output, std::map<std::string, Tensor>& constants) const;

  // The folded weights and bias, as `constants[weights]` and `constants[bias]`.
  void add_constants(const std::string& weights, const std::string& bias,
                     std::map<std::string, Tensor>& constants) const;

  // A Conv with a 1x1 (x 1 ...) kernel, one group, unit strides and no padding: on a tensor of
  // 1x1 planes (a pooled one), a matrix-vector product of its weights [C_out][C_in].
  bool pointwise() const;
  int64_t in_channels() const { return weights_.shape()[1]; }

  // A 2-D ConvTranspose of one group whose kernel equals its strides, without padding, dilation,
  // output padding or output shape: every output takes one tap of one input (an upsampling).
  bool upsampling_transpose() const;
  const Shape& weight_shape() const { return weights_.shape(); }

 private:
  Node node_;
  Tensor weights_;
  std::vector<float> bias_;
  int64_t channels_ = 0;
  size_t axis_ = 1;
  size_t rank_ = 0;
};

// ---------------------------------------------------------------------------
// The attributes of a fused layer (graph_activation.cpp)

// Per chained op (the first, the second): its op type and its operand's side.
inline constexpr const char* kChainOpAttrs[] = {"vkgraphy.chain_op", "vkgraphy.chain_op2"};
inline constexpr const char* kChainOperandFirstAttrs[] = {"vkgraphy.chain_operand_first",
                                                          "vkgraphy.chain_operand_first2"};

inline constexpr const char* kUpsampleAttr = "vkgraphy.upsample";
// The inputs of a MatMul that it reads transposed (its last two axes swapped), each from a Transpose's input.
inline constexpr const char* kTransposedInputsAttr = "vkgraphy.transposed_inputs";
// The attributes that carry a FusedActivation: the layer's own (fused_activation) and the hidden
// one of a squeeze-and-excitation gate (squeeze_gate).
struct ActivationAttrs {
  const char *kind, *alpha, *beta, *post_scale, *post_shift;
};
inline constexpr ActivationAttrs kActivationAttrs{"vkgraphy.activation", "vkgraphy.alpha", "vkgraphy.beta",
                                                  kPostScaleAttr, kPostShiftAttr};
inline constexpr ActivationAttrs kGateAttrs{"vkgraphy.gate", "vkgraphy.gate_alpha", "vkgraphy.gate_beta",
                                            "vkgraphy.gate_post_scale", "vkgraphy.gate_post_shift"};
inline constexpr ActivationAttrs kPairAttrs{"vkgraphy.pair", "vkgraphy.pair_alpha", "vkgraphy.pair_beta",
                                            "vkgraphy.pair_post_scale", "vkgraphy.pair_post_shift"};
inline constexpr const char* kPairKernelAttr = "vkgraphy.pair_kernel";

void set_activation_attrs(Node& n, const FusedActivation& a, const ActivationAttrs& names);
std::optional<FusedActivation> activation_attrs(const Node& node, const ActivationAttrs& names);

// ---------------------------------------------------------------------------
// The rewrite of one graph

// The nodes left to run that read each tensor, as the fusion sees them: none
// for a tensor the user reads, and none once one of them has been absorbed.
struct Consumers {
  const std::vector<const Node*>& kept;
  const std::map<std::string, std::vector<size_t>>& by_tensor;
  const std::vector<bool>& absorbed;
  const std::set<std::string>& keep;

  // The consumers of `x` (empty when `x` is read by the user).
  std::vector<size_t> of(const std::string& x) const {
    if (keep.count(x)) return {};
    auto it = by_tensor.find(x);
    if (it == by_tensor.end()) return {};
    for (size_t i : it->second)
      if (absorbed[i]) return {};
    return it->second;
  }
  // The single consumer of `x` with op `op`, or npos.
  size_t single(const std::string& x, const std::string& op) const {
    const std::vector<size_t> c = of(x);
    return c.size() == 1 && kept[c[0]]->op_type == op ? c[0] : SIZE_MAX;
  }
};

// The activation applied to `x` by the nodes that consume it: its kind and the nodes it spans (the
// last one writes the result).
std::optional<std::pair<FusedActivation, std::vector<size_t>>> match_activation(const std::string& x,
                                                                                const Consumers& consumers,
                                                                                const ConstantFn& constant);

// A fused layer's name: the names of the nodes it holds, joined by '+'.
std::string layer_name(const std::vector<std::string>& held);

// One run of optimize_graph: the nodes left after the no-ops (`kept`), who reads what, and the
// nodes absorbed so far, which the rewrites share. Its members are named as the steps use them.
class GraphRewriter {
 public:
  GraphRewriter(const std::vector<const Node*>& nodes, const ConstantFn& constant,
                const GraphOptimizerOptions& options);
  OptimizedGraph run();

 private:
  // The op that a binary layer writing `x` can chain (the header's elementwise chains): its node,
  // its other operand and, where that operand is a nearest upsampling it absorbed, the Resize's
  // index (the layer then reads the Resize's input through the factors). The operand exists when
  // the fused layer runs: the layer runs where its last node stood.
  struct Chain {
    size_t node = 0;
    std::string operand;
    std::optional<size_t> resize;
  };
  // What the node at `i` absorbs after it (the header's folds, chain, activation and scale and
  // shift after it), without marking anything absorbed yet.
  struct Tail {
    std::vector<size_t> absorbs;    // the nodes absorbed after the head, in graph order
    std::vector<std::string> held;  // the head's name, then theirs
    std::string output;             // the tensor the layer writes
    std::optional<FoldableProducer> producer;
    bool folded = false;                   // the producer's weights absorbed a bias or BatchNormalization
    std::vector<AppliedRewrite> rewrites;  // what absorbed each node after the head (their layer not yet set)
    std::vector<Chain> chains;             // at most two
    std::optional<FusedActivation> activation;
    // Where the layer runs: where its last node stood (a chained operand may be computed after the head).
    size_t position() const { return absorbs.empty() ? 0 : *std::max_element(absorbs.begin(), absorbs.end()); }
  };

  // graph_optimizer.cpp: the driver and what every step asks.
  std::string resolve(const std::string& name) const;
  bool allowed(RewriteKind kind, const std::string& subject, const std::vector<std::string>& involved) const;
  // Records `rewrites`, which made `layer`.
  void commit(std::vector<AppliedRewrite> rewrites, const std::string& layer);
  std::optional<Shape> shape_of(const std::string& t) const;
  int rank_of(const std::string& t) const;
  bool is_float(const std::string& t) const;
  void remove_noops();
  void count_consumers();
  std::optional<OptimizedLayer> match_pattern(size_t i);
  // The layer of the producer or binary op at `i` with its tail, and where it runs.
  std::pair<size_t, OptimizedLayer> fuse_tail(size_t i);

  // graph_tail.cpp
  void find_upsamplings();
  void find_transposed_operands();
  // `upsampling` says whether the layer already reads one operand through an upsampling (only one may).
  std::optional<Chain> match_chain(const std::string& x, bool upsampling);
  Tail tail_of(size_t i);

  // graph_patterns.cpp: each of the node at `i` with the nodes it spans as one layer (marked
  // absorbed); nullopt where the pattern does not hold.
  std::optional<OptimizedLayer> match_gate(size_t i);
  std::optional<OptimizedLayer> match_transpose_pair(size_t i);
  std::optional<OptimizedLayer> match_layer_norm(size_t i);

  const std::vector<const Node*>& nodes;
  const ConstantFn& constant;
  const GraphOptimizerOptions& options;
  OptimizedGraph out;
  std::vector<const Node*> kept;
  // Consumers of each tensor among the remaining nodes.
  std::map<std::string, std::vector<size_t>> consumers;
  std::vector<bool> absorbed;
  const Consumers users{kept, consumers, absorbed, options.keep_tensors};
  // Nearest upsamplings that a binary op reads through (the header's Resize fusion): the binary
  // node's index -> the Resize's index and the attribute's value.
  std::map<size_t, std::pair<size_t, std::vector<int64_t>>> upsampled;
  // Transposes of the last two axes that a MatMul reads through (fold-transpose): the MatMul's
  // index -> each Transpose's index and the input it fed.
  std::map<size_t, std::vector<std::pair<size_t, size_t>>> transposed;
};

}  // namespace vkg::graph_rewrite
