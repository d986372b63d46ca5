// What a producer or binary op absorbs after it (graph_optimizer.h): folded
// biases and BatchNormalizations, up to two chained elementwise ops (with the
// nearest upsamplings they read through), an activation, then a scale and
// shift. Separate from the multi-node patterns: each step takes the single
// consumer of the layer's output so far.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/core/resize_sampling.h"
#include "runtime/engine/graph_rewriter.h"

namespace vkg::graph_rewrite {

// The Resizes a binary op reads through (the header's Resize fusion): marked absorbed and
// recorded in `upsampled`.
void GraphRewriter::find_upsamplings() {
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
}

// A Transpose that swaps only the last two axes of a float runtime tensor, read by nothing but one
// input of a float MatMul whose inputs are both runtime tensors (a MatMul with constant weights may
// fold a bias into them and change form): the MatMul reads the Transpose's input with the strides of
// those axes swapped, and the transposed tensor is never written (attention's K^T, x^T W).
void GraphRewriter::find_transposed_operands() {
  for (size_t i = 0; options.rewrites.fusion && i < kept.size(); ++i) {
    const Node& t = *kept[i];
    if (t.op_type != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1 || absorbed[i]) continue;
    const std::optional<Shape> in = shape_of(t.inputs[0]);
    if (!in || in->size() < 2 || constant(t.inputs[0]) != nullptr || !is_float(t.inputs[0])) continue;
    const size_t rank = in->size();
    std::vector<int64_t> swap(rank);
    for (size_t d = 0; d < rank; ++d) swap[d] = int64_t(d);
    std::swap(swap[rank - 2], swap[rank - 1]);
    if (!t.has_attr("perm") || t.attr_ints("perm") != swap) continue;
    const size_t m = users.single(t.outputs[0], "MatMul");
    if (m == SIZE_MAX) continue;
    const Node& mm = *kept[m];
    if (mm.inputs.size() != 2 || mm.inputs[0] == mm.inputs[1] || !is_float(mm.outputs[0])) continue;
    if (constant(mm.inputs[0]) != nullptr || constant(mm.inputs[1]) != nullptr) continue;
    if (!allowed(RewriteKind::FoldTranspose, t.name, {t.name, mm.name})) continue;
    transposed[m].emplace_back(i, mm.inputs[0] == t.outputs[0] ? 0 : 1);
    absorbed[i] = true;
  }
}

std::optional<GraphRewriter::Chain> GraphRewriter::match_chain(const std::string& x, bool upsampling) {
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
}

GraphRewriter::Tail GraphRewriter::tail_of(size_t i) {
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
    if (!permit(next.op_type == "BatchNormalization" ? RewriteKind::FoldBatchNorm : RewriteKind::FoldBias, c)) break;
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
}

}  // namespace vkg::graph_rewrite
