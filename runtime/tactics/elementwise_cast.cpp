// The type conversions: Cast and CastLike (cast.vec4, cast.scalar on
// shaders/elementwise/cast.comp), QuantizeLinear and DequantizeLinear
// (quantize.scalar) and DynamicQuantizeLinear (dynamic_quantize.two_pass).
#include <algorithm>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/core/quantization.h"
#include "runtime/tactics/elementwise_common.h"

namespace vkg::elementwise_tactics {

namespace {

// shaders/elementwise/cast.comp: FROM_* and TO_*.
enum CastFrom : uint32_t { kFromFloat = 0, kFromInt = 1 };
enum CastTo : uint32_t { kToFloat = 0, kToFloat16 = 1, kToBFloat16 = 2, kToInt = 3, kToBool = 4 };

// shaders/elementwise/quantize.comp: MODE_* and ROUND_*.
enum QuantizeMode : uint32_t { kQuantize = 0, kDequantize = 1 };

}  // namespace

std::optional<LayerPlan> plan_cast(const LayerContext& ctx, std::string& why_not, Blocking blocking) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);  // its dtype is the target type (Cast's `to`, CastLike's input 1)
  uint32_t to = kToFloat;
  switch (y.dtype) {
    case DType::Float32:
      to = kToFloat;
      break;
    case DType::Float16:
      to = ctx.precision == Precision::FP32 ? kToFloat16 : kToFloat;
      break;
    case DType::BFloat16:
      to = kToBFloat16;
      break;
    case DType::Bool:
      to = kToBool;
      break;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
      to = kToInt;
      break;
    case DType::Float64:
      why_not = "float64 is not supported on Vulkan";
      return std::nullopt;
  }
  const uint32_t from = is_int(x) ? kFromInt : kFromFloat;
  const uint32_t kind = int_kind(to == kToInt ? y.dtype : x.dtype);
  const uint32_t n = uint32_t(y.size());
  LayerPlan plan;
  const BindingRef in = bind_input(ctx, plan, 0);
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/cast",
                                          {blocking == Blocking::Vec4 ? 4u : 1u, from, to, kind},
                                          {in, BindingRef::output(0)}, {n}, invocations(n, blocking)));
  return plan;
}

// One dispatch of quantize.comp; the scale and zero point are bound like any input (a
// build-time constant becomes a weight).
std::optional<LayerPlan> plan_quantize(const LayerContext& ctx, std::string& why_not) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const bool quantize = node.op_type == "QuantizeLinear";
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& scale = ctx.input(1);
  const LayerTensor& y = ctx.output(0);
  const bool has_zero = ctx.has_input(2);
  VKG_CHECK(is_floating(scale.dtype) && scale.dtype != DType::Float64,
            node.describe() << ": the scale has type " << dtype_name(scale.dtype)
                            << ", expected float32, float16 or bfloat16");
  const DType quantized = quantize ? y.dtype : x.dtype;
  if (!quant::is_quantized_type(quantized, ctx.opset, !quantize) || (quantize && !is_int(x) && !is_floating(x.dtype))) {
    why_not = std::string(quantize ? "quantizing to " : "dequantizing ") + dtype_name(quantized) + " is not supported";
    return std::nullopt;
  }
  if (quantize && ctx.opset >= 21)
    (void)quant::quantized_type(node, ctx.opset, has_zero ? std::optional(ctx.input(2).dtype) : std::nullopt);
  if (has_zero) quant::check_zero_point(node, scale.shape, ctx.input(2).shape, ctx.input(2).dtype, quantized);
  const quant::Layout l = quant::layout(node, ctx.opset, x.shape, scale.shape);
  uint32_t round = 0;
  if (!quantize && ctx.precision == Precision::FP32)
    round = y.dtype == DType::Float16 ? 1u : y.dtype == DType::BFloat16 ? 2u : 0u;
  const auto range = quant::range(quantized);
  const uint32_t n = uint32_t(x.size());
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0);
  const BindingRef sb = bind_input(ctx, plan, 1);
  const BindingRef zb = has_zero ? bind_input(ctx, plan, 2) : sb;
  const auto word = [](int64_t v) { return uint32_t(std::max<int64_t>(v, 1)); };
  plan.dispatches.push_back(make_dispatch(
      ctx, "elementwise/quantize", {quantize ? kQuantize : kDequantize, is_int(x) ? 1u : 0u, has_zero ? 1u : 0u, round},
      {xb, sb, zb, BindingRef::output(0)},
      {n, word(l.axis_dim), word(l.inner), word(l.block), uint32_t(l.stride_outer), uint32_t(l.stride_axis),
       uint32_t(l.stride_inner), uint32_t(int32_t(range.first)), uint32_t(int32_t(range.second))},
      n));
  return plan;
}

// DynamicQuantizeLinear: a one-workgroup dispatch for the scale and zero point, then one
// invocation per element (shaders/elementwise/dynamic_quantize.comp).
std::optional<LayerPlan> plan_dynamic_quantize(const LayerContext& ctx, std::string& why_not) {
  if (!common_checks(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  if (x.dtype != DType::Float32) {
    why_not = std::string("x has type ") + dtype_name(x.dtype) + ", expected float32";
    return std::nullopt;
  }
  const uint32_t n = uint32_t(x.size());
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0);
  std::vector<BindingRef> outs;
  for (uint32_t i = 0; i < 3; ++i) {
    if (i < ctx.outputs.size() && ctx.outputs[i].present()) {
      outs.push_back(BindingRef::output(i));
    } else {
      plan.scratch_bytes.push_back(std::max<uint64_t>(16, i == 0 ? uint64_t(n) * 4 : 4));
      outs.push_back(BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1)));
    }
  }
  const std::vector<BindingRef> bindings = {xb, outs[0], outs[1], outs[2]};
  Dispatch stats = make_dispatch(ctx, "elementwise/dynamic_quantize", {0}, bindings, {n}, 1);
  stats.spec[0].value = 256;
  stats.groups = {1, 1, 1};
  plan.dispatches.push_back(std::move(stats));
  plan.dispatches.push_back(make_dispatch(ctx, "elementwise/dynamic_quantize", {1}, bindings, {n}, n));
  return plan;
}

}  // namespace vkg::elementwise_tactics
