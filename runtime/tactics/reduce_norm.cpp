// The row normalizations (layernorm.*, norm.*): LayerNormalization,
// RMSNormalization, InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization and LpNormalization on shaders/norm/, each a
// NormLayer: its rows, op code and per-row or per-element parameters.
#include <algorithm>
#include <cstring>

#include "runtime/core/error.h"
#include "runtime/tactics/reduce_common.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::reduce_tactics {

namespace {

// Operation codes of shaders/norm/norm_ops.glsl.
enum class NormOp : uint32_t {
  Layer = 0,     // (x - mean) * inv_std * scale[r] + bias[r]
  Instance,      // (x - mean) * inv_std * scale[c] + bias[c]
  MeanVariance,  // (x - mean) / (std + 1e-9)
  MeanOnly,      // x - mean (MeanVarianceNormalization-1, normalize_variance = 0)
  L1,            // x / sum |x|
  L2,            // x / sqrt(sum x^2)
  Rms,           // x * inv_rms * scale[r]
  Group,         // (x - mean) * inv_std * scale[c] + bias[c], over (sample, group) rows
};

// Bindings of the norm shaders: 0 X, 1 Y, 2 scale, 3 bias, 4 Mean, 5 InvStdDev.
struct NormLayer {
  NormOp op = NormOp::Layer;
  std::vector<bool> mask;
  float epsilon = 0;
  std::optional<BindingRef> scale, bias, mean, inv_std;
  uint32_t scale_period = 1, bias_period = 1, channels = 1;
  Shape view;  // the shape the mask applies to, when not the input's (GroupNormalization)
};

// A per-element LayerNormalization parameter (Scale or B) of shape `t`, broadcast
// (numpy, unidirectional) to `normalized`: a constant is expanded to the whole row;
// a runtime tensor is bound as is when it is a suffix of the row (read at r % period).
std::optional<BindingRef> bind_row_parameter(const LayerContext& ctx, LayerPlan& plan, size_t i,
                                             const Shape& normalized, uint32_t& period, std::string& why_not) {
  const LayerTensor& t = ctx.input(i);
  const char* what = i == 1 ? "Scale" : "B";
  bool fits = t.shape.size() <= normalized.size();
  for (size_t d = 0; fits && d < t.shape.size(); ++d) {
    const int64_t nd = normalized[normalized.size() - t.shape.size() + d];
    fits = t.shape[d] == nd || t.shape[d] == 1;
  }
  VKG_CHECK(fits, ctx.node.describe() << ": " << what << " of shape " << shape_to_string(t.shape)
                                      << " cannot be broadcast to " << shape_to_string(normalized));
  const int64_t row = num_elements(normalized);
  if (t.is_constant()) {
    Tensor full(DType::Float32, normalized);
    const std::vector<double> values = t.constant->to_doubles();
    const std::vector<int64_t> strides = broadcast_strides(t.shape, normalized);
    const std::vector<int64_t> dims = normalized;
    std::vector<int64_t> index(dims.size(), 0);
    float* out = full.data<float>();
    for (int64_t e = 0; e < row; ++e) {
      int64_t src = 0;
      for (size_t d = 0; d < dims.size(); ++d) src += index[d] * strides[d];
      out[e] = float(values[size_t(src)]);
      for (size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    period = uint32_t(std::max<int64_t>(row, 1));
    return add_weight(plan, to_storage(full, t.storage, ctx.node.describe() + " input '" + t.name + "'"));
  }
  // A runtime parameter: its leading 1s dropped, it must equal the row's trailing dims.
  size_t lead = 0;
  while (lead < t.shape.size() && t.shape[lead] == 1) ++lead;
  const Shape core(t.shape.begin() + ptrdiff_t(lead), t.shape.end());
  if (!std::equal(core.begin(), core.end(), normalized.end() - ptrdiff_t(core.size()))) {
    why_not = std::string(what) + " is a runtime tensor of shape " + shape_to_string(t.shape) +
              " that broadcasts inside the row " + shape_to_string(normalized);
    return std::nullopt;
  }
  period = uint32_t(std::max<int64_t>(num_elements(core), 1));
  return BindingRef::input(uint32_t(i));
}

std::optional<NormLayer> layer_norm(const LayerContext& ctx, LayerPlan& plan, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  int64_t axis = node.attr_int("axis", -1);
  VKG_CHECK(rank > 0 && axis >= -rank && axis < rank,
            node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
  if (axis < 0) axis += rank;
  const int64_t stash = node.attr_int("stash_type", 1);
  VKG_CHECK(stash == 1 || stash == 10 || stash == 11 || stash == 16,
            node.describe() << ": stash_type " << stash << " is not a floating type");
  NormLayer n;
  n.op = node.op_type == "RMSNormalization" ? NormOp::Rms : NormOp::Layer;
  n.mask = trailing_axes_mask(axis, rank);
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  n.scale = bind_row_parameter(ctx, plan, 1, normalized, n.scale_period, why_not);
  if (!n.scale) return std::nullopt;
  if (n.op == NormOp::Layer && ctx.has_input(2)) {
    n.bias = bind_row_parameter(ctx, plan, 2, normalized, n.bias_period, why_not);
    if (!n.bias) return std::nullopt;
  }
  if (ctx.outputs.size() > 1 && ctx.outputs[1].present()) n.mean = BindingRef::output(1);
  if (ctx.outputs.size() > 2 && ctx.outputs[2].present()) n.inv_std = BindingRef::output(2);
  return n;
}

// GroupNormalization: rows are (sample, group) blocks, contiguous in NCHW. Scale and bias
// are per channel (opset 21) or per group (18: expanded to channels when constant).
std::optional<NormLayer> group_norm(const LayerContext& ctx, LayerPlan& plan, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(x.shape.size() >= 2, node.describe()
                                     << ": the input must have rank >= 2 (N x C x ...), got rank " << x.shape.size());
  const int64_t channels = x.shape[1], groups = node.attr_int("num_groups");
  VKG_CHECK(groups > 0 && channels % groups == 0,
            node.describe() << ": num_groups " << groups << " does not divide the " << channels << " channels");
  const int64_t per_param = ctx.opset >= 21 ? 1 : channels / groups;
  const int64_t spatial = x.size() / std::max<int64_t>(x.shape[0] * channels, 1);
  NormLayer n;
  n.op = NormOp::Group;
  n.view = {x.shape[0], groups, channels / groups * spatial};
  n.mask = {false, false, true};
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  n.scale_period = uint32_t(std::max<int64_t>(spatial, 1));
  n.bias_period = uint32_t(channels / groups);
  n.channels = uint32_t(groups);
  for (size_t i : {size_t(1), size_t(2)}) {
    const LayerTensor& t = ctx.input(i);
    VKG_CHECK(t.size() * per_param == channels, node.describe() << ": " << (i == 1 ? "scale" : "bias") << " must have "
                                                                << channels / per_param << " elements (one per "
                                                                << (per_param == 1 ? "channel" : "group") << ")");
    std::optional<BindingRef> ref;
    if (per_param == 1) {
      ref = bind_input(ctx, plan, i);
    } else if (!t.is_constant()) {
      why_not = "a per-group scale or bias (GroupNormalization-18) must be a build-time constant";
      return std::nullopt;
    } else {
      const std::vector<double> values = t.constant->to_doubles();
      Tensor full(DType::Float32, {channels});
      for (int64_t c = 0; c < channels; ++c) full.data<float>()[c] = float(values[size_t(c / per_param)]);
      ref = add_weight(plan, to_storage(full, t.storage, node.describe() + " input '" + t.name + "'"));
    }
    (i == 1 ? n.scale : n.bias) = ref;
  }
  return n;
}

std::optional<NormLayer> instance_norm(const LayerContext& ctx, LayerPlan& plan) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(x.shape.size() >= 2, node.describe()
                                     << ": the input must have rank >= 2 (N x C x ...), got rank " << x.shape.size());
  const int64_t channels = x.shape[1];
  VKG_CHECK(ctx.input(1).size() == channels && ctx.input(2).size() == channels,
            node.describe() << ": scale and B must have " << channels << " elements (the channels of the input)");
  NormLayer n;
  n.op = NormOp::Instance;
  n.mask = trailing_axes_mask(2, int64_t(x.shape.size()));
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  n.scale = bind_input(ctx, plan, 1);
  n.bias = bind_input(ctx, plan, 2);
  n.channels = uint32_t(std::max<int64_t>(channels, 1));
  return n;
}

std::optional<NormLayer> mean_variance_norm(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  NormLayer n;
  n.op = NormOp::MeanVariance;
  if (ctx.opset < 9) {
    VKG_CHECK(rank >= 2, node.describe() << ": the input must have rank >= 2");
    n.mask = trailing_axes_mask(node.attr_int("across_channels", 0) != 0 ? 1 : 2, rank);
    if (node.attr_int("normalize_variance", 1) == 0) n.op = NormOp::MeanOnly;
  } else {
    n.mask = axes_mask(node, node.attr_ints("axes", {0, 2, 3}), rank);
  }
  return n;
}

std::optional<NormLayer> lp_norm(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t p = node.attr_int("p", 2);
  VKG_CHECK(p == 1 || p == 2, node.describe() << ": p must be 1 or 2, got " << p);
  VKG_CHECK(!x.shape.empty(), node.describe() << ": the input must have rank >= 1");
  NormLayer n;
  n.op = p == 1 ? NormOp::L1 : NormOp::L2;
  n.mask = axes_mask(node, {node.attr_int("axis", -1)}, int64_t(x.shape.size()));
  return n;
}

}  // namespace

std::optional<LayerPlan> plan_norm(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(is_float_dtype(x.dtype) || x.dtype == DType::Float64,
            node.describe() << ": input type " << dtype_name(x.dtype) << " is not supported (floating types only)");
  LayerPlan plan;
  std::optional<NormLayer> n;
  if (node.op_type == "LayerNormalization" || node.op_type == "RMSNormalization") {
    n = layer_norm(ctx, plan, why_not);
  } else if (node.op_type == "GroupNormalization") {
    n = group_norm(ctx, plan, why_not);
  } else if (node.op_type == "InstanceNormalization") {
    n = instance_norm(ctx, plan);
  } else if (node.op_type == "MeanVarianceNormalization") {
    n = mean_variance_norm(ctx);
  } else {
    n = lp_norm(ctx);
  }
  if (!n) return std::nullopt;
  const std::optional<RowGeometry> g = row_geometry(n->view.empty() ? x.shape : n->view, n->mask, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;

  // Unused bindings point at a small scratch buffer the shader never touches.
  const bool need_dummy = !n->scale || !n->bias || !n->mean || !n->inv_std;
  if (need_dummy) plan.scratch_bytes.push_back(16);
  const BindingRef dummy = BindingRef::scratch(0);

  Dispatch d = row_dispatch(ctx, algo_shader("norm", algo), algo, *g);
  d.spec.push_back({1, uint32_t(n->op)});
  d.spec.push_back({2, n->bias ? 1u : 0u});
  d.spec.push_back({3, (n->mean ? 1u : 0u) | (n->inv_std ? 2u : 0u)});
  d.spec.push_back({4, std::max<uint32_t>(1, g->red_runs)});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0),   n->scale.value_or(dummy),
                n->bias.value_or(dummy),  n->mean.value_or(dummy), n->inv_std.value_or(dummy)};
  d.push.push_back(float_bits(n->epsilon));
  d.push.push_back(n->scale_period);
  d.push.push_back(n->bias_period);
  d.push.push_back(n->channels);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::reduce_tactics
