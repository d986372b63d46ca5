// The rewrites that make one layer of several producers (graph_optimizer.h): a
// squeeze-and-excitation gate (GlobalAveragePool and two pointwise Convs), two
// upsampling ConvTransposes in a row, and LayerNormalization written out. Each
// matcher starts at one node and either takes every node of its pattern or
// none.
#include <algorithm>

#include "runtime/engine/graph_rewriter.h"

namespace vkg::graph_rewrite {

namespace {

// The axis a ReduceMean of a rank-`rank` input reduces from, where it keeps its dims and reduces a
// suffix of the axes (from the attribute or, opset 18, a constant input); nullopt otherwise.
std::optional<int64_t> suffix_axis(const Node& n, int64_t rank, const ConstantFn& constant) {
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
}

// The consumer of `y` (a LayerNormalization's result so far) applying `op` with a float constant
// that varies at most along the normalized axes (from `axis` of `x_shape`), and that constant;
// {SIZE_MAX, nullptr} when there is none.
std::pair<size_t, const Tensor*> normalized_affine(const Consumers& users, const ConstantFn& constant,
                                                   const std::string& y, const std::string& op, int64_t rank,
                                                   int64_t axis, const Shape& x_shape) {
  const size_t n = users.single(y, op);
  if (n == SIZE_MAX || !is_binary(*users.kept[n], op)) return {SIZE_MAX, nullptr};
  const Tensor* c = constant(other_input(*users.kept[n], y));
  if (c == nullptr || c->dtype() != DType::Float32 || int64_t(c->shape().size()) > rank) return {SIZE_MAX, nullptr};
  const Shape& cs = c->shape();
  for (size_t k = 0; k < cs.size(); ++k) {
    const int64_t dim = int64_t(k) + rank - int64_t(cs.size());
    if (cs[k] != 1 && (dim < axis || cs[k] != x_shape[size_t(dim)])) return {SIZE_MAX, nullptr};
  }
  return {n, c};
}

// `t` broadcast against the normalized shape (right-aligned), or `fill` everywhere without one.
Tensor expanded(const Tensor* t, float fill, const Shape& normalized) {
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
}

}  // namespace

// A squeeze-and-excitation gate (the header's): the GlobalAveragePool at `i`, then two pointwise
// Convs with what each absorbs.
std::optional<OptimizedLayer> GraphRewriter::match_gate(size_t i) {
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
}

// Two upsampling ConvTransposes in a row (a text detector's head: ConvTranspose, BN, Relu,
// ConvTranspose, Sigmoid), the ConvTranspose at `i` first, with what each absorbs.
std::optional<OptimizedLayer> GraphRewriter::match_transpose_pair(size_t i) {
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
}

// LayerNormalization written out (the header's): the ReduceMean at `i` first.
std::optional<OptimizedLayer> GraphRewriter::match_layer_norm(size_t i) {
  const Node& mean = *kept[i];
  const std::string x = mean.inputs.empty() ? "" : mean.inputs[0];
  const std::optional<Shape> x_shape = x.empty() ? std::nullopt : shape_of(x);
  if (mean.op_type != "ReduceMean" || mean.outputs.size() != 1 || !is_float(mean.outputs[0]) || !x_shape ||
      x_shape->empty() || num_elements(*x_shape) == 0)
    return std::nullopt;
  const int64_t rank = int64_t(x_shape->size());
  // The reduced axes, from the attribute or (opset 18) a constant input: a suffix of the axes.
  const std::optional<int64_t> axis = suffix_axis(mean, rank, constant);
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
  if (var == SIZE_MAX || kept[var]->inputs[0] != kept[square]->outputs[0] ||
      suffix_axis(*kept[var], rank, constant) != axis)
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
  auto affine = [&](const std::string& y, const std::string& op) {
    return normalized_affine(users, constant, y, op, rank, *axis, *x_shape);
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
  norm.inputs = {x, norm.name + ":Scale"};
  out.constants[norm.inputs[1]] = expanded(scale, 1.0f, normalized);
  if (shift) {
    norm.inputs.push_back(norm.name + ":B");
    out.constants[norm.inputs[2]] = expanded(shift, 0.0f, normalized);
  }
  return layer;
}

}  // namespace vkg::graph_rewrite
