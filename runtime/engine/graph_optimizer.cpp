// The driver of the rewrite: no-ops become aliases, then each remaining node
// becomes a layer, alone or with what it absorbs. The rewrites themselves live in
// graph_fold.cpp, graph_activation.cpp, graph_tail.cpp and graph_patterns.cpp
// (graph_rewriter.h).
#include "runtime/engine/graph_optimizer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/core/resize_sampling.h"
#include "runtime/engine/graph_rewriter.h"

namespace vkg {

namespace graph_rewrite {

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

}  // namespace

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

bool is_arithmetic(const Node& n) {
  return (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") &&
         n.inputs.size() == 2 && n.outputs.size() == 1 && !n.outputs[0].empty();
}

bool scalar_near(const Tensor* t, double value) {
  return t != nullptr && t->size() == 1 && std::abs(t->get_as_double(0) - value) <= 1e-5 * std::abs(value);
}

std::string layer_name(const std::vector<std::string>& held) {
  std::string name;
  for (const std::string& h : held) name += (name.empty() ? "" : "+") + h;
  return name;
}

GraphRewriter::GraphRewriter(const std::vector<const Node*>& nodes, const ConstantFn& constant,
                             const GraphOptimizerOptions& options)
    : nodes(nodes), constant(constant), options(options) {}

std::string GraphRewriter::resolve(const std::string& name) const {
  auto it = out.aliases.find(name);
  return it == out.aliases.end() ? name : it->second;
}

bool GraphRewriter::allowed(RewriteKind kind, const std::string& subject,
                            const std::vector<std::string>& involved) const {
  return options.rewrites.allows(kind, subject, involved);
}

void GraphRewriter::commit(std::vector<AppliedRewrite> rewrites, const std::string& layer) {
  for (AppliedRewrite& r : rewrites) {
    r.layer = layer;
    out.rewrites.push_back(std::move(r));
  }
}

std::optional<Shape> GraphRewriter::shape_of(const std::string& t) const {
  return options.shape_of ? options.shape_of(t) : std::nullopt;
}

int GraphRewriter::rank_of(const std::string& t) const {
  const std::optional<Shape> shape = shape_of(t);
  return shape ? int(shape->size()) : -1;
}

bool GraphRewriter::is_float(const std::string& t) const { return options.is_float && options.is_float(t); }

// Aliases the output of every no-op to its input; the other nodes are `kept`.
void GraphRewriter::remove_noops() {
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
}

void GraphRewriter::count_consumers() {
  for (size_t i = 0; i < kept.size(); ++i)
    for (const std::string& in : kept[i]->inputs)
      if (!in.empty()) consumers[resolve(in)].push_back(i);
  absorbed.assign(kept.size(), false);
}

// The layers of several producers (graph_patterns.cpp) that start at the node at `i`.
std::optional<OptimizedLayer> GraphRewriter::match_pattern(size_t i) {
  if (std::optional<OptimizedLayer> gate = match_gate(i)) return gate;
  if (std::optional<OptimizedLayer> pair = match_transpose_pair(i)) return pair;
  return match_layer_norm(i);
}

std::pair<size_t, OptimizedLayer> GraphRewriter::fuse_tail(size_t i) {
  const Node& head = *kept[i];
  Tail t = tail_of(i);
  for (size_t k : t.absorbs) absorbed[k] = true;
  const auto up = upsampled.find(i);
  if (up != upsampled.end()) t.held.insert(t.held.begin(), kept[up->second.first]->name);
  const auto tr = transposed.find(i);
  if (tr != transposed.end())
    for (auto it = tr->second.rbegin(); it != tr->second.rend(); ++it) t.held.insert(t.held.begin(), kept[it->first]->name);
  for (const Chain& chain : t.chains)
    if (chain.resize)
      t.held.insert(std::find(t.held.begin(), t.held.end(), kept[chain.node]->name), kept[*chain.resize]->name);
  if (t.held.size() == 1) {
    return {i, OptimizedLayer{head, t.held}};
  }
  const std::string name = layer_name(t.held);
  commit(std::move(t.rewrites), name);
  if (up != upsampled.end())
    commit({{RewriteKind::FuseUpsample, kept[up->second.first]->name, "", {kept[up->second.first]->name, head.name}}},
           name);
  Node fused = t.folded ? t.producer->finish(name, t.output, out.constants) : head;
  fused.name = name;
  fused.outputs = {t.output};
  if (tr != transposed.end()) {
    Attribute& a = fused.attrs[kTransposedInputsAttr];
    a.kind = Attribute::Kind::Ints;
    for (const auto& [k, input] : tr->second) {
      commit({{RewriteKind::FoldTranspose, kept[k]->name, "", {kept[k]->name, head.name}}}, name);
      fused.inputs[input] = kept[k]->inputs[0];
      a.ints.push_back(int64_t(input));
    }
  }
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
      commit({{RewriteKind::FuseUpsample, kept[*chain.resize]->name, "", {kept[*chain.resize]->name, op.name}}}, name);
      Attribute& a = fused.attrs[kUpsampleAttr];
      a.kind = Attribute::Kind::Ints;
      a.ints = upsampled.at(chain.node).second;
      a.ints[0] = int64_t(2 + k);  // the chained operand's input
    }
  }
  if (t.activation) set_activation_attrs(fused, *t.activation, kActivationAttrs);
  return {std::max(i, t.position()), OptimizedLayer{std::move(fused), t.held}};
}

OptimizedGraph GraphRewriter::run() {
  remove_noops();
  count_consumers();
  find_upsamplings();
  find_transposed_operands();
  // Layers keyed by the position where they run, in graph order otherwise.
  std::vector<std::pair<size_t, OptimizedLayer>> layers;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (absorbed[i]) continue;
    const Node& head = *kept[i];
    if (options.rewrites.fusion) {
      if (std::optional<OptimizedLayer> layer = match_pattern(i)) {
        layers.emplace_back(i, std::move(*layer));
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
    layers.push_back(fuse_tail(i));
  }
  std::stable_sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [position, layer] : layers) out.layers.push_back(std::move(layer));
  return std::move(out);
}

}  // namespace graph_rewrite

using graph_rewrite::activation_attrs;
using graph_rewrite::kActivationAttrs;
using graph_rewrite::kChainOpAttrs;
using graph_rewrite::kChainOperandFirstAttrs;
using graph_rewrite::kGateAttrs;
using graph_rewrite::kPairAttrs;
using graph_rewrite::kPairKernelAttr;
using graph_rewrite::kUpsampleAttr;

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

bool reads_transposed(const Node& node, size_t input) {
  if (!node.has_attr(graph_rewrite::kTransposedInputsAttr)) return false;
  const std::vector<int64_t> v = node.attr_ints(graph_rewrite::kTransposedInputsAttr);
  return std::find(v.begin(), v.end(), int64_t(input)) != v.end();
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
  return graph_rewrite::GraphRewriter(nodes, constant, options).run();
}

}  // namespace vkg
