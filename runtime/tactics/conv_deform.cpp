// deform_conv.direct: DeformConv (2-D) on conv/deform_conv.comp, each tap
// sampled bilinearly at its runtime offset. Its own file: it shares the window
// geometry with Conv but none of the packed-weight forms.
#include <limits>

#include "runtime/core/error.h"
#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

// DeformConv (2-D): shaders/conv/deform_conv.comp, one invocation per output element
// sampling its taps at the runtime offsets; X, W, offset, B and mask may all be data.
std::optional<LayerPlan> plan_deform_conv(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& w = ctx.input(1);
  std::vector<const LayerTensor*> floats = {&x, &w, &ctx.input(2), &ctx.output(0)};
  for (size_t i : {size_t(3), size_t(4)})
    if (ctx.has_input(i)) floats.push_back(&ctx.input(i));
  for (const LayerTensor* t : floats) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why_not = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader computes float data only";
      return std::nullopt;
    }
    if (t->size() > std::numeric_limits<int32_t>::max()) {
      why_not = "tensor '" + t->name + "' has more elements than 32-bit indices address";
      return std::nullopt;
    }
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  if (x.shape.size() != 4) {
    why_not = std::to_string(x.shape.size()) + "-D input: the shader serves 2-D DeformConv only";
    return std::nullopt;
  }
  VKG_CHECK(w.shape.size() == 4, node.describe()
                                     << ": W must be [M, C / group, kH, kW], got " << shape_to_string(w.shape));
  const WindowGeometry g =
      resolve_window(node, Shape(x.shape.begin() + 2, x.shape.end()), conv_kernel_shape(node, w.shape), false);
  const int64_t group = node.attr_int("group", 1), offset_groups = node.attr_int("offset_group", 1);
  VKG_CHECK(group >= 1 && offset_groups >= 1 && x.shape[1] % group == 0 && w.shape[0] % group == 0 &&
                w.shape[1] * group == x.shape[1] && x.shape[1] % offset_groups == 0,
            node.describe() << ": group " << group << " and offset_group " << offset_groups
                            << " must divide the channels of X " << shape_to_string(x.shape) << " and W "
                            << shape_to_string(w.shape));
  if (x.size() == 0 || ctx.output(0).size() == 0) {
    why_not = "an empty tensor: there is nothing to sample";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0), wb = bind_input(ctx, plan, 1), ob = bind_input(ctx, plan, 2);
  const auto optional_input = [&](size_t i) {
    if (ctx.has_input(i)) return bind_input(ctx, plan, i);
    return add_weight(plan, to_storage(Tensor::scalar<float>(0.0f).reshaped({1}), x.storage, "an unread binding"));
  };
  const BindingRef bb = optional_input(3), mb = optional_input(4);
  const int64_t total = ctx.output(0).size();
  Dispatch d;
  d.shader = ctx.shader("conv/deform_conv");
  d.spec = {{0, kLocalSize}, {1, ctx.has_input(3) ? 1u : 0u}, {2, ctx.has_input(4) ? 1u : 0u}};
  d.bindings = {xb, wb, ob, bb, mb, BindingRef::output(0)};
  const auto u = [](int64_t v) { return uint32_t(v); };
  d.push = {u(total),           u(x.shape[1]),         u(x.shape[2]),         u(x.shape[3]),
            u(w.shape[0]),      u(g.out[0]),           u(g.out[1]),           u(g.kernel[0]),
            u(g.kernel[1]),     u(x.shape[1] / group), u(w.shape[0] / group), u(x.shape[1] / offset_groups),
            u(offset_groups),   u(g.strides[0]),       u(g.strides[1]),       u(g.pads_begin[0]),
            u(g.pads_begin[1]), u(g.dilations[0]),     u(g.dilations[1])};
  d.groups = linear_groups(uint64_t(total), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::conv_tactics
