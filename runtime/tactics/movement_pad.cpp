// Pad (pad.scalar on shaders/movement/pad.comp): constant, reflect, edge and wrap
// modes, the pads (and axes) build-time constants.
#include <algorithm>
#include <numeric>

#include "runtime/core/error.h"
#include "runtime/tactics/movement_common.h"

namespace vkg::movement_tactics {

namespace {

enum class PadMode : uint32_t { Constant = 0, Reflect = 1, Edge = 2, Wrap = 3 };

PadMode pad_mode(const LayerContext& ctx) {
  const std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap") return PadMode::Wrap;
  VKG_THROW(ctx.node.describe() << ": unknown mode '" << mode << "'");
}

}  // namespace

PlanResult plan_pad(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  const int64_t rank = int64_t(x.shape.size());
  const PadMode mode = pad_mode(ctx);
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);

  std::vector<int64_t> pads, axes;
  std::optional<BindingRef> fill;
  Tensor fill_value(x.dtype, {});  // zero unless given
  if (ctx.opset < 11) {
    // Pad-1 called the attribute "paddings"; Pad-2 renamed it "pads".
    pads = ctx.node.attr_ints(ctx.opset < 2 ? "paddings" : "pads");
    fill_value.set_from_double(0, ctx.node.attr_float("value", 0.0f));
  } else {
    for (size_t i : {size_t(1), size_t(3)})
      if (!require_constant(ctx, i, why_not)) return std::nullopt;
    pads = constant_ints(ctx, 1, "pads");
    if (ctx.has_input(2) && ctx.inputs[2].size() > 0) {
      const LayerTensor& value = ctx.inputs[2];
      VKG_CHECK(value.size() == 1 && value.dtype == x.dtype,
                ctx.node.describe() << ": constant_value must be one " << dtype_name(x.dtype) << " element");
      if (!check_storage(ctx, value.storage, why_not)) return std::nullopt;
      fill = bind_input(ctx, plan, 2);
    }
    if (ctx.has_input(3)) axes = normalize_axes(ctx, constant_ints(ctx, 3, "axes"), rank);
  }
  if (!fill) fill = add_weight(plan, to_storage(fill_value, x.storage, ctx.node.describe() + " constant value"));
  if (axes.empty()) {
    axes.resize(size_t(rank));
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  VKG_CHECK(pads.size() == 2 * axes.size(), ctx.node.describe()
                                                << ": " << pads.size() << " pads for " << axes.size() << " axes");
  std::vector<int64_t> before(size_t(rank), 0), after(size_t(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    before[size_t(axes[k])] = pads[k];
    after[size_t(axes[k])] = pads[k + axes.size()];
  }

  const std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  Shape shape;
  std::vector<int32_t> meta;
  for (size_t d = 0; d < size_t(rank); ++d) {
    const int64_t crop_lo = std::max<int64_t>(0, -before[d]);
    const int64_t kept = x.shape[d] - crop_lo - std::max<int64_t>(0, -after[d]);
    VKG_CHECK(kept >= 0, ctx.node.describe() << ": pads " << before[d] << ", " << after[d] << " crop more than the "
                                             << x.shape[d] << " elements of axis " << d);
    const int64_t pad_lo = std::max<int64_t>(0, before[d]);
    const int64_t out_dim = kept + pad_lo + std::max<int64_t>(0, after[d]);
    VKG_CHECK(mode == PadMode::Constant || kept > 0 || out_dim == 0,
              ctx.node.describe() << ": cannot pad an empty axis in mode " << ctx.node.attr_string("mode", ""));
    shape.push_back(out_dim);
    for (int64_t m : {out_dim, kept, pad_lo, crop_lo, in_strides[d]}) {
      if (m > kMaxElements) {
        why_not = "pads do not fit in int32";
        return std::nullopt;
      }
      meta.push_back(int32_t(m));
    }
  }
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  const BindingRef m = add_weight(plan, meta_tensor(std::move(meta)));
  plan.dispatches.push_back(make_dispatch(ctx, "pad", {}, {src, BindingRef::output(0), *fill, m},
                                          {uint32_t(y.size()), uint32_t(rank), uint32_t(mode)}, uint64_t(y.size())));
  return plan;
}

}  // namespace vkg::movement_tactics
