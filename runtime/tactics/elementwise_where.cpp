// Where (where.vec4, where.scalar on shaders/elementwise/where.comp): the
// three-input select, broadcasting like the binary ops.
#include "runtime/tactics/elementwise_common.h"

namespace vkg::elementwise_tactics {

std::optional<LayerPlan> plan_where(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  VKG_CHECK(ctx.has_input(0) && ctx.has_input(1) && ctx.has_input(2), ctx.node.describe() << ": expects 3 inputs");
  const LayerTensor& cond = ctx.input(0);
  const LayerTensor& x = ctx.input(1);
  const LayerTensor& y = ctx.input(2);
  const LayerTensor& out = ctx.output(0);
  if (cond.dtype != DType::Bool || x.dtype != y.dtype) {
    why_not = "expects a bool condition and two values of one type";
    return std::nullopt;
  }
  if (ctx.arith != Arith::F32 && is_int(x)) {
    why_not = "the f16 variant moves float16 values; the f32 variant moves 32-bit ones";
    return std::nullopt;
  }
  const Broadcast b = merge_broadcast(out.shape, {cond.shape, x.shape, y.shape});
  if (blocking == Blocking::Vec4 && !vec4_serves(b, why_not)) return std::nullopt;
  std::vector<uint32_t> push = {b.n, uint32_t(b.dims.size())};
  if (!push_broadcast(b, 7, push, why_not)) return std::nullopt;
  LayerPlan plan;
  std::vector<BindingRef> bindings;
  for (size_t i = 0; i < 3; ++i) bindings.push_back(bind_input(ctx, plan, i));
  bindings.push_back(BindingRef::output(0));
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/where",
                                          {blocking == Blocking::Vec4 ? 4u : 1u, input_layout(cond.shape, b.n),
                                           input_layout(x.shape, b.n), input_layout(y.shape, b.n)},
                                          bindings, push, invocations(b.n, blocking)));
  return plan;
}

}  // namespace vkg::elementwise_tactics
