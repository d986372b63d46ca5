// BatchNormalization, InstanceNormalization, LayerNormalization,
// MeanVarianceNormalization and LpNormalization.
//
// Each one normalizes slices of its input picked by a ReducePlan, with statistics
// computed in double (two passes: mean, then the variance around it).
#include <cmath>

#include "runtime/reference/ops/normalization_common.h"

namespace vkg {
namespace {

// Population mean and variance of every output element of `plan`.
struct Moments {
  std::vector<double> mean;
  std::vector<double> var;
};

Moments compute_moments(const ReducePlan& plan, const std::vector<double>& v) {
  const size_t rows = size_t(plan.out_size());
  const double n = double(plan.reduced_size());
  Moments m{std::vector<double>(rows, 0.0), std::vector<double>(rows, 0.0)};
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) { m.mean[size_t(o)] += v[size_t(i)]; });
  for (double& mean : m.mean) mean /= n;
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
    const double d = v[size_t(i)] - m.mean[size_t(o)];
    m.var[size_t(o)] += d * d;
  });
  for (double& var : m.var) var /= n;
  return m;
}

std::vector<double> inverse_std(const std::vector<double>& var, double epsilon) {
  std::vector<double> inv(var.size());
  for (size_t i = 0; i < var.size(); ++i) inv[i] = 1.0 / std::sqrt(var[i] + epsilon);
  return inv;
}

// The mask that keeps only the channel axis 1.
std::vector<bool> all_but_channel_axis(int64_t rank) {
  std::vector<bool> mask(size_t(rank), true);
  mask[1] = false;
  return mask;
}

bool output_requested(const KernelContext& ctx, size_t i) {
  return i < ctx.num_outputs() && !ctx.node.outputs[i].empty();
}

// Inference uses the given mean and variance. Training (training_mode=1 from opset 14;
// before that, asking for more than the first output) uses the batch statistics and
// also returns the updated running statistics.
std::vector<Tensor> batch_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << x.describe());
  const int64_t channels = x.dim(1);
  const int64_t spatial = num_elements(Shape(x.shape().begin() + 2, x.shape().end()));
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const double momentum = node.attr_float("momentum", 0.9f);
  bool training = false;
  if (ctx.opset >= 14) {
    training = node.attr_int("training_mode", 0) != 0;
  } else {
    for (size_t i = 1; i < ctx.num_outputs(); ++i) training = training || output_requested(ctx, i);
  }

  // Parameters are per channel, or (opsets 6 and 7 with spatial=0) per channel and
  // spatial position.
  const char* names[4] = {"scale", "B", "input_mean", "input_var"};
  std::vector<double> params[4];
  const int64_t param_size = ctx.input(1).size();
  for (size_t p = 0; p < 4; ++p) {
    const Tensor& t = ctx.input(p + 1);
    VKG_CHECK(t.size() == param_size && (param_size == channels || param_size == channels * spatial),
              node.describe() << ": " << names[p] << " has shape " << shape_to_string(t.shape()) << ", expected ["
                              << channels << "] for an input of shape " << shape_to_string(x.shape()));
    params[p] = load_doubles(node, t);
  }
  const bool per_position = param_size != channels;
  const std::vector<double>& scale = params[0];
  const std::vector<double>& bias = params[1];

  const ReducePlan plan = make_reduce_plan(x.shape(), all_but_channel_axis(x.rank()), false);
  const std::vector<double> v = load_doubles(node, x);
  Moments batch;
  if (training) {
    VKG_CHECK(!per_position, node.describe() << ": training mode needs per-channel parameters");
    batch = compute_moments(plan, v);
  }
  const std::vector<double>& mean = training ? batch.mean : params[2];
  const std::vector<double> inv_std = inverse_std(training ? batch.var : params[3], epsilon);

  std::vector<double> y(v.size());
  for_each_reduced(plan, [&](int64_t c, int64_t r, int64_t i) {
    const size_t p = per_position ? size_t(c * spatial + r % spatial) : size_t(c);
    y[size_t(i)] = (v[size_t(i)] - mean[p]) * inv_std[p] * scale[p] + bias[p];
  });
  std::vector<Tensor> outs{store_doubles(node, x.dtype(), x.shape(), y)};
  if (!training) return outs;

  std::vector<double> running_mean(static_cast<size_t>(channels));
  std::vector<double> running_var(static_cast<size_t>(channels));
  for (size_t c = 0; c < size_t(channels); ++c) {
    running_mean[c] = params[2][c] * momentum + batch.mean[c] * (1.0 - momentum);
    running_var[c] = params[3][c] * momentum + batch.var[c] * (1.0 - momentum);
  }
  const Tensor& in_mean = ctx.input(3);
  const Tensor& in_var = ctx.input(4);
  outs.push_back(store_doubles(node, in_mean.dtype(), in_mean.shape(), running_mean));
  outs.push_back(store_doubles(node, in_var.dtype(), in_var.shape(), running_var));
  if (ctx.opset < 14) {  // saved_mean, saved_var
    outs.push_back(store_doubles(node, in_mean.dtype(), in_mean.shape(), batch.mean));
    outs.push_back(store_doubles(node, in_var.dtype(), in_var.shape(), batch.var));
  }
  return outs;
}

std::vector<Tensor> instance_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << x.describe());
  const int64_t channels = x.dim(1);
  const Tensor& scale_t = ctx.input(1);
  const Tensor& bias_t = ctx.input(2);
  VKG_CHECK(scale_t.size() == channels && bias_t.size() == channels,
            node.describe() << ": scale " << scale_t.describe() << " and B " << bias_t.describe() << " must have "
                            << channels << " elements (the channels of " << x.describe() << ")");
  const std::vector<double> scale = load_doubles(node, scale_t);
  const std::vector<double> bias = load_doubles(node, bias_t);

  const ReducePlan plan = make_reduce_plan(x.shape(), trailing_axes_mask(2, x.rank()), false);
  const std::vector<double> v = load_doubles(node, x);
  const Moments m = compute_moments(plan, v);
  const std::vector<double> inv_std = inverse_std(m.var, node.attr_float("epsilon", 1e-5f));
  std::vector<double> y(v.size());
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
    const size_t c = size_t(o % channels);
    y[size_t(i)] = (v[size_t(i)] - m.mean[size_t(o)]) * inv_std[size_t(o)] * scale[c] + bias[c];
  });
  return {store_doubles(node, x.dtype(), x.shape(), y)};
}

// Opset 17: normalizes over the axes [axis, rank); optional outputs Mean and
// InvStdDev have the stash_type dtype and the input's shape with those axes set to 1.
std::vector<Tensor> layer_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = node.attr_int("axis", -1);
  VKG_CHECK(rank > 0 && axis >= -rank && axis < rank,
            node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
  if (axis < 0) axis += rank;
  const int64_t stash_onnx = node.attr_int("stash_type", 1);
  const std::optional<DType> stash = dtype_from_onnx(int32_t(stash_onnx));
  VKG_CHECK(stash && is_floating(*stash), node.describe() << ": stash_type " << stash_onnx << " is not a floating type");

  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const std::vector<double> scale = broadcast_doubles(node, ctx.input(1), normalized, "Scale");
  std::vector<double> bias(size_t(num_elements(normalized)), 0.0);
  if (ctx.has_input(2)) bias = broadcast_doubles(node, ctx.input(2), normalized, "B");

  const ReducePlan plan = make_reduce_plan(x.shape(), trailing_axes_mask(axis, rank), true);
  const std::vector<double> v = load_doubles(node, x);
  const Moments m = compute_moments(plan, v);
  const std::vector<double> inv_std = inverse_std(m.var, node.attr_float("epsilon", 1e-5f));
  std::vector<double> y(v.size());
  for_each_reduced(plan, [&](int64_t o, int64_t r, int64_t i) {
    y[size_t(i)] = (v[size_t(i)] - m.mean[size_t(o)]) * inv_std[size_t(o)] * scale[size_t(r)] + bias[size_t(r)];
  });
  return {store_doubles(node, x.dtype(), x.shape(), y), store_doubles(node, *stash, plan.out_shape, m.mean),
          store_doubles(node, *stash, plan.out_shape, inv_std)};
}

// Opset 9+: (x - mean) / (std + 1e-9) over `axes` (default [0, 2, 3]). Opset 1 picks the
// axes with across_channels and can skip the variance (normalize_variance=0).
std::vector<Tensor> mean_variance_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  std::vector<bool> mask;
  bool normalize_variance = true;
  if (ctx.opset < 9) {
    VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2, got " << x.describe());
    mask = trailing_axes_mask(node.attr_int("across_channels", 0) != 0 ? 1 : 2, x.rank());
    normalize_variance = node.attr_int("normalize_variance", 1) != 0;
  } else {
    mask = axes_mask(node, node.attr_ints("axes", {0, 2, 3}), x.rank());
  }
  const ReducePlan plan = make_reduce_plan(x.shape(), mask, true);
  const std::vector<double> v = load_doubles(node, x);
  const Moments m = compute_moments(plan, v);
  std::vector<double> y(v.size());
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
    const double centered = v[size_t(i)] - m.mean[size_t(o)];
    y[size_t(i)] = normalize_variance ? centered / (std::sqrt(m.var[size_t(o)]) + 1e-9) : centered;
  });
  return {store_doubles(node, x.dtype(), x.shape(), y)};
}

// x / ||x||_p along `axis` (default -1), p in {1, 2}; a zero norm gives zeros.
std::vector<Tensor> lp_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t p = node.attr_int("p", 2);
  VKG_CHECK(p == 1 || p == 2, node.describe() << ": p must be 1 or 2, got " << p);
  VKG_CHECK(x.rank() > 0, node.describe() << ": the input must have rank >= 1");
  const ReducePlan plan = make_reduce_plan(x.shape(), axes_mask(node, {node.attr_int("axis", -1)}, x.rank()), true);
  const std::vector<double> v = load_doubles(node, x);
  std::vector<double> norm(size_t(plan.out_size()), 0.0);
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
    norm[size_t(o)] += p == 1 ? std::abs(v[size_t(i)]) : v[size_t(i)] * v[size_t(i)];
  });
  if (p == 2)
    for (double& n : norm) n = std::sqrt(n);
  std::vector<double> y(v.size());
  for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
    y[size_t(i)] = norm[size_t(o)] == 0.0 ? 0.0 : v[size_t(i)] / norm[size_t(o)];
  });
  return {store_doubles(node, x.dtype(), x.shape(), y)};
}

}  // namespace

void register_norm_ops(OpRegistry& registry) {
  registry.add("BatchNormalization", batch_normalization);
  registry.add("InstanceNormalization", instance_normalization);
  registry.add("LayerNormalization", layer_normalization);
  registry.add("MeanVarianceNormalization", mean_variance_normalization);
  registry.add("LpNormalization", lp_normalization);
}

}  // namespace vkg
