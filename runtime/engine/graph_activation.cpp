// The activations a layer absorbs (graph_optimizer.h): single activation ops and
// the patterns exporters write them as (x * Sigmoid(x), HardSwish as
// x * Clip(x + 3, 0, 6) / 6, GELU with Erf), and the node attributes that carry
// a fused activation to the tactics. Separate from the driver: each matcher
// reads a few consumers of one tensor and nothing else.
#include <cmath>

#include "runtime/engine/graph_rewriter.h"

namespace vkg::graph_rewrite {

namespace {

using ActivationMatch = std::optional<std::pair<FusedActivation, std::vector<size_t>>>;

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

// An activation op that `user`, the only consumer of `x`, applies.
ActivationMatch single_op_activation(const std::string& x, size_t user, const Consumers& consumers,
                                     const ConstantFn& constant) {
  const Node& n = *consumers.kept[user];
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
  return std::make_pair(a, std::vector<size_t>{user});
}

// x * HardSigmoid(x), x * Sigmoid(x): a gate on x and a Mul of x with it, the two `users` of x.
ActivationMatch mul_gate_activation(const std::string& x, const std::vector<size_t>& users,
                                    const Consumers& consumers) {
  auto output_of = [&](size_t i) { return consumers.kept[i]->outputs.at(0); };
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
  return std::nullopt;
}

// HardSwish, decomposed: x * Clip(x + 3, 0, 6) / 6 (or * 1/6), from the two `users` of x.
ActivationMatch decomposed_hard_swish(const std::string& x, const std::vector<size_t>& users,
                                      const Consumers& consumers, const ConstantFn& constant) {
  auto output_of = [&](size_t i) { return consumers.kept[i]->outputs.at(0); };
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
  return std::nullopt;
}

// GELU, Erf form: 0.5 * x * (1 + erf(x / sqrt(2))), the scaling of x as a Div or a Mul, the final
// 0.5 on either side: Mul(x, 1/sqrt2) | Div(x, sqrt2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(0.5).
ActivationMatch erf_gelu(const std::string& x, const std::vector<size_t>& users, const Consumers& consumers,
                         const ConstantFn& constant) {
  auto output_of = [&](size_t i) { return consumers.kept[i]->outputs.at(0); };
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

ActivationMatch match_activation(const std::string& x, const Consumers& consumers, const ConstantFn& constant) {
  const std::vector<size_t> users = consumers.of(x);
  if (users.size() == 1) return single_op_activation(x, users[0], consumers, constant);
  if (users.size() != 2) return std::nullopt;
  if (ActivationMatch gate = mul_gate_activation(x, users, consumers)) return gate;
  if (ActivationMatch hard_swish = decomposed_hard_swish(x, users, consumers, constant)) return hard_swish;
  return erf_gelu(x, users, consumers, constant);
}

}  // namespace vkg::graph_rewrite
