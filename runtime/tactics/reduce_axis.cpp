// The ops that scan along one axis rather than reduce it: CumSum (cumsum.scalar),
// TopK (topk.select) and LRN (lrn.window, a window across channels), one
// invocation per row or element.
#include <algorithm>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/core/window_geometry.h"
#include "runtime/tactics/reduce_common.h"

namespace vkg::reduce_tactics {

namespace {

// The rows CumSum and TopK scan along one axis of `shape`: outer * inner rows of `len`
// elements, `inner` apart (the axis is checked as every reduction's axes are).
struct AxisRows {
  int64_t rows = 1, len = 1, inner = 1;
};

AxisRows axis_rows(const Node& node, const Shape& shape, int64_t axis) {
  const std::vector<bool> mask = axes_mask(node, {axis}, int64_t(shape.size()));
  AxisRows r;
  int64_t outer = 1;
  bool after = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (mask[d]) {
      r.len = shape[d];
      after = true;
    } else {
      (after ? r.inner : outer) *= shape[d];
    }
  }
  r.rows = outer * r.inner;
  return r;
}

// One invocation per row (shaders/reduce/{cumsum,topk}.comp): push constants rows, len,
// inner; the caller adds its specialization constants, bindings and further push words.
Dispatch axis_rows_dispatch(const LayerContext& ctx, const std::string& shader, const AxisRows& r) {
  Dispatch d;
  d.shader = ctx.shader(shader);
  const uint32_t wg = workgroup_size(ctx, 64);
  d.spec = {{0, wg}};
  d.push = {uint32_t(r.rows), uint32_t(r.len), uint32_t(std::max<int64_t>(r.inner, 1))};
  d.groups = linear_groups(uint64_t(r.rows), wg, ctx.device);
  return d;
}

}  // namespace

// CumSum: one invocation per row along the axis, whose value (input 1) must be a
// build-time constant.
std::optional<LayerPlan> plan_cumsum(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& axis_t = ctx.input(1);
  if (!axis_t.is_constant()) {
    why_not = "the axis input '" + axis_t.name + "' is not a build-time constant";
    return std::nullopt;
  }
  const std::vector<int64_t> given = axis_t.constant->to_int64s();
  VKG_CHECK(!x.shape.empty() && given.size() == 1,
            node.describe() << ": axis must be one value in [-rank, rank) for an input of rank " << x.shape.size());
  const AxisRows rows = axis_rows(node, x.shape, given[0]);
  // An invocation scans a whole row (wrong past lavapipe's loop iteration limit at 300,000).
  if (!loops_fit_device(ctx, uint64_t(rows.len), 2, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d = axis_rows_dispatch(ctx, "reduce/cumsum", rows);
  d.spec.insert(d.spec.end(), {{1, x.storage == StorageType::I32 ? 1u : 0u},
                               {2, node.attr_int("exclusive", 0) != 0 ? 1u : 0u},
                               {3, node.attr_int("reverse", 0) != 0 ? 1u : 0u}});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// TopK: one invocation per row along the axis, K selection passes; K (input 1) must be a
// build-time constant. Sorted output only.
std::optional<LayerPlan> plan_topk(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& k_t = ctx.input(1);
  if (!k_t.is_constant()) {
    why_not = "K ('" + k_t.name + "') is not a build-time constant";
    return std::nullopt;
  }
  if (node.attr_int("sorted", 1) == 0) {
    why_not = "unsorted output (sorted=0) is not supported";
    return std::nullopt;
  }
  VKG_CHECK(!x.shape.empty(), node.describe() << ": the input must have rank >= 1");
  const AxisRows rows = axis_rows(node, x.shape, node.attr_int("axis", -1));
  const std::vector<int64_t> ks = k_t.constant->to_int64s();
  VKG_CHECK(ks.size() == 1 && ks[0] >= 0 && ks[0] <= rows.len,
            node.describe() << ": K must be one value in [0, " << rows.len << "]");
  // An invocation selects K times over its row (wrong past lavapipe's loop iteration limit).
  if (!loops_fit_device(ctx, uint64_t(rows.len) * uint64_t(std::max<int64_t>(ks[0], 1)), 2, why_not))
    return std::nullopt;
  LayerPlan plan;
  const uint64_t out_elems = uint64_t(rows.rows * ks[0]);
  auto output_or_scratch = [&](size_t i) {
    if (i < ctx.outputs.size() && ctx.outputs[i].present()) return BindingRef::output(uint32_t(i));
    plan.scratch_bytes.push_back(std::max<uint64_t>(16, out_elems * 4));
    return BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1));
  };
  Dispatch d = axis_rows_dispatch(ctx, "reduce/topk", rows);
  d.spec.insert(d.spec.end(),
                {{1, x.storage == StorageType::I32 ? 1u : 0u}, {2, node.attr_int("largest", 1) != 0 ? 1u : 0u}});
  d.bindings = {bind_input(ctx, plan, 0), output_or_scratch(0), output_or_scratch(1)};
  d.push.push_back(uint32_t(ks[0]));
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// LRN: shaders/norm/lrn.comp, one invocation per element summing its channel window.
std::optional<LayerPlan> plan_lrn(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = std::string("LRN does not take ") + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() >= 2,
            node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << shape_to_string(x.shape));
  const int64_t size = node.attr_int("size");
  VKG_CHECK(size >= 1, node.describe() << ": size must be at least 1, got " << size);
  const int64_t channels = x.shape[1];
  const int64_t inner = num_elements(Shape(x.shape.begin() + 2, x.shape.end()));
  const window::ChannelWindow channel_window = window::lrn_channel_window(size);
  const auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  Dispatch d;
  d.shader = ctx.shader("norm/lrn");
  const uint32_t wg = workgroup_size(ctx, 64);
  d.spec = {{0, wg}};
  LayerPlan plan;
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  d.push = {uint32_t(x.size()),
            uint32_t(std::max<int64_t>(channels, 1)),
            uint32_t(std::max<int64_t>(inner, 1)),
            uint32_t(channel_window.before),
            uint32_t(channel_window.after),
            bits(float(double(node.attr_float("alpha", 1e-4f)) / double(size))),
            bits(node.attr_float("beta", 0.75f)),
            bits(node.attr_float("bias", 1.0f))};
  d.groups = linear_groups(uint64_t(x.size()), wg, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::reduce_tactics
