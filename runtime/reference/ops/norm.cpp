// BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization,
// RMSNormalization, MeanVarianceNormalization, LpNormalization and LRN.
//
// Each one normalizes slices of its input picked by a ReducePlan, with statistics
// computed in double (two passes: mean, then the variance around it).
#include <algorithm>
#include <cmath>

#include "runtime/core/window_geometry.h"
#include "runtime/reference/ops/normalization_common.h"

namespace vkg {
namespace {

// Population mean and variance of one row (two passes, for accuracy).
struct RowMoments {
  double mean = 0.0;
  double var = 0.0;
};

RowMoments row_moments(const std::vector<double>& row) {
  RowMoments m;
  const double n = double(row.size());
  for (double v : row) m.mean += v;
  m.mean /= n;
  for (double v : row) m.var += (v - m.mean) * (v - m.mean);
  m.var /= n;
  return m;
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

// The four parameter inputs of BatchNormalization, as doubles. They are per channel,
// or (opsets 6 and 7 with spatial=0) per channel and spatial position.
struct BatchNormParams {
  std::vector<double> scale, bias, mean, var;
  bool per_position = false;
};

BatchNormParams batch_norm_params(const KernelContext& ctx, int64_t channels, int64_t spatial) {
  const Node& node = ctx.node;
  const char* names[4] = {"scale", "B", "input_mean", "input_var"};
  const int64_t size = ctx.input(1).size();
  for (size_t p = 0; p < 4; ++p) {
    const Tensor& t = ctx.input(p + 1);
    VKG_CHECK(t.size() == size && (size == channels || size == channels * spatial),
              node.describe() << ": " << names[p] << " has shape " << shape_to_string(t.shape()) << ", expected ["
                              << channels << "] for an input of shape " << shape_to_string(ctx.input(0).shape()));
  }
  BatchNormParams params;
  params.scale = load_doubles(node, ctx.input(1));
  params.bias = load_doubles(node, ctx.input(2));
  params.mean = load_doubles(node, ctx.input(3));
  params.var = load_doubles(node, ctx.input(4));
  params.per_position = size != channels;
  return params;
}

// Inference uses the given mean and variance. Training (training_mode=1 from opset 14;
// before that, asking for more than the first output) uses the batch statistics and
// also returns the updated running statistics (and before opset 14 the batch ones).
std::vector<Tensor> batch_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << x.describe());
  const int64_t channels = x.dim(1);
  const int64_t spatial = num_elements(Shape(x.shape().begin() + 2, x.shape().end()));
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  bool training = false;
  if (ctx.opset >= 14) {
    training = node.attr_int("training_mode", 0) != 0;
  } else {
    for (size_t i = 1; i < ctx.num_outputs(); ++i) training = training || output_requested(ctx, i);
  }
  const BatchNormParams params = batch_norm_params(ctx, channels, spatial);
  // Rows are channels: each row holds every element of one channel, samples first.
  const ReducePlan plan = make_reduce_plan(x.shape(), all_but_channel_axis(x.rank()), false);

  if (!training) {
    std::vector<double> inv_std(params.var.size());
    for (size_t p = 0; p < inv_std.size(); ++p) inv_std[p] = 1.0 / std::sqrt(params.var[p] + epsilon);
    return {map_rows(node, x, plan, [&](int64_t c, std::vector<double>& row) {
      for (size_t r = 0; r < row.size(); ++r) {
        const size_t p = params.per_position ? size_t(c * spatial) + r % size_t(spatial) : size_t(c);
        row[r] = (row[r] - params.mean[p]) * inv_std[p] * params.scale[p] + params.bias[p];
      }
    })};
  }

  VKG_CHECK(!params.per_position, node.describe() << ": training mode needs per-channel parameters");
  std::vector<double> batch_mean(static_cast<size_t>(channels));
  std::vector<double> batch_var(static_cast<size_t>(channels));
  std::vector<Tensor> outs;
  outs.push_back(map_rows(node, x, plan, [&](int64_t c, std::vector<double>& row) {
    const RowMoments m = row_moments(row);
    batch_mean[size_t(c)] = m.mean;
    batch_var[size_t(c)] = m.var;
    const double inv_std = 1.0 / std::sqrt(m.var + epsilon);
    for (double& v : row) v = (v - m.mean) * inv_std * params.scale[size_t(c)] + params.bias[size_t(c)];
  }));
  const double momentum = node.attr_float("momentum", 0.9f);
  std::vector<double> running_mean(static_cast<size_t>(channels));
  std::vector<double> running_var(static_cast<size_t>(channels));
  for (size_t c = 0; c < size_t(channels); ++c) {
    running_mean[c] = params.mean[c] * momentum + batch_mean[c] * (1.0 - momentum);
    running_var[c] = params.var[c] * momentum + batch_var[c] * (1.0 - momentum);
  }
  const Tensor& in_mean = ctx.input(3);
  const Tensor& in_var = ctx.input(4);
  outs.push_back(store_doubles(node, in_mean.dtype(), in_mean.shape(), running_mean));
  outs.push_back(store_doubles(node, in_var.dtype(), in_var.shape(), running_var));
  if (ctx.opset < 14) {  // saved_mean, saved_var
    outs.push_back(store_doubles(node, in_mean.dtype(), in_mean.shape(), batch_mean));
    outs.push_back(store_doubles(node, in_var.dtype(), in_var.shape(), batch_var));
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

  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const ReducePlan plan = make_reduce_plan(x.shape(), trailing_axes_mask(2, x.rank()), false);
  return {map_rows(node, x, plan, [&](int64_t o, std::vector<double>& row) {
    const size_t c = size_t(o % channels);
    const RowMoments m = row_moments(row);
    const double inv_std = 1.0 / std::sqrt(m.var + epsilon);
    for (double& v : row) v = (v - m.mean) * inv_std * scale[c] + bias[c];
  })};
}

// The axis from which LayerNormalization and RMSNormalization normalize, non-negative.
int64_t normalized_axis(const Node& node, int64_t rank) {
  int64_t axis = node.attr_int("axis", -1);
  VKG_CHECK(rank > 0 && axis >= -rank && axis < rank,
            node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

// Opset 17: normalizes over the axes [axis, rank); optional outputs Mean and
// InvStdDev have the stash_type dtype and the input's shape with those axes set to 1.
std::vector<Tensor> layer_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const int64_t axis = normalized_axis(node, rank);
  const int64_t stash_onnx = node.attr_int("stash_type", 1);
  const std::optional<DType> stash = dtype_from_onnx(int32_t(stash_onnx));
  VKG_CHECK(stash && is_floating(*stash), node.describe()
                                              << ": stash_type " << stash_onnx << " is not a floating type");

  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const std::vector<double> scale = broadcast_doubles(node, ctx.input(1), normalized, "Scale");
  std::vector<double> bias(size_t(num_elements(normalized)), 0.0);
  if (ctx.has_input(2)) bias = broadcast_doubles(node, ctx.input(2), normalized, "B");

  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const ReducePlan plan = make_reduce_plan(x.shape(), trailing_axes_mask(axis, rank), true);
  std::vector<double> mean(static_cast<size_t>(plan.out_size()));
  std::vector<double> inv_std(static_cast<size_t>(plan.out_size()));
  Tensor y = map_rows(node, x, plan, [&](int64_t o, std::vector<double>& row) {
    const RowMoments m = row_moments(row);
    mean[size_t(o)] = m.mean;
    inv_std[size_t(o)] = 1.0 / std::sqrt(m.var + epsilon);
    for (size_t r = 0; r < row.size(); ++r) row[r] = (row[r] - m.mean) * inv_std[size_t(o)] * scale[r] + bias[r];
  });
  return {y, store_doubles(node, *stash, plan.out_shape, mean), store_doubles(node, *stash, plan.out_shape, inv_std)};
}

// Opset 18: each sample's channels split into num_groups groups, normalized over the group
// (its channels and spatial positions); scale and bias are per group (18) or per channel (21).
std::vector<Tensor> group_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << x.describe());
  const int64_t channels = x.dim(1), groups = node.attr_int("num_groups");
  VKG_CHECK(groups > 0 && channels % groups == 0,
            node.describe() << ": num_groups " << groups << " does not divide the " << channels << " channels");
  const int64_t per_param = ctx.opset >= 21 ? 1 : channels / groups;  // channels sharing one scale
  const Tensor& scale_t = ctx.input(1);
  const Tensor& bias_t = ctx.input(2);
  VKG_CHECK(scale_t.size() * per_param == channels && bias_t.size() * per_param == channels,
            node.describe() << ": scale " << scale_t.describe() << " and bias " << bias_t.describe() << " must have "
                            << channels / per_param << " elements (one per " << (ctx.opset >= 21 ? "channel" : "group")
                            << " at opset " << ctx.opset << ")");
  const std::vector<double> scale = load_doubles(node, scale_t);
  const std::vector<double> bias = load_doubles(node, bias_t);
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const int64_t spatial = x.size() / std::max<int64_t>(x.dim(0) * channels, 1);
  const int64_t group_channels = channels / groups;
  // Each (sample, group) is one contiguous row of group_channels * spatial elements.
  const ReducePlan plan = make_reduce_plan({x.dim(0), groups, group_channels * spatial}, {false, false, true}, true);
  return {map_rows(node, x, plan, [&](int64_t o, std::vector<double>& row) {
    const RowMoments m = row_moments(row);
    const double inv_std = 1.0 / std::sqrt(m.var + epsilon);
    for (size_t r = 0; r < row.size(); ++r) {
      const int64_t c = (o % groups) * group_channels + int64_t(r) / std::max<int64_t>(spatial, 1);
      const size_t k = size_t(c / per_param);
      row[r] = (row[r] - m.mean) * inv_std * scale[k] + bias[k];
    }
  })};
}

// Opset 23: x / sqrt(mean(x^2) + epsilon) * scale over the axes [axis, rank).
std::vector<Tensor> rms_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t axis = normalized_axis(node, x.rank());
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const std::vector<double> scale = broadcast_doubles(node, ctx.input(1), normalized, "scale");
  const double epsilon = node.attr_float("epsilon", 1e-5f);
  const ReducePlan plan = make_reduce_plan(x.shape(), trailing_axes_mask(axis, x.rank()), true);
  return {map_rows(node, x, plan, [&](int64_t, std::vector<double>& row) {
    double squares = 0.0;
    for (double v : row) squares += v * v;
    const double inv_rms = 1.0 / std::sqrt(squares / double(row.size()) + epsilon);
    for (size_t r = 0; r < row.size(); ++r) row[r] *= inv_rms * scale[r];
  })};
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
  return {map_rows(node, x, plan, [&](int64_t, std::vector<double>& row) {
    const RowMoments m = row_moments(row);
    const double divisor = normalize_variance ? std::sqrt(m.var) + 1e-9 : 1.0;
    for (double& v : row) v = (v - m.mean) / divisor;
  })};
}

// x / ||x||_p along `axis` (default -1), p in {1, 2}; a zero norm gives zeros.
std::vector<Tensor> lp_normalization(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t p = node.attr_int("p", 2);
  VKG_CHECK(p == 1 || p == 2, node.describe() << ": p must be 1 or 2, got " << p);
  VKG_CHECK(x.rank() > 0, node.describe() << ": the input must have rank >= 1");
  const ReducePlan plan = make_reduce_plan(x.shape(), axes_mask(node, {node.attr_int("axis", -1)}, x.rank()), true);
  return {map_rows(node, x, plan, [&](int64_t, std::vector<double>& row) {
    double norm = 0.0;
    for (double v : row) norm += p == 1 ? std::abs(v) : v * v;
    if (p == 2) norm = std::sqrt(norm);
    for (double& v : row) v = norm == 0.0 ? 0.0 : v / norm;
  })};
}

// LRN (opsets 1, 13): x / (bias + alpha / size * sum of x^2 over the channels
// c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2))^beta, channels on axis 1.
std::vector<Tensor> lrn(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << x.describe());
  const int64_t size = node.attr_int("size");
  VKG_CHECK(size >= 1, node.describe() << ": size must be at least 1, got " << size);
  const double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f);
  const double bias = node.attr_float("bias", 1.0f);
  const window::ChannelWindow cw = window::lrn_channel_window(size);
  const int64_t before = cw.before, after = cw.after;
  const ReducePlan plan = make_reduce_plan(x.shape(), axes_mask(node, {1}, x.rank()), true);
  return {map_rows(node, x, plan, [&](int64_t, std::vector<double>& row) {
    const std::vector<double> in = row;
    const auto channels = int64_t(in.size());
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0;
      for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(channels - 1, c + after); ++j)
        sum += in[size_t(j)] * in[size_t(j)];
      row[size_t(c)] = in[size_t(c)] / std::pow(bias + alpha / double(size) * sum, beta);
    }
  })};
}

}  // namespace

void register_norm_ops(OpRegistry& registry) {
  registry.add("BatchNormalization", batch_normalization);
  registry.add("InstanceNormalization", instance_normalization);
  registry.add("LayerNormalization", layer_normalization);
  registry.add("GroupNormalization", group_normalization);
  registry.add("RMSNormalization", rms_normalization);
  registry.add("MeanVarianceNormalization", mean_variance_normalization);
  registry.add("LpNormalization", lp_normalization);
  registry.add("LRN", lrn);
}

}  // namespace vkg
