// The integer gemm layers on the exact int32 shader gemm/integer:
// MatMulInteger, QLinearMatMul (requantized as the reference does) and MatMul
// or Gemm on int32, int64 or uint32 tensors.
#include <bit>

#include "runtime/core/error.h"
#include "runtime/tactics/gemm_planners.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::gemm_tactics {

namespace {

// The integer shader's own flag, beside kGemmFlagHasC and kGemmFlagBatchTable (gemm_common.h).
constexpr uint32_t kFlagRequantize = 4;

bool is_8bit(DType d) { return d == DType::UInt8 || d == DType::Int8; }

struct IntegerExtras {
  std::optional<size_t> a_zp, b_zp;  // zero point inputs
  int64_t a_zp_sm = 0, b_zp_sn = 0;
  bool requantize = false;
  float multiplier = 1;
  int32_t y_zero_point = 0, y_lo = 0, y_hi = 0;
  std::optional<size_t> c;  // Gemm's C
  int64_t c_sm = 0, c_sn = 0;
};

// Checks a zero point input of an 8-bit operand: one value, or `count` values (1-D).
void check_zero_point(const LayerContext& ctx, size_t zp, size_t operand, int64_t count, const char* name) {
  const LayerTensor& z = ctx.input(zp);
  VKG_CHECK(z.dtype == ctx.input(operand).dtype,
            ctx.node.describe() << ": the zero point of " << name << " has type " << dtype_name(z.dtype) << " but "
                                << name << " has type " << dtype_name(ctx.input(operand).dtype));
  VKG_CHECK(z.size() == 1 || (z.shape.size() == 1 && z.size() == count),
            ctx.node.describe() << ": the zero point of " << name << " has shape " << shape_to_string(z.shape)
                                << ", expected one value or " << count);
}

// A scale input holding one float32 value (float16 or bfloat16 from opset 21), which must
// be a build-time constant.
std::optional<float> constant_scale(const LayerContext& ctx, size_t i, const char* name, std::string& why_not) {
  const LayerTensor& s = ctx.input(i);
  VKG_CHECK(is_floating(s.dtype) && s.dtype != DType::Float64 && s.size() == 1,
            ctx.node.describe() << ": " << name << " must be one float32, float16 or bfloat16 value, got "
                                << dtype_name(s.dtype) << shape_to_string(s.shape));
  if (!s.is_constant()) {
    why_not = std::string(name) + " must be a build-time constant";
    return std::nullopt;
  }
  return float(s.constant->get_as_double(0));
}

LayerPlan integer_plan(const LayerContext& ctx, const Product& p, const IntegerExtras& x) {
  LayerPlan plan;
  const BindingRef zero = zero_weight(plan);
  const BindingRef a = bind_input(ctx, plan, p.a_input);
  const BindingRef b = bind_input(ctx, plan, p.b_input);
  const BindingRef c = x.c ? bind_input(ctx, plan, *x.c) : zero;
  const BindingRef a_zp = x.a_zp ? bind_input(ctx, plan, *x.a_zp) : zero;
  const BindingRef b_zp = x.b_zp ? bind_input(ctx, plan, *x.b_zp) : zero;
  const BindingRef table = batch_table(p, plan, zero);
  uint32_t flags = (x.c ? kGemmFlagHasC : 0) | (x.requantize ? kFlagRequantize : 0);
  Dispatch d;
  d.shader = "gemm/integer.f32";
  d.spec = {{0, kLocalSize}};
  d.bindings = {a, b, c, a_zp, b_zp, BindingRef::output(0), table};
  d.push = gemm_common_push(p, x.c_sm, x.c_sn, flags);
  d.push.insert(d.push.end(), {uint32_t(x.a_zp_sm), uint32_t(x.b_zp_sn), float_bits(x.multiplier),
                               uint32_t(x.y_zero_point), uint32_t(x.y_lo), uint32_t(x.y_hi), 0u});
  d.groups = linear_groups(uint64_t(p.batches * p.M * p.N), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace

std::optional<LayerPlan> plan_matmul_integer(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  for (size_t i : {0, 1}) {
    VKG_CHECK(is_8bit(ctx.input(i).dtype), ctx.node.describe()
                                               << ": input " << i << " has type " << dtype_name(ctx.input(i).dtype)
                                               << ", expected uint8 or int8");
  }
  const Product p = matmul_product(ctx, 0, 1, false);
  IntegerExtras x;
  // A's zero point may be one per row, B's one per column.
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (ctx.has_input(2)) {
    check_zero_point(ctx, 2, 0, a.size() >= 2 ? a[a.size() - 2] : 1, "A");
    x.a_zp = 2;
    x.a_zp_sm = ctx.input(2).size() == 1 ? 0 : 1;
  }
  if (ctx.has_input(3)) {
    check_zero_point(ctx, 3, 1, b.size() >= 2 ? b.back() : 1, "B");
    x.b_zp = 3;
    x.b_zp_sn = ctx.input(3).size() == 1 ? 0 : 1;
  }
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

std::optional<LayerPlan> plan_qlinear_matmul(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  for (size_t i : {0, 3}) {
    VKG_CHECK(is_8bit(ctx.input(i).dtype), ctx.node.describe()
                                               << ": input " << i << " has type " << dtype_name(ctx.input(i).dtype)
                                               << ", expected uint8 or int8");
  }
  const Product p = matmul_product(ctx, 0, 3, false);
  IntegerExtras x;
  check_zero_point(ctx, 2, 0, 1, "a");
  check_zero_point(ctx, 5, 3, 1, "b");
  x.a_zp = 2;
  x.b_zp = 5;
  const std::optional<float> a_scale = constant_scale(ctx, 1, "a_scale", why_not);
  const std::optional<float> b_scale = constant_scale(ctx, 4, "b_scale", why_not);
  const std::optional<float> y_scale = constant_scale(ctx, 6, "y_scale", why_not);
  if (!a_scale || !b_scale || !y_scale) return std::nullopt;
  const LayerTensor& y_zp = ctx.input(7);
  VKG_CHECK(is_8bit(y_zp.dtype) && y_zp.size() == 1,
            ctx.node.describe() << ": the output zero point must be one uint8 or int8 value, got "
                                << dtype_name(y_zp.dtype) << shape_to_string(y_zp.shape));
  if (!y_zp.is_constant()) {
    why_not = "y_zero_point must be a build-time constant";
    return std::nullopt;
  }
  x.requantize = true;
  x.multiplier = *a_scale * *b_scale / *y_scale;  // in float, as the reference
  x.y_zero_point = int32_t(y_zp.constant->get_as_double(0));
  x.y_lo = y_zp.dtype == DType::UInt8 ? 0 : -128;
  x.y_hi = y_zp.dtype == DType::UInt8 ? 255 : 127;
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

std::optional<LayerPlan> plan_integer_product(const LayerContext& ctx, std::string& why_not) {
  const bool gemm = ctx.node.op_type == "Gemm";
  const Product p = gemm ? gemm_product(ctx) : matmul_product(ctx, 0, 1, false);
  IntegerExtras x;
  if (gemm) {
    const bool has_c = ctx.has_input(2);
    if (ctx.node.attr_float("alpha", 1.0f) != 1.0f || (has_c && ctx.node.attr_float("beta", 1.0f) != 1.0f)) {
      why_not = "integer Gemm with alpha or beta other than 1 (computed in float64 by ONNX) is not supported";
      return std::nullopt;
    }
    if (has_c) {
      x.c = 2;
      const auto [c_sm, c_sn] = gemm_c_strides(ctx, p.M, p.N);
      x.c_sm = c_sm, x.c_sn = c_sn;
    }
  }
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

}  // namespace vkg::gemm_tactics
