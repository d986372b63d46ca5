// The ops that place or pick elements by their index rather than move a view:
// Trilu, OneHot, EyeLike, ReverseSequence and Compress, one shader each in
// shaders/movement/.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/tactics/movement_common.h"

namespace vkg::movement_tactics {

// Trilu: the upper or lower triangle of the last two axes; k (input 1) must be a
// build-time constant.
PlanResult plan_trilu(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  if (!check_data(ctx, {&x, &ctx.output(0)}, why_not)) return std::nullopt;
  VKG_CHECK(x.shape.size() >= 2, ctx.node.describe()
                                     << ": the input must have rank >= 2, got " << shape_to_string(x.shape));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    if (!require_constant(ctx, 1, why_not)) return std::nullopt;
    const std::vector<int64_t> ks = constant_ints(ctx, 1, "k");
    VKG_CHECK(ks.size() == 1, ctx.node.describe() << ": k must hold one value");
    k = ks[0];
  }
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond the matrix, every k keeps or drops all alike
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const uint32_t upper = ctx.node.attr_int("upper", 1) != 0 ? 1u : 0u;
  plan.dispatches.push_back(make_dispatch(ctx, "trilu", {{1, upper}}, {src, BindingRef::output(0)},
                                          {uint32_t(x.size()), uint32_t(rows), uint32_t(cols), word(k)},
                                          uint64_t(x.size())));
  return plan;
}

// OneHot: depth (input 1) must be a build-time constant; indices and values are bound.
PlanResult plan_one_hot(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& indices = ctx.input(0);
  const LayerTensor& values = ctx.input(2);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&indices, &values, &y}, why_not)) return std::nullopt;
  if (indices.dtype == DType::Bool || (is_floating(indices.dtype) && indices.dtype != DType::Float32)) {
    why_not = std::string("indices of type ") + dtype_name(indices.dtype) + " (int or float32 only)";
    return std::nullopt;
  }
  const std::optional<double> depth_value = constant_scalar(ctx, 1, why_not);
  if (!depth_value) return std::nullopt;
  VKG_CHECK(std::isfinite(*depth_value) && *depth_value >= 1,
            ctx.node.describe() << ": depth must be at least 1, got " << *depth_value);
  VKG_CHECK(values.size() == 2, ctx.node.describe() << ": values must hold two values [off, on]");
  const auto depth = int64_t(*depth_value);
  const auto rank = int64_t(indices.shape.size()) + 1;
  const int64_t axis = normalize_axes(ctx, {ctx.node.attr_int("axis", -1)}, rank)[0];
  Shape shape = indices.shape;
  shape.insert(shape.begin() + axis, depth);
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  int64_t inner = 1;
  for (int64_t d = axis; d + 1 < rank; ++d) inner *= indices.shape[size_t(d)];
  LayerPlan plan;
  const BindingRef idx = bind_input(ctx, plan, 0);
  const BindingRef vals = bind_input(ctx, plan, 2);
  plan.dispatches.push_back(make_dispatch(
      ctx, "one_hot", {{1, indices.storage == StorageType::F32 ? 1u : 0u}, {2, ctx.opset >= 11 ? 1u : 0u}},
      {idx, vals, BindingRef::output(0)}, {uint32_t(y.size()), uint32_t(depth), uint32_t(std::max<int64_t>(inner, 1))},
      uint64_t(y.size())));
  return plan;
}

// EyeLike: only the output is written; the input gives its shape.
PlanResult plan_eye_like(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&y}, why_not)) return std::nullopt;
  VKG_CHECK(y.shape.size() == 2, ctx.node.describe() << ": the input must be 2-D, got " << shape_to_string(y.shape));
  const int64_t rows = y.shape[0], cols = y.shape[1];
  const int64_t k = std::clamp<int64_t>(ctx.node.attr_int("k", 0), -rows - 1, cols + 1);
  const uint32_t one = y.storage == StorageType::F32 ? 0x3f800000u : 1u;
  LayerPlan plan;
  plan.dispatches.push_back(make_dispatch(ctx, "eye_like", {}, {BindingRef::output(0)},
                                          {uint32_t(y.size()), uint32_t(std::max<int64_t>(cols, 1)), word(k), one},
                                          uint64_t(y.size())));
  return plan;
}

// ReverseSequence: the lengths are bound like data (a runtime input or a weight).
PlanResult plan_reverse_sequence(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& lens = ctx.input(1);
  if (!check_data(ctx, {&x, &ctx.output(0)}, why_not)) return std::nullopt;
  VKG_CHECK(x.shape.size() >= 2, ctx.node.describe()
                                     << ": the input must have rank >= 2, got " << shape_to_string(x.shape));
  const int64_t time_axis = ctx.node.attr_int("time_axis", 0), batch_axis = ctx.node.attr_int("batch_axis", 1);
  VKG_CHECK((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0),
            ctx.node.describe() << ": time_axis and batch_axis must be 0 and 1 (in either order), got " << time_axis
                                << " and " << batch_axis);
  const int64_t steps = x.shape[size_t(time_axis)], batch = x.shape[size_t(batch_axis)];
  VKG_CHECK(lens.size() == batch, ctx.node.describe()
                                      << ": sequence_lens has " << lens.size() << " values for a batch of " << batch);
  if (lens.storage != StorageType::I32) {
    why_not = "sequence_lens is not an integer tensor";
    return std::nullopt;
  }
  const int64_t inner = x.size() / std::max<int64_t>(1, steps * batch);
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const BindingRef lb = bind_input(ctx, plan, 1);
  plan.dispatches.push_back(
      make_dispatch(ctx, "reverse_sequence", {{1, time_axis == 0 ? 1u : 0u}}, {src, lb, BindingRef::output(0)},
                    {uint32_t(x.size()), uint32_t(std::max<int64_t>(steps, 1)), uint32_t(std::max<int64_t>(batch, 1)),
                     uint32_t(std::max<int64_t>(inner, 1))},
                    uint64_t(x.size())));
  return plan;
}

// Compress: the condition (input 1) must be a build-time constant, which fixes the
// output shape; the kept indices become a weight.
PlanResult plan_compress(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  if (!require_constant(ctx, 1, why_not)) return std::nullopt;
  const Tensor& cond = ctx.constant_input(1);
  VKG_CHECK(cond.dtype() == DType::Bool && cond.rank() == 1,
            ctx.node.describe() << ": the condition must be a 1-D bool tensor, got " << cond.describe());
  const bool flat = !ctx.node.has_attr("axis");
  const auto rank = int64_t(x.shape.size());
  const int64_t axis = flat ? 0 : normalize_axes(ctx, {ctx.node.attr_int("axis")}, rank)[0];
  const int64_t dim = flat ? x.size() : x.shape[size_t(axis)];
  std::vector<int32_t> kept;
  for (int64_t j = 0; j < cond.size(); ++j) {
    if (!cond.data<bool>()[j]) continue;
    VKG_CHECK(j < dim, ctx.node.describe() << ": the condition selects index " << j << " of an axis of size " << dim);
    kept.push_back(int32_t(j));
  }
  int64_t inner = 1;
  Shape shape = {int64_t(kept.size())};
  if (!flat) {
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[size_t(d)];
    shape = x.shape;
    shape[size_t(axis)] = int64_t(kept.size());
  }
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const auto k = uint32_t(std::max<size_t>(kept.size(), 1));
  const BindingRef table = add_weight(plan, meta_tensor(kept));
  plan.dispatches.push_back(
      make_dispatch(ctx, "compress", {}, {src, table, BindingRef::output(0)},
                    {uint32_t(y.size()), k, uint32_t(std::max<int64_t>(dim, 1)), uint32_t(std::max<int64_t>(inner, 1))},
                    uint64_t(y.size())));
  return plan;
}

}  // namespace vkg::movement_tactics
