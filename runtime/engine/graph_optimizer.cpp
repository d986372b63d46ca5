#include "runtime/engine/graph_optimizer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/core/resize_sampling.h"

namespace vkg {

namespace {

bool is_noop(const Node& n, const std::function<const Tensor*(const std::string&)>& constant) {
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return false;  // Dropout's mask is asked for
  const std::string& op = n.op_type;
  if (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return true;
  if (op != "Dropout") return false;
  if (n.attr_int("is_test", 1) == 0) return false;  // opset < 7: training unless is_test
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* training = constant(n.inputs[2]);
    return training != nullptr && training->size() == 1 && training->get_as_double(0) == 0.0;
  }
  return true;
}

// The input that a Mul by ones (on either side) or a Div by ones passes through unchanged (x * 1
// and x / 1 are x, bit for bit), where the ones do not broadcast the output past x's shape
// (PP-OCRv4 rec's Swish, x * Sigmoid(x * 1)); nullopt for any other node.
std::optional<size_t> identity_operand(const Node& n, const std::function<const Tensor*(const std::string&)>& constant,
                                       const std::function<std::optional<Shape>(const std::string&)>& shape_of) {
  if ((n.op_type != "Mul" && n.op_type != "Div") || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  for (size_t i = 0; i < (n.op_type == "Mul" ? 2u : 1u); ++i) {
    const Tensor* ones = constant(n.inputs[1 - i]);
    if (ones == nullptr || ones->size() == 0 || constant(n.inputs[i]) != nullptr) continue;
    bool all_ones = true;
    for (int64_t k = 0; k < ones->size() && all_ones; ++k) all_ones = ones->get_as_double(k) == 1.0;
    const std::optional<Shape> x = shape_of(n.inputs[i]), y = shape_of(n.outputs[0]);
    if (all_ones && x && y && *x == *y) return i;
  }
  return std::nullopt;
}

bool is_binary(const Node& n, const std::string& op) { return n.op_type == op && n.inputs.size() == 2; }
// The other input of a binary node that reads `x` once.
std::string other_input(const Node& n, const std::string& x) {
  if (n.inputs[0] == x && n.inputs[1] != x) return n.inputs[1];
  if (n.inputs[1] == x && n.inputs[0] != x) return n.inputs[0];
  return "";
}

void set_float_attr(Node& n, const char* name, float value) {
  Attribute& a = n.attrs[name];
  a.kind = Attribute::Kind::Float;
  a.f = value;
}

// A per-channel affine map y*scale + shift over `channels` channels.
struct ChannelAffine {
  std::vector<float> scale, shift;
};

const Tensor* float_constant(const std::function<const Tensor*(const std::string&)>& constant,
                             const std::string& name) {
  const Tensor* t = name.empty() ? nullptr : constant(name);
  return t != nullptr && t->dtype() == DType::Float32 ? t : nullptr;
}

const Tensor* float_constant(const std::function<const Tensor*(const std::string&)>& constant, const Node& n,
                             size_t i) {
  return i < n.inputs.size() ? float_constant(constant, n.inputs[i]) : nullptr;
}

// The affine map of a consumer that a producer with `channels` output channels on
// axis `axis` of a rank-`rank` output can absorb: a BatchNormalization in
// inference mode (channels on axis 1), or an Add, Sub, Mul or Div (by) a
// constant that varies at most along the channel axis.
std::optional<ChannelAffine> channel_affine(const Node& n, const std::string& x, int64_t channels, size_t axis,
                                            size_t rank,
                                            const std::function<const Tensor*(const std::string&)>& constant) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return std::nullopt;
  if (n.op_type == "BatchNormalization") {
    if (axis != 1 || n.inputs.size() < 5 || n.inputs[0] != x || n.attr_int("training_mode", 0) != 0)
      return std::nullopt;
    const Tensor *scale = float_constant(constant, n, 1), *bias = float_constant(constant, n, 2),
                 *mean = float_constant(constant, n, 3), *var = float_constant(constant, n, 4);
    if (!scale || !bias || !mean || !var) return std::nullopt;
    for (const Tensor* t : {scale, bias, mean, var})
      if (t->size() != channels) return std::nullopt;
    const float eps = n.attr_float("epsilon", 1e-5f);
    ChannelAffine a;
    for (int64_t c = 0; c < channels; ++c) {
      const float s = scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + eps);
      a.scale.push_back(s);
      a.shift.push_back(bias->data<float>()[c] - mean->data<float>()[c] * s);
    }
    return a;
  }
  // Add, Sub, Mul or Div of a constant that varies at most along the channel axis (right-aligned
  // against the output: every other axis is 1).
  if (!is_binary(n, "Add") && !is_binary(n, "Sub") && !is_binary(n, "Mul") && !is_binary(n, "Div")) return std::nullopt;
  const std::string other = other_input(n, x);
  const Tensor* c = float_constant(constant, other);
  if (c == nullptr || c->shape().size() > rank) return std::nullopt;
  const size_t pad = rank - c->shape().size();
  for (size_t d = 0; d < c->shape().size(); ++d) {
    const int64_t dim = c->shape()[d];
    if (dim != 1 && !(pad + d == axis && dim == channels)) return std::nullopt;
  }
  const bool x_first = n.inputs[0] == x;
  if (n.op_type == "Div" && !x_first) return std::nullopt;  // c / x is not affine
  ChannelAffine a;
  for (int64_t k = 0; k < channels; ++k) {
    const float v = c->data<float>()[c->size() == 1 ? 0 : k];
    if (n.op_type == "Div" && !(std::isfinite(1.0f / v) && v != 0.0f)) return std::nullopt;
    float scale = 1.0f, shift = 0.0f;
    if (n.op_type == "Add") shift = v;
    if (n.op_type == "Sub") std::tie(scale, shift) = x_first ? std::make_pair(1.0f, -v) : std::make_pair(-1.0f, v);
    if (n.op_type == "Mul") scale = v;
    if (n.op_type == "Div") scale = 1.0f / v;
    a.scale.push_back(scale);
    a.shift.push_back(shift);
  }
  return a;
}

// A producer that can absorb per-channel affine maps into its weights.
class FoldableProducer {
 public:
  // nullopt when `n` is not a Conv, ConvTranspose, Gemm or MatMul with float32
  // constant weights (and bias), or its output channels cannot be located.
  static std::optional<FoldableProducer> make(const Node& n,
                                              const std::function<const Tensor*(const std::string&)>& constant,
                                              int output_rank) {
    FoldableProducer p;
    p.node_ = n;
    const Tensor* w = float_constant(constant, n, 1);
    if (w == nullptr || n.inputs[0].empty()) return std::nullopt;
    const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    const Tensor* b = has_bias ? float_constant(constant, n, 2) : nullptr;
    if (has_bias && b == nullptr) return std::nullopt;
    p.weights_ = *w;
    if (n.op_type == "Conv" || n.op_type == "ConvTranspose") {
      if (w->rank() < 3) return std::nullopt;
      const int64_t group = n.attr_int("group", 1);
      p.channels_ = n.op_type == "Conv" ? w->shape()[0] : w->shape()[1] * group;
      p.rank_ = size_t(w->rank());
      p.axis_ = 1;
      if (b != nullptr && b->size() != p.channels_) return std::nullopt;
    } else if (n.op_type == "MatMul") {
      // Channels along the last axis of the output; a batched output needs its rank known.
      if (w->rank() != 2 || n.inputs.size() != 2 || output_rank < 2) return std::nullopt;
      p.channels_ = w->shape()[1];
      p.rank_ = size_t(output_rank);
      p.axis_ = p.rank_ - 1;
    } else if (n.op_type == "Gemm") {
      if (w->rank() != 2) return std::nullopt;
      p.channels_ = n.attr_int("transB", 0) ? w->shape()[0] : w->shape()[1];
      p.rank_ = 2;
      p.axis_ = 1;
      // C must broadcast along rows only (shape [N], [1, N] or a scalar).
      if (b != nullptr && !(b->size() == 1 || (b->size() == p.channels_ && b->shape().back() == p.channels_)))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    const float beta = n.op_type == "Gemm" ? n.attr_float("beta", 1.0f) : 1.0f;
    for (int64_t c = 0; c < p.channels_; ++c)
      p.bias_.push_back(b == nullptr ? 0.0f : beta * b->data<float>()[b->size() == 1 ? 0 : c]);
    return p;
  }

  int64_t channels() const { return channels_; }
  size_t axis() const { return axis_; }
  size_t rank() const { return rank_; }

  void absorb(const ChannelAffine& a) {
    float* w = weights_.data<float>();
    const std::vector<int64_t>& shape = weights_.shape();
    const std::string& op = node_.op_type;
    if (op == "Conv") {
      const int64_t per = weights_.size() / shape[0];
      for (int64_t k = 0; k < shape[0]; ++k)
        for (int64_t i = 0; i < per; ++i) w[k * per + i] *= a.scale[size_t(k)];
    } else if (op == "ConvTranspose") {
      const int64_t group = node_.attr_int("group", 1), in_per_group = shape[0] / group, out_per_group = shape[1];
      const int64_t kernel = weights_.size() / (shape[0] * shape[1]);
      for (int64_t c = 0; c < shape[0]; ++c)
        for (int64_t j = 0; j < out_per_group; ++j)
          for (int64_t i = 0; i < kernel; ++i)
            w[(c * out_per_group + j) * kernel + i] *= a.scale[size_t((c / in_per_group) * out_per_group + j)];
    } else {  // Gemm, MatMul: scale column n of op(B)
      const bool trans = node_.op_type == "Gemm" && node_.attr_int("transB", 0) != 0;
      for (int64_t r = 0; r < shape[0]; ++r)
        for (int64_t c = 0; c < shape[1]; ++c) w[r * shape[1] + c] *= a.scale[size_t(trans ? r : c)];
    }
    for (size_t c = 0; c < bias_.size(); ++c) bias_[c] = bias_[c] * a.scale[c] + a.shift[c];
  }

  // The fused node, named `name`, writing `output`; its folded weights go into `constants`.
  Node finish(const std::string& name, const std::string& output, std::map<std::string, Tensor>& constants) const {
    Node n = node_;
    n.name = name;
    n.outputs = {output};
    n.inputs.resize(3);
    // MatMul takes its bias as a third input, which only fused nodes have (runtime/tactics/gemm.cpp).
    const bool gemm = node_.op_type == "Gemm" || node_.op_type == "MatMul";
    n.inputs[1] = name + ":" + (gemm ? "B" : "W");
    n.inputs[2] = name + ":" + (gemm ? "C" : "B");
    add_constants(n.inputs[1], n.inputs[2], constants);
    if (node_.op_type == "Gemm") set_float_attr(n, "beta", 1.0f);  // beta is folded into C
    return n;
  }

  // The folded weights and bias, as `constants[weights]` and `constants[bias]`.
  void add_constants(const std::string& weights, const std::string& bias,
                     std::map<std::string, Tensor>& constants) const {
    constants[weights] = weights_;
    constants[bias] = Tensor::from_vector<float>({channels_}, bias_);
  }

  // A Conv with a 1x1 (x 1 ...) kernel, one group, unit strides and no padding: on a tensor of
  // 1x1 planes (a pooled one), a matrix-vector product of its weights [C_out][C_in].
  bool pointwise() const {
    if (node_.op_type != "Conv" || node_.attr_int("group", 1) != 1) return false;
    const std::vector<int64_t>& w = weights_.shape();
    auto all = [](const std::vector<int64_t>& v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
    };
    return std::all_of(w.begin() + 2, w.end(), [](int64_t k) { return k == 1; }) &&
           all(node_.attr_ints("strides"), 1) && all(node_.attr_ints("pads"), 0);
  }
  int64_t in_channels() const { return weights_.shape()[1]; }

  // A 2-D ConvTranspose of one group whose kernel equals its strides, without padding, dilation,
  // output padding or output shape: every output takes one tap of one input (an upsampling).
  bool upsampling_transpose() const {
    if (node_.op_type != "ConvTranspose" || node_.attr_int("group", 1) != 1 || weights_.rank() != 4 ||
        node_.has_attr("output_shape") || node_.attr_string("auto_pad", "NOTSET") != "NOTSET")
      return false;
    const std::vector<int64_t> kernel(weights_.shape().begin() + 2, weights_.shape().end());
    const std::vector<int64_t> strides = node_.attr_ints("strides");
    auto zeros_or_ones = [&](const char* attr, int64_t v) {
      const std::vector<int64_t> a = node_.attr_ints(attr);
      return std::all_of(a.begin(), a.end(), [&](int64_t e) { return e == v; });
    };
    return strides == kernel && zeros_or_ones("pads", 0) && zeros_or_ones("dilations", 1) &&
           zeros_or_ones("output_padding", 0) &&
           (!node_.has_attr("kernel_shape") || node_.attr_ints("kernel_shape") == kernel);
  }
  const Shape& weight_shape() const { return weights_.shape(); }

 private:
  Node node_;
  Tensor weights_;
  std::vector<float> bias_;
  int64_t channels_ = 0;
  size_t axis_ = 1;
  size_t rank_ = 0;
};

// Per chained op (the first, the second): its op type and its operand's side.
constexpr const char* kChainOpAttrs[] = {"vkgraphy.chain_op", "vkgraphy.chain_op2"};
constexpr const char* kChainOperandFirstAttrs[] = {"vkgraphy.chain_operand_first", "vkgraphy.chain_operand_first2"};

bool is_arithmetic(const Node& n) {
  return (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") &&
         n.inputs.size() == 2 && n.outputs.size() == 1 && !n.outputs[0].empty();
}

constexpr const char* kUpsampleAttr = "vkgraphy.upsample";
// The attributes that carry a FusedActivation: the layer's own (fused_activation) and the hidden
// one of a squeeze-and-excitation gate (squeeze_gate).
struct ActivationAttrs {
  const char *kind, *alpha, *beta, *post_scale, *post_shift;
};
constexpr ActivationAttrs kActivationAttrs{"vkgraphy.activation", "vkgraphy.alpha", "vkgraphy.beta", kPostScaleAttr,
                                           kPostShiftAttr};
constexpr ActivationAttrs kGateAttrs{"vkgraphy.gate", "vkgraphy.gate_alpha", "vkgraphy.gate_beta",
                                     "vkgraphy.gate_post_scale", "vkgraphy.gate_post_shift"};
constexpr ActivationAttrs kPairAttrs{"vkgraphy.pair", "vkgraphy.pair_alpha", "vkgraphy.pair_beta",
                                     "vkgraphy.pair_post_scale", "vkgraphy.pair_post_shift"};
constexpr const char* kPairKernelAttr = "vkgraphy.pair_kernel";

void set_activation_attrs(Node& n, const FusedActivation& a, const ActivationAttrs& names) {
  Attribute& kind = n.attrs[names.kind];
  kind.kind = Attribute::Kind::Int;
  kind.i = int64_t(a.kind);
  set_float_attr(n, names.alpha, a.alpha);
  set_float_attr(n, names.beta, a.beta);
  if (a.post_scale != 1.0f || a.post_shift != 0.0f) {
    set_float_attr(n, names.post_scale, a.post_scale);
    set_float_attr(n, names.post_shift, a.post_shift);
  }
}

std::optional<FusedActivation> activation_attrs(const Node& node, const ActivationAttrs& names) {
  if (!node.has_attr(names.kind)) return std::nullopt;
  FusedActivation a;
  a.kind = Activation(uint32_t(node.attr_int(names.kind)));
  a.alpha = node.attr_float(names.alpha, 0.0f);
  a.beta = node.attr_float(names.beta, 0.0f);
  a.post_scale = node.attr_float(names.post_scale, 1.0f);
  a.post_shift = node.attr_float(names.post_shift, 0.0f);
  return a;
}

bool scalar_near(const Tensor* t, double value) {
  return t != nullptr && t->size() == 1 && std::abs(t->get_as_double(0) - value) <= 1e-5 * std::abs(value);
}

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

// The bounds of a Clip: attributes (opset < 11) or constant inputs; nullopt when an input bound is not a constant.
std::optional<std::pair<float, float>> clip_bounds(const Node& n,
                                                   const std::function<const Tensor*(const std::string&)>& constant) {
  float lo = n.attr_float("min", -INFINITY), hi = n.attr_float("max", INFINITY);
  for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
    if (n.inputs[i].empty()) continue;
    const Tensor* bound = constant(n.inputs[i]);
    if (bound == nullptr || bound->size() != 1 || bound->dtype() != DType::Float32) return std::nullopt;
    (i == 1 ? lo : hi) = float(bound->get_as_double(0));
  }
  return std::make_pair(lo, hi);
}

// The activation applied to `x` by the nodes that consume it: its kind and the nodes it spans (the
// last one writes the result).
std::optional<std::pair<FusedActivation, std::vector<size_t>>> match_activation(
    const std::string& x, const Consumers& consumers,
    const std::function<const Tensor*(const std::string&)>& constant) {
  const std::vector<size_t> users = consumers.of(x);
  auto output_of = [&](size_t i) { return consumers.kept[i]->outputs.at(0); };
  if (users.size() == 1) {
    const Node& n = *consumers.kept[users[0]];
    if (n.inputs.empty() || n.inputs[0] != x || n.outputs.size() != 1) return std::nullopt;
    FusedActivation a;
    const std::string& op = n.op_type;
    if (op == "Relu") a.kind = Activation::Relu;
    if (op == "Sigmoid") a.kind = Activation::Sigmoid;
    if (op == "Tanh") a.kind = Activation::Tanh;
    if (op == "HardSwish") a.kind = Activation::HardSwish;
    if (op == "LeakyRelu") a = {Activation::LeakyRelu, n.attr_float("alpha", 0.01f), 0};
    if (op == "HardSigmoid") a = {Activation::HardSigmoid, n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)};
    if (op == "Gelu" && n.attr_string("approximate", "none") == "none") a.kind = Activation::Gelu;
    if (op == "Clip") {
      const std::optional<std::pair<float, float>> bounds = clip_bounds(n, constant);
      if (!bounds) return std::nullopt;
      a = {Activation::Clip, bounds->first, bounds->second};
    }
    if (a.kind == Activation::None) return std::nullopt;
    return std::make_pair(a, std::vector<size_t>{users[0]});
  }
  if (users.size() != 2) return std::nullopt;
  // x * HardSigmoid(x), x * Sigmoid(x): a gate on x and a Mul of x with it.
  for (size_t g = 0; g < 2; ++g) {
    const Node& gate = *consumers.kept[users[g]];
    const Node& mul = *consumers.kept[users[1 - g]];
    if ((gate.op_type != "HardSigmoid" && gate.op_type != "Sigmoid") || !is_binary(mul, "Mul")) continue;
    if (consumers.single(output_of(users[g]), "Mul") != users[1 - g] || other_input(mul, x) != output_of(users[g]))
      continue;
    if (gate.op_type == "Sigmoid")
      return std::make_pair(FusedActivation{Activation::MulSigmoid, 0, 0}, std::vector<size_t>{users[g], users[1 - g]});
    const FusedActivation a{Activation::MulHardSigmoid, gate.attr_float("alpha", 0.2f), gate.attr_float("beta", 0.5f)};
    return std::make_pair(a, std::vector<size_t>{users[g], users[1 - g]});
  }
  // HardSwish, decomposed: x * Clip(x + 3, 0, 6) / 6 (or * 1/6).
  for (size_t s = 0; s < 2; ++s) {
    const size_t add_i = users[s], mul_i = users[1 - s];
    const Node& add = *consumers.kept[add_i];
    if (!is_binary(add, "Add") || !scalar_near(constant(other_input(add, x)), 3.0)) continue;
    const size_t clip_i = consumers.single(output_of(add_i), "Clip");
    if (clip_i == SIZE_MAX || consumers.kept[clip_i]->inputs[0] != output_of(add_i)) continue;
    const std::optional<std::pair<float, float>> bounds = clip_bounds(*consumers.kept[clip_i], constant);
    if (!bounds || bounds->first != 0.0f || bounds->second != 6.0f) continue;
    const Node& mul = *consumers.kept[mul_i];
    if (!is_binary(mul, "Mul") || consumers.single(output_of(clip_i), "Mul") != mul_i ||
        other_input(mul, x) != output_of(clip_i))
      continue;
    const std::vector<size_t> after = consumers.of(output_of(mul_i));
    if (after.size() != 1) continue;
    const Node& scale = *consumers.kept[after[0]];
    const bool div =
        is_binary(scale, "Div") && scale.inputs[0] == output_of(mul_i) && scalar_near(constant(scale.inputs[1]), 6.0);
    const bool times =
        is_binary(scale, "Mul") && scalar_near(constant(other_input(scale, output_of(mul_i))), 1.0 / 6.0);
    if (!div && !times) continue;
    return std::make_pair(FusedActivation{Activation::HardSwish, 0, 0},
                          std::vector<size_t>{add_i, clip_i, mul_i, after[0]});
  }
  // GELU, Erf form: 0.5 * x * (1 + erf(x / sqrt(2))), the scaling of x as a Div or a Mul, the final
  // 0.5 on either side: Mul(x, 1/sqrt2) | Div(x, sqrt2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(0.5).
  for (size_t s = 0; s < 2; ++s) {
    const size_t scale_i = users[s], mul_i = users[1 - s];
    const Node& scale = *consumers.kept[scale_i];
    const bool div = is_binary(scale, "Div") && scale.inputs[0] == x && scalar_near(constant(scale.inputs[1]), M_SQRT2);
    const bool mul = is_binary(scale, "Mul") && scalar_near(constant(other_input(scale, x)), M_SQRT1_2);
    if (!div && !mul) continue;
    const size_t erf_i = consumers.single(output_of(scale_i), "Erf");
    if (erf_i == SIZE_MAX) continue;
    const size_t add_i = consumers.single(output_of(erf_i), "Add");
    if (add_i == SIZE_MAX || !scalar_near(constant(other_input(*consumers.kept[add_i], output_of(erf_i))), 1.0))
      continue;
    if (consumers.single(output_of(add_i), "Mul") != mul_i ||
        other_input(*consumers.kept[mul_i], x) != output_of(add_i))
      continue;
    const size_t half_i = consumers.single(output_of(mul_i), "Mul");
    if (half_i == SIZE_MAX || !scalar_near(constant(other_input(*consumers.kept[half_i], output_of(mul_i))), 0.5))
      continue;
    return std::make_pair(FusedActivation{Activation::Gelu, 0, 0},
                          std::vector<size_t>{scale_i, erf_i, add_i, mul_i, half_i});
  }
  return std::nullopt;
}

}  // namespace

std::vector<SpecValue> epilogue_spec(const FusedActivation& a) {
  std::vector<SpecValue> spec = {
      {20, uint32_t(a.kind)}, {21, std::bit_cast<uint32_t>(a.alpha)}, {22, std::bit_cast<uint32_t>(a.beta)}};
  if (a.post_scale != 1.0f || a.post_shift != 0.0f) {
    spec.push_back({23, std::bit_cast<uint32_t>(a.post_scale)});
    spec.push_back({24, std::bit_cast<uint32_t>(a.post_shift)});
  }
  return spec;
}

std::vector<ChainedOp> chained_ops(const Node& node) {
  std::vector<ChainedOp> ops;
  for (size_t k = 0; k < 2 && node.has_attr(kChainOpAttrs[k]); ++k)
    ops.push_back({node.attr_string(kChainOpAttrs[k], ""), node.attr_int(kChainOperandFirstAttrs[k], 0) != 0});
  return ops;
}

std::optional<UpsampledOperand> upsampled_operand(const Node& node) {
  if (!node.has_attr(kUpsampleAttr)) return std::nullopt;
  const std::vector<int64_t> v = node.attr_ints(kUpsampleAttr);
  VKG_CHECK(v.size() == 3 && v[0] >= 0 && v[0] <= 3 && v[1] >= 1 && v[2] >= 1,
            node.describe() << ": attribute " << kUpsampleAttr << " must be [input (0 to 3), factor_h, factor_w]");
  return UpsampledOperand{size_t(v[0]), v[1], v[2]};
}

std::optional<FusedActivation> fused_activation(const Node& node) { return activation_attrs(node, kActivationAttrs); }

std::optional<FusedActivation> squeeze_gate(const Node& node) { return activation_attrs(node, kGateAttrs); }

std::optional<TransposePair> transpose_pair(const Node& node) {
  const std::optional<FusedActivation> inner = activation_attrs(node, kPairAttrs);
  if (!inner) return std::nullopt;
  const std::vector<int64_t> kernel = node.attr_ints(kPairKernelAttr);
  VKG_CHECK(kernel.size() == 2 && kernel[0] >= 1 && kernel[1] >= 1,
            node.describe() << ": attribute " << kPairKernelAttr << " must be the second kernel's [height, width]");
  return TransposePair{*inner, kernel};
}

bool moves_data_only(const std::string& op) {
  static const std::set<std::string> ops = {"Identity",  "Dropout",      "Reshape",     "Flatten", "Squeeze",
                                            "Unsqueeze", "Transpose",    "Slice",       "Expand",  "Tile",
                                            "Concat",    "Split",        "Pad",         "Gather",  "GatherElements",
                                            "GatherND",  "DepthToSpace", "SpaceToDepth"};
  return ops.count(op) != 0;
}

OptimizedGraph optimize_graph(const std::vector<const Node*>& nodes,
                              const std::function<const Tensor*(const std::string&)>& constant,
                              const GraphOptimizerOptions& options) {
  OptimizedGraph out;
  auto resolve = [&](const std::string& name) {
    auto it = out.aliases.find(name);
    return it == out.aliases.end() ? name : it->second;
  };
  auto allowed = [&](RewriteKind kind, const std::string& subject, const std::vector<std::string>& involved) {
    return options.rewrites.allows(kind, subject, involved);
  };
  // Records `rewrites`, which made `layer`.
  auto commit = [&](std::vector<AppliedRewrite> rewrites, const std::string& layer) {
    for (AppliedRewrite& r : rewrites) {
      r.layer = layer;
      out.rewrites.push_back(std::move(r));
    }
  };
  std::vector<const Node*> kept;
  for (const Node* n : nodes) {
    // The input the node passes through unchanged, if it is a no-op.
    std::optional<size_t> through;
    RewriteKind kind = RewriteKind::NoopAlias;
    if (is_noop(*n, constant) && constant(n->inputs[0]) == nullptr) {
      through = 0;
    } else if (options.shape_of) {
      through = identity_operand(*n, constant, options.shape_of);
      kind = RewriteKind::IdentityArithmetic;
    }
    if (through && !options.keep_tensors.count(n->outputs[0]) && allowed(kind, n->name, {n->name})) {
      out.aliases[n->outputs[0]] = resolve(n->inputs[*through]);
      out.removed.push_back(n->name);
      out.rewrites.push_back({kind, n->name, "", {n->name}});
      continue;
    }
    kept.push_back(n);
  }

  // Consumers of each tensor among the remaining nodes.
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < kept.size(); ++i)
    for (const std::string& in : kept[i]->inputs)
      if (!in.empty()) consumers[resolve(in)].push_back(i);

  std::vector<bool> absorbed(kept.size(), false);
  const Consumers users{kept, consumers, absorbed, options.keep_tensors};
  auto shape_of = [&](const std::string& t) { return options.shape_of ? options.shape_of(t) : std::nullopt; };
  auto rank_of = [&](const std::string& t) {
    const std::optional<Shape> shape = shape_of(t);
    return shape ? int(shape->size()) : -1;
  };
  auto is_float = [&](const std::string& t) { return options.is_float && options.is_float(t); };
  // Nearest upsamplings that a binary op reads through (the header's Resize fusion): the binary
  // node's index -> the Resize's index and the attribute's value.
  std::map<size_t, std::pair<size_t, std::vector<int64_t>>> upsampled;
  for (size_t i = 0; options.rewrites.fusion && options.opset > 0 && i < kept.size(); ++i) {
    const Node& r = *kept[i];
    if ((r.op_type != "Resize" && r.op_type != "Upsample") || r.inputs.empty() || r.outputs.size() != 1) continue;
    const std::vector<size_t> c = users.of(r.outputs[0]);
    if (c.size() != 1 || upsampled.count(c[0]) || !is_arithmetic(*kept[c[0]])) continue;
    const Node& op = *kept[c[0]];
    const std::string other = other_input(op, r.outputs[0]);
    if (other.empty() || !is_float(r.inputs[0]) || !is_float(other) || !is_float(op.outputs[0])) continue;
    const std::optional<Shape> in = shape_of(r.inputs[0]), out = shape_of(r.outputs[0]);
    if (!in || !out || in->size() < 2 || shape_of(other) != out || shape_of(op.outputs[0]) != out) continue;
    std::optional<std::vector<int64_t>> factors;
    try {
      std::string why;
      const std::optional<resize::Params> p = resize::node_params(
          r, options.opset, *in, *out,
          [&](size_t k) {
            const bool given = k < r.inputs.size() && !r.inputs[k].empty();
            const Tensor* value = given ? constant(r.inputs[k]) : nullptr;
            return resize::NodeInput{given && (value == nullptr || value->size() > 0), value};
          },
          why);
      if (p) factors = resize::whole_nearest_factors(*p, *in);
    } catch (const Error&) {
      continue;  // the Resize's own layer reports what is wrong with it
    }
    const size_t rank = in->size();
    if (!factors || !std::all_of(factors->begin(), factors->end() - 2, [](int64_t f) { return f == 1; })) continue;
    if (!allowed(RewriteKind::FuseUpsample, r.name, {r.name, op.name})) continue;
    upsampled[c[0]] = {i, {op.inputs[0] == r.outputs[0] ? 0 : 1, (*factors)[rank - 2], (*factors)[rank - 1]}};
    absorbed[i] = true;
  }
  // The op that a binary layer writing `x` can chain (the header's elementwise chains): its node,
  // its other operand and, where that operand is a nearest upsampling it absorbed, the Resize's
  // index (the layer then reads the Resize's input through the factors). `upsampling` says whether
  // the layer already reads one operand so (only one may). The operand exists when the fused
  // layer runs: the layer runs where its last node stood.
  struct Chain {
    size_t node = 0;
    std::string operand;
    std::optional<size_t> resize;
  };
  auto match_chain = [&](const std::string& x, bool upsampling) -> std::optional<Chain> {
    const std::vector<size_t> c = users.of(x);
    if (c.size() != 1 || !is_arithmetic(*kept[c[0]]) || !is_float(kept[c[0]]->outputs[0])) return std::nullopt;
    const Node& next = *kept[c[0]];
    Chain chain{c[0], other_input(next, x), std::nullopt};
    const std::optional<Shape> out_shape = shape_of(next.outputs[0]), x_shape = shape_of(x);
    if (chain.operand.empty() || !out_shape || !x_shape || *x_shape != *out_shape) return std::nullopt;
    if (const auto up = upsampled.find(c[0]); up != upsampled.end()) {
      // The Resize's output is the operand (x is this layer's own result): it is never written.
      if (upsampling || kept[up->second.first]->outputs[0] != chain.operand) return std::nullopt;
      chain.operand = kept[up->second.first]->inputs[0];
      chain.resize = up->second.first;
      return chain;
    }
    const std::optional<Shape> d_shape = shape_of(chain.operand);
    if (!d_shape || !is_float(chain.operand) || (*d_shape != *out_shape && num_elements(*d_shape) != 1))
      return std::nullopt;
    return chain;
  };

  // What the node at `i` absorbs after it (the header's folds, chain, activation and scale and
  // shift after it), without marking anything absorbed yet.
  struct Tail {
    std::vector<size_t> absorbs;    // the nodes absorbed after the head, in graph order
    std::vector<std::string> held;  // the head's name, then theirs
    std::string output;             // the tensor the layer writes
    std::optional<FoldableProducer> producer;
    bool folded = false;        // the producer's weights absorbed a bias or BatchNormalization
    std::vector<AppliedRewrite> rewrites;  // what absorbed each node after the head (their layer not yet set)
    std::vector<Chain> chains;  // at most two
    std::optional<FusedActivation> activation;
    // Where the layer runs: where its last node stood (a chained operand may be computed after the head).
    size_t position() const { return absorbs.empty() ? 0 : *std::max_element(absorbs.begin(), absorbs.end()); }
  };
  auto tail_of = [&](size_t i) {
    const Node& head = *kept[i];
    const bool binary_op = is_arithmetic(head) && is_float(head.outputs[0]);
    Tail t;
    t.held = {head.name};
    t.output = head.outputs[0];
    auto absorb = [&](size_t k) {
      t.absorbs.push_back(k);
      t.held.push_back(kept[k]->name);
      t.output = kept[k]->outputs[0];
    };
    // Whether the head may absorb the nodes `taken` by a rewrite of `kind`; records it when so.
    auto permit = [&](RewriteKind kind, const std::vector<size_t>& taken) {
      std::vector<std::string> involved{head.name};
      for (size_t k : taken) involved.push_back(kept[k]->name);
      if (!allowed(kind, involved[1], involved)) return false;
      t.rewrites.push_back({kind, involved[1], "", std::move(involved)});
      return true;
    };
    t.producer = binary_op ? std::nullopt : FoldableProducer::make(head, constant, rank_of(head.outputs[0]));
    while (t.producer) {
      const std::vector<size_t> c = users.of(t.output);
      if (c.size() != 1) break;
      const Node& next = *kept[c[0]];
      const std::optional<ChannelAffine> affine =
          channel_affine(next, t.output, t.producer->channels(), t.producer->axis(), t.producer->rank(), constant);
      if (!affine || next.outputs.empty() || next.outputs[0].empty()) break;
      if (!permit(next.op_type == "BatchNormalization" ? RewriteKind::FoldBatchNorm : RewriteKind::FoldBias, c))
        break;
      t.producer->absorb(*affine);
      absorb(c[0]);
      t.folded = true;
    }
    bool upsampling = upsampled.count(i) != 0;
    while (binary_op && t.chains.size() < 2) {
      const std::optional<Chain> chain = match_chain(t.output, upsampling);
      if (!chain || !permit(RewriteKind::ElementwiseChain, {chain->node})) break;
      upsampling = upsampling || chain->resize.has_value();
      t.chains.push_back(*chain);
      absorb(chain->node);
    }
    const auto activation = match_activation(t.output, users, constant);
    if (activation && permit(RewriteKind::FuseActivation, activation->second)) {
      t.activation = activation->first;
      for (size_t a : activation->second) absorb(a);
    }
    // Then Add, Sub, Mul or Div by single-element constants (a learnable scale and shift after
    // the activation, as PP-LCNet's blocks have; attention scores scaled after their MatMul, with
    // no activation): v * post_scale + post_shift as the layer stores.
    const int rank = rank_of(t.output);
    while (rank >= 0) {
      const std::vector<size_t> c = users.of(t.output);
      if (c.size() != 1 || kept[c[0]]->outputs.empty() || kept[c[0]]->outputs[0].empty()) break;
      const std::optional<ChannelAffine> post = channel_affine(*kept[c[0]], t.output, 1, 0, size_t(rank), constant);
      if (!post || !is_float(kept[c[0]]->outputs[0]) || !permit(RewriteKind::PostScale, c)) break;
      if (!t.activation) t.activation = FusedActivation{};
      t.activation->post_scale *= post->scale[0];
      t.activation->post_shift = t.activation->post_shift * post->scale[0] + post->shift[0];
      absorb(c[0]);
    }
    return t;
  };
  auto layer_name = [](const std::vector<std::string>& held) {
    std::string name;
    for (const std::string& h : held) name += (name.empty() ? "" : "+") + h;
    return name;
  };
  // A squeeze-and-excitation gate (the header's): the GlobalAveragePool at `i`, then two pointwise
  // Convs with what each absorbs, as one layer (marked absorbed); nullopt where the pattern does
  // not hold.
  auto match_gate = [&](size_t i) -> std::optional<OptimizedLayer> {
    const Node& pool = *kept[i];
    if (pool.op_type != "GlobalAveragePool" || pool.inputs.size() != 1 || pool.outputs.size() != 1 ||
        !is_float(pool.outputs[0]) || rank_of(pool.inputs[0]) < 3)
      return std::nullopt;
    std::vector<std::pair<size_t, Tail>> convs;  // each Conv's index and what it absorbs
    std::string x = pool.outputs[0];
    for (int k = 0; k < 2; ++k) {
      const size_t c = users.single(x, "Conv");
      if (c == SIZE_MAX || kept[c]->inputs[0] != x || !is_float(kept[c]->outputs[0])) return std::nullopt;
      Tail t = tail_of(c);
      if (!t.producer || !t.producer->pointwise() ||
          (k == 1 && t.producer->in_channels() != convs[0].second.producer->channels()))
        return std::nullopt;
      x = t.output;
      convs.emplace_back(c, std::move(t));
    }
    OptimizedLayer layer{pool, {pool.name}};
    for (const auto& [c, t] : convs) layer.nodes.insert(layer.nodes.end(), t.held.begin(), t.held.end());
    if (!allowed(RewriteKind::SqueezeGate, pool.name, layer.nodes)) return std::nullopt;
    for (const auto& [c, t] : convs) {
      absorbed[c] = true;
      for (size_t k : t.absorbs) absorbed[k] = true;
    }
    Node& gate = layer.node;
    gate.name = layer_name(layer.nodes);
    for (const auto& [c, t] : convs) commit(t.rewrites, gate.name);
    commit({{RewriteKind::SqueezeGate, pool.name, "", layer.nodes}}, gate.name);
    gate.outputs = {x};
    gate.inputs = {pool.inputs[0]};
    for (const char* suffix : {"1", "2"}) {
      gate.inputs.push_back(gate.name + ":W" + suffix);
      gate.inputs.push_back(gate.name + ":B" + suffix);
    }
    convs[0].second.producer->add_constants(gate.inputs[1], gate.inputs[2], out.constants);
    convs[1].second.producer->add_constants(gate.inputs[3], gate.inputs[4], out.constants);
    const FusedActivation none;
    set_activation_attrs(gate, convs[0].second.activation.value_or(none), kGateAttrs);
    if (convs[1].second.activation) set_activation_attrs(gate, *convs[1].second.activation, kActivationAttrs);
    return layer;
  };

  // Two upsampling ConvTransposes in a row (a text detector's head: ConvTranspose, BN, Relu,
  // ConvTranspose, Sigmoid), the ConvTranspose at `i` first, with what each absorbs, as one layer
  // (marked absorbed); nullopt where the pattern does not hold.
  auto match_transpose_pair = [&](size_t i) -> std::optional<OptimizedLayer> {
    const Node& head = *kept[i];
    if (head.op_type != "ConvTranspose" || head.outputs.size() != 1 || !is_float(head.outputs[0]) ||
        upsampled.count(i) != 0)
      return std::nullopt;
    Tail first = tail_of(i);
    if (!first.producer || !first.producer->upsampling_transpose()) return std::nullopt;
    const size_t c = users.single(first.output, "ConvTranspose");
    if (c == SIZE_MAX || kept[c]->inputs[0] != first.output || upsampled.count(c) != 0) return std::nullopt;
    Tail second = tail_of(c);
    if (!second.producer || !second.producer->upsampling_transpose() ||
        second.producer->weight_shape()[0] != first.producer->channels())
      return std::nullopt;
    std::vector<std::string> held = first.held;
    held.insert(held.end(), second.held.begin(), second.held.end());
    if (!allowed(RewriteKind::TransposePair, head.name, held)) return std::nullopt;
    for (size_t k : first.absorbs) absorbed[k] = true;
    absorbed[c] = true;
    for (size_t k : second.absorbs) absorbed[k] = true;
    const std::string name = layer_name(held);
    commit(first.rewrites, name);
    commit(second.rewrites, name);
    commit({{RewriteKind::TransposePair, head.name, "", held}}, name);
    Node pair = first.producer->finish(name, second.output, out.constants);
    pair.inputs.push_back(name + ":W2");
    pair.inputs.push_back(name + ":B2");
    second.producer->add_constants(pair.inputs[3], pair.inputs[4], out.constants);
    set_activation_attrs(pair, first.activation.value_or(FusedActivation{}), kPairAttrs);
    const Shape& w2 = second.producer->weight_shape();
    Attribute& kernel = pair.attrs[kPairKernelAttr];
    kernel.kind = Attribute::Kind::Ints;
    kernel.ints = {w2[2], w2[3]};
    if (second.activation) set_activation_attrs(pair, *second.activation, kActivationAttrs);
    return OptimizedLayer{std::move(pair), std::move(held)};
  };

  // LayerNormalization written out (the header's): the ReduceMean at `i` first, as one
  // LayerNormalization layer (marked absorbed); nullopt where the pattern does not hold.
  auto match_layer_norm = [&](size_t i) -> std::optional<OptimizedLayer> {
    const Node& mean = *kept[i];
    const std::string x = mean.inputs.empty() ? "" : mean.inputs[0];
    const std::optional<Shape> x_shape = x.empty() ? std::nullopt : shape_of(x);
    if (mean.op_type != "ReduceMean" || mean.outputs.size() != 1 || !is_float(mean.outputs[0]) || !x_shape ||
        x_shape->empty() || num_elements(*x_shape) == 0)
      return std::nullopt;
    const int64_t rank = int64_t(x_shape->size());
    // The reduced axes, from the attribute or (opset 18) a constant input: a suffix of the axes.
    auto suffix_axis = [&](const Node& n) -> std::optional<int64_t> {
      if (n.attr_int("keepdims", 1) != 1) return std::nullopt;
      std::vector<int64_t> axes = n.attr_ints("axes");
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        const Tensor* t = constant(n.inputs[1]);
        if (t == nullptr) return std::nullopt;
        axes = t->to_int64s();
      }
      if (axes.empty()) return std::nullopt;
      for (int64_t& a : axes) a = a < 0 ? a + rank : a;
      std::sort(axes.begin(), axes.end());
      for (size_t k = 0; k < axes.size(); ++k)
        if (axes[k] != rank - int64_t(axes.size() - k)) return std::nullopt;
      return axes[0];
    };
    const std::optional<int64_t> axis = suffix_axis(mean);
    if (!axis) return std::nullopt;
    auto same = [&](const std::string& a, const std::string& b) { return resolve(a) == resolve(b); };
    const size_t sub = users.single(mean.outputs[0], "Sub");
    if (sub == SIZE_MAX || !is_binary(*kept[sub], "Sub") || !same(kept[sub]->inputs[0], x) ||
        kept[sub]->inputs[1] != mean.outputs[0])
      return std::nullopt;
    // The centred x, read by the square and by the division.
    const std::string& d = kept[sub]->outputs[0];
    std::vector<size_t> readers = users.of(d);
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());  // Mul(d, d) reads it twice
    if (readers.size() != 2) return std::nullopt;
    size_t square = SIZE_MAX, div = SIZE_MAX;
    for (size_t r : readers) {
      const Node& n = *kept[r];
      if (is_binary(n, "Div") && n.inputs[0] == d && n.inputs[1] != d)
        div = r;
      else if ((is_binary(n, "Pow") && n.inputs[0] == d && scalar_near(constant(n.inputs[1]), 2.0)) ||
               (is_binary(n, "Mul") && n.inputs[0] == d && n.inputs[1] == d))
        square = r;
    }
    if (square == SIZE_MAX || div == SIZE_MAX) return std::nullopt;
    const size_t var = users.single(kept[square]->outputs[0], "ReduceMean");
    if (var == SIZE_MAX || kept[var]->inputs[0] != kept[square]->outputs[0] || suffix_axis(*kept[var]) != axis)
      return std::nullopt;
    const size_t add = users.single(kept[var]->outputs[0], "Add");
    if (add == SIZE_MAX || !is_binary(*kept[add], "Add")) return std::nullopt;
    const Tensor* eps = constant(other_input(*kept[add], kept[var]->outputs[0]));
    if (eps == nullptr || eps->size() != 1 || !is_floating(eps->dtype())) return std::nullopt;
    const size_t sqrt = users.single(kept[add]->outputs[0], "Sqrt");
    if (sqrt == SIZE_MAX || users.single(kept[sqrt]->outputs[0], "Div") != div ||
        kept[div]->inputs[1] != kept[sqrt]->outputs[0])
      return std::nullopt;
    std::vector<size_t> held{i, sub, square, var, add, sqrt, div};
    // Then a scale and a shift, constants that vary at most along the normalized axes.
    const Shape normalized(x_shape->begin() + *axis, x_shape->end());
    auto affine = [&](const std::string& y, const std::string& op) -> std::pair<size_t, const Tensor*> {
      const size_t n = users.single(y, op);
      if (n == SIZE_MAX || !is_binary(*kept[n], op)) return {SIZE_MAX, nullptr};
      const Tensor* c = constant(other_input(*kept[n], y));
      if (c == nullptr || c->dtype() != DType::Float32 || int64_t(c->shape().size()) > rank) return {SIZE_MAX, nullptr};
      const Shape& cs = c->shape();
      for (size_t k = 0; k < cs.size(); ++k) {
        const int64_t dim = int64_t(k) + rank - int64_t(cs.size());
        if (cs[k] != 1 && (dim < *axis || cs[k] != (*x_shape)[size_t(dim)])) return {SIZE_MAX, nullptr};
      }
      return {n, c};
    };
    std::string y = kept[div]->outputs[0];
    const auto [scale_node, scale] = affine(y, "Mul");
    if (scale) held.push_back(scale_node), y = kept[scale_node]->outputs[0];
    const auto [shift_node, shift] = scale ? affine(y, "Add") : std::pair<size_t, const Tensor*>{SIZE_MAX, nullptr};
    if (shift) held.push_back(shift_node), y = kept[shift_node]->outputs[0];
    std::vector<size_t> ordered = held;
    std::sort(ordered.begin(), ordered.end());
    OptimizedLayer layer{Node{}, {}};
    for (size_t k : ordered) layer.nodes.push_back(kept[k]->name);
    if (!allowed(RewriteKind::LayerNormPattern, mean.name, layer.nodes)) return std::nullopt;
    for (size_t k = 1; k < held.size(); ++k) absorbed[held[k]] = true;
    Node& norm = layer.node;
    norm.name = layer_name(layer.nodes);
    commit({{RewriteKind::LayerNormPattern, mean.name, "", layer.nodes}}, norm.name);
    norm.op_type = "LayerNormalization";
    norm.domain = mean.domain;
    norm.outputs = {y};
    Attribute& a = norm.attrs["axis"];
    a.kind = Attribute::Kind::Int;
    a.i = *axis;
    set_float_attr(norm, "epsilon", float(eps->get_as_double(0)));
    // Scale (ones without a Mul) and B over the normalized shape.
    auto expanded = [&](const Tensor* t, float fill) {
      Tensor full(DType::Float32, normalized);
      const int64_t count = full.size();
      for (int64_t e = 0; e < count; ++e) {
        if (t == nullptr) {
          full.data<float>()[e] = fill;
          continue;
        }
        // Element e of the normalized block, read from t broadcast against it (right-aligned).
        int64_t rest = e, offset = 0, stride = 1;
        const Shape& ts = t->shape();
        for (int64_t k = int64_t(normalized.size()) - 1, tk = int64_t(ts.size()) - 1; k >= 0; --k, --tk) {
          const int64_t index = rest % normalized[size_t(k)];
          rest /= normalized[size_t(k)];
          if (tk >= 0) {
            if (ts[size_t(tk)] != 1) offset += index * stride;
            stride *= ts[size_t(tk)];
          }
        }
        full.data<float>()[e] = t->data<float>()[offset];
      }
      return full;
    };
    norm.inputs = {x, norm.name + ":Scale"};
    out.constants[norm.inputs[1]] = expanded(scale, 1.0f);
    if (shift) {
      norm.inputs.push_back(norm.name + ":B");
      out.constants[norm.inputs[2]] = expanded(shift, 0.0f);
    }
    return layer;
  };

  // Layers keyed by the position where they run, in graph order otherwise.
  std::vector<std::pair<size_t, OptimizedLayer>> layers;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (absorbed[i]) continue;
    const Node& head = *kept[i];
    if (options.rewrites.fusion) {
      if (std::optional<OptimizedLayer> gate = match_gate(i)) {
        layers.emplace_back(i, std::move(*gate));
        continue;
      }
      if (std::optional<OptimizedLayer> pair = match_transpose_pair(i)) {
        layers.emplace_back(i, std::move(*pair));
        continue;
      }
      if (std::optional<OptimizedLayer> norm = match_layer_norm(i)) {
        layers.emplace_back(i, std::move(*norm));
        continue;
      }
    }
    const bool binary_op = is_arithmetic(head) && is_float(head.outputs[0]);
    const bool producer_op = head.op_type == "Conv" || head.op_type == "ConvTranspose" || head.op_type == "Gemm" ||
                             head.op_type == "MatMul" || binary_op;
    if (!options.rewrites.fusion || !producer_op || head.outputs.size() != 1 || head.outputs[0].empty()) {
      layers.emplace_back(i, OptimizedLayer{head, {head.name}});
      continue;
    }
    Tail t = tail_of(i);
    for (size_t k : t.absorbs) absorbed[k] = true;
    const auto up = upsampled.find(i);
    if (up != upsampled.end()) t.held.insert(t.held.begin(), kept[up->second.first]->name);
    for (const Chain& chain : t.chains)
      if (chain.resize)
        t.held.insert(std::find(t.held.begin(), t.held.end(), kept[chain.node]->name), kept[*chain.resize]->name);
    if (t.held.size() == 1) {
      layers.emplace_back(i, OptimizedLayer{head, t.held});
      continue;
    }
    const std::string name = layer_name(t.held);
    commit(std::move(t.rewrites), name);
    if (up != upsampled.end())
      commit({{RewriteKind::FuseUpsample, kept[up->second.first]->name, "", {kept[up->second.first]->name, head.name}}},
             name);
    Node fused = t.folded ? t.producer->finish(name, t.output, out.constants) : head;
    fused.name = name;
    fused.outputs = {t.output};
    if (up != upsampled.end()) {
      const std::vector<int64_t>& v = up->second.second;
      fused.inputs[size_t(v[0])] = kept[up->second.first]->inputs[0];
      Attribute& a = fused.attrs[kUpsampleAttr];
      a.kind = Attribute::Kind::Ints;
      a.ints = v;
    }
    for (size_t k = 0; k < t.chains.size(); ++k) {
      const Chain& chain = t.chains[k];
      const Node& op = *kept[chain.node];
      fused.inputs.push_back(chain.operand);
      Attribute& chained = fused.attrs[kChainOpAttrs[k]];
      chained.kind = Attribute::Kind::String;
      chained.s = op.op_type;
      Attribute& first = fused.attrs[kChainOperandFirstAttrs[k]];
      first.kind = Attribute::Kind::Int;
      // The operand's side: the Resize's output where the op read it through one.
      const std::string& read = chain.resize ? kept[*chain.resize]->outputs[0] : chain.operand;
      first.i = op.inputs[0] == read ? 1 : 0;
      if (chain.resize) {
        commit({{RewriteKind::FuseUpsample, kept[*chain.resize]->name, "", {kept[*chain.resize]->name, op.name}}},
               name);
        Attribute& a = fused.attrs[kUpsampleAttr];
        a.kind = Attribute::Kind::Ints;
        a.ints = upsampled.at(chain.node).second;
        a.ints[0] = int64_t(2 + k);  // the chained operand's input
      }
    }
    if (t.activation) set_activation_attrs(fused, *t.activation, kActivationAttrs);
    layers.emplace_back(std::max(i, t.position()), OptimizedLayer{std::move(fused), t.held});
  }
  std::stable_sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [position, layer] : layers) out.layers.push_back(std::move(layer));
  return out;
}

}  // namespace vkg
