// Bias and BatchNormalization folding (graph_optimizer.h): the per-channel
// affine map a consumer applies, and the Conv, ConvTranspose, Gemm or MatMul
// that absorbs such maps into its constant weights. Separate from the driver:
// it is arithmetic on weights, not matching on the graph.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "runtime/engine/graph_rewriter.h"

namespace vkg::graph_rewrite {

namespace {

const Tensor* float_constant(const std::function<const Tensor*(const std::string&)>& constant,
                             const std::string& name) {
  const Tensor* t = name.empty() ? nullptr : constant(name);
  return t != nullptr && t->dtype() == DType::Float32 ? t : nullptr;
}

const Tensor* float_constant(const std::function<const Tensor*(const std::string&)>& constant, const Node& n,
                             size_t i) {
  return i < n.inputs.size() ? float_constant(constant, n.inputs[i]) : nullptr;
}

}  // namespace

std::optional<ChannelAffine> channel_affine(const Node& n, const std::string& x, int64_t channels, size_t axis,
                                            size_t rank, const ConstantFn& constant) {
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

std::optional<FoldableProducer> FoldableProducer::make(const Node& n, const ConstantFn& constant, int output_rank) {
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

void FoldableProducer::absorb(const ChannelAffine& a) {
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

Node FoldableProducer::finish(const std::string& name, const std::string& output,
                              std::map<std::string, Tensor>& constants) const {
  Node n = node_;
  n.name = name;
  n.outputs = {output};
  n.inputs.resize(3);
  // MatMul takes its bias as a third input, which only fused nodes have (runtime/tactics/gemm_float.cpp).
  const bool gemm = node_.op_type == "Gemm" || node_.op_type == "MatMul";
  n.inputs[1] = name + ":" + (gemm ? "B" : "W");
  n.inputs[2] = name + ":" + (gemm ? "C" : "B");
  add_constants(n.inputs[1], n.inputs[2], constants);
  if (node_.op_type == "Gemm") set_float_attr(n, "beta", 1.0f);  // beta is folded into C
  return n;
}

void FoldableProducer::add_constants(const std::string& weights, const std::string& bias,
                                     std::map<std::string, Tensor>& constants) const {
  constants[weights] = weights_;
  constants[bias] = Tensor::from_vector<float>({channels_}, bias_);
}

bool FoldableProducer::pointwise() const {
  if (node_.op_type != "Conv" || node_.attr_int("group", 1) != 1) return false;
  const std::vector<int64_t>& w = weights_.shape();
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
  };
  return std::all_of(w.begin() + 2, w.end(), [](int64_t k) { return k == 1; }) && all(node_.attr_ints("strides"), 1) &&
         all(node_.attr_ints("pads"), 0);
}

bool FoldableProducer::upsampling_transpose() const {
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

}  // namespace vkg::graph_rewrite
