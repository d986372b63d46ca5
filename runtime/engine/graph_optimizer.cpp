#include "runtime/engine/graph_optimizer.h"

#include <cmath>
#include <optional>

#include "runtime/core/error.h"

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

// A per-channel affine map y*scale + shift over `channels` channels.
struct ChannelAffine {
  std::vector<float> scale, shift;
};

const Tensor* float_constant(const std::function<const Tensor*(const std::string&)>& constant, const Node& n,
                             size_t i) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
  const Tensor* t = constant(n.inputs[i]);
  return t != nullptr && t->dtype() == DType::Float32 ? t : nullptr;
}

// The affine map of a consumer that a producer with `channels` output channels on
// axis 1 of a rank-`rank` output can absorb: a BatchNormalization in inference
// mode, or an Add of a constant that varies at most along the channel axis.
std::optional<ChannelAffine> channel_affine(const Node& n, const std::string& x, int64_t channels, size_t rank,
                                            const std::function<const Tensor*(const std::string&)>& constant) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return std::nullopt;
  if (n.op_type == "BatchNormalization") {
    if (n.inputs.size() < 5 || n.inputs[0] != x || n.attr_int("training_mode", 0) != 0) return std::nullopt;
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
  if (n.op_type == "Add" && n.inputs.size() == 2) {
    const size_t other = n.inputs[0] == x ? 1 : n.inputs[1] == x ? 0 : 2;
    if (other == 2 || n.inputs[0] == n.inputs[1]) return std::nullopt;
    const Tensor* c = float_constant(constant, n, other);
    if (c == nullptr || c->shape().size() > rank) return std::nullopt;
    // Right-aligned against the output: every axis but the channel axis (1) is 1.
    const size_t pad = rank - c->shape().size();
    for (size_t d = 0; d < c->shape().size(); ++d) {
      const int64_t dim = c->shape()[d];
      if (dim != 1 && !(pad + d == 1 && dim == channels)) return std::nullopt;
    }
    ChannelAffine a;
    for (int64_t k = 0; k < channels; ++k) {
      a.scale.push_back(1.0f);
      a.shift.push_back(c->size() == 1 ? c->data<float>()[0] : c->data<float>()[k]);
    }
    return a;
  }
  return std::nullopt;
}

// A producer that can absorb per-channel affine maps into its weights.
class FoldableProducer {
 public:
  // nullopt when `n` is not a Conv/ConvTranspose/Gemm with float32 constant weights (and bias).
  static std::optional<FoldableProducer> make(const Node& n,
                                              const std::function<const Tensor*(const std::string&)>& constant) {
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
      if (b != nullptr && b->size() != p.channels_) return std::nullopt;
    } else if (n.op_type == "Gemm") {
      if (w->rank() != 2 || n.attr_int("transA", 0) < 0) return std::nullopt;
      p.channels_ = n.attr_int("transB", 0) ? w->shape()[0] : w->shape()[1];
      p.rank_ = 2;
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
          for (int64_t i = 0; i < kernel; ++i) w[(c * out_per_group + j) * kernel + i] *= a.scale[size_t((c / in_per_group) * out_per_group + j)];
    } else {  // Gemm: scale column n of op(B)
      const bool trans = node_.attr_int("transB", 0) != 0;
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
    n.inputs[1] = name + ":" + (node_.op_type == "Gemm" ? "B" : "W");
    n.inputs[2] = name + ":" + (node_.op_type == "Gemm" ? "C" : "B");
    constants[n.inputs[1]] = weights_;
    constants[n.inputs[2]] = Tensor::from_vector<float>({channels_}, bias_);
    if (node_.op_type == "Gemm") {
      n.attrs["beta"].kind = Attribute::Kind::Float;
      n.attrs["beta"].f = 1.0f;
    }
    return n;
  }

 private:
  Node node_;
  Tensor weights_;
  std::vector<float> bias_;
  int64_t channels_ = 0;
  size_t rank_ = 0;
};

}  // namespace

bool moves_data_only(const std::string& op) {
  static const std::set<std::string> ops = {"Identity", "Dropout", "Reshape", "Flatten",   "Squeeze",
                                            "Unsqueeze", "Transpose", "Slice", "Expand", "Tile",
                                            "Concat",    "Split",     "Pad",   "Gather", "GatherElements",
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
  std::vector<const Node*> kept;
  for (const Node* n : nodes) {
    if (options.fusion && is_noop(*n, constant) && !options.keep_tensors.count(n->outputs[0]) &&
        constant(n->inputs[0]) == nullptr) {
      out.aliases[n->outputs[0]] = resolve(n->inputs[0]);
      out.removed.push_back(n->name);
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
  for (size_t i = 0; i < kept.size(); ++i) {
    if (absorbed[i]) continue;
    const Node& head = *kept[i];
    std::optional<FoldableProducer> producer =
        options.fusion && head.outputs.size() == 1 ? FoldableProducer::make(head, constant) : std::nullopt;
    std::vector<std::string> held = {head.name};
    std::string output = head.outputs.empty() ? "" : head.outputs[0];
    while (producer) {
      auto c = consumers.find(output);
      if (options.keep_tensors.count(output) || c == consumers.end() || c->second.size() != 1) break;
      const size_t next = c->second.front();
      const std::optional<ChannelAffine> affine =
          channel_affine(*kept[next], output, producer->channels(), producer->rank(), constant);
      if (!affine || kept[next]->outputs.empty() || kept[next]->outputs[0].empty()) break;
      producer->absorb(*affine);
      absorbed[next] = true;
      held.push_back(kept[next]->name);
      output = kept[next]->outputs[0];
    }
    if (held.size() == 1) {
      out.layers.push_back({head, held});
      continue;
    }
    std::string name;
    for (const std::string& h : held) name += (name.empty() ? "" : "+") + h;
    out.layers.push_back({producer->finish(name, output, out.constants), held});
  }
  return out;
}

}  // namespace vkg
