// Ops that convert or pass their input through: Cast, CastLike, Identity, Dropout
// (inference only), and the linear (de)quantizations QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/core/quantization.h"
#include "runtime/reference/ops/elementwise_util.h"

namespace vkg::elementwise {

namespace {

// Cast's `to` before opset 6: a type name string ("FLOAT", "INT64", ...).
DType dtype_from_legacy_name(const KernelContext& ctx, const std::string& name) {
  static const struct {
    const char* name;
    DType dtype;
  } table[] = {
      {"FLOAT", DType::Float32}, {"FLOAT16", DType::Float16}, {"DOUBLE", DType::Float64}, {"INT8", DType::Int8},
      {"INT16", DType::Int16},   {"INT32", DType::Int32},     {"INT64", DType::Int64},    {"UINT8", DType::UInt8},
      {"UINT16", DType::UInt16}, {"UINT32", DType::UInt32},   {"UINT64", DType::UInt64},  {"BOOL", DType::Bool},
  };
  for (const auto& entry : table)
    if (name == entry.name) return entry.dtype;
  VKG_THROW(ctx.node.describe() << ": cannot cast to type \"" << name << "\"");
}

std::vector<Tensor> cast_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const auto attr = ctx.node.attrs.find("to");
  VKG_CHECK(attr != ctx.node.attrs.end(), ctx.node.describe() << ": required attribute 'to' is missing");
  if (attr->second.kind == Attribute::Kind::String) {
    return one_output(ctx.input(0).cast(dtype_from_legacy_name(ctx, attr->second.s)));
  }
  const int64_t to = ctx.node.attr_int("to");
  const std::optional<DType> dtype = dtype_from_onnx(int32_t(to));
  VKG_CHECK(dtype, ctx.node.describe() << ": casting to ONNX data type " << to << (to == 8 ? " (string)" : "")
                                       << " is not supported");
  return one_output(ctx.input(0).cast(*dtype));
}

std::vector<Tensor> cast_like_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  return one_output(ctx.input(0).cast(ctx.input(1).dtype()));
}

std::vector<Tensor> identity_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, 1);
  return one_output(ctx.input(0));
}

// A scalar input read as double (Dropout's ratio and training_mode).
double scalar_value(const KernelContext& ctx, size_t index) {
  const Tensor& t = ctx.input(index);
  VKG_CHECK(t.size() == 1, ctx.node.describe()
                               << ": input " << index << " must be a scalar, got shape " << shape_to_string(t.shape()));
  return t.get_as_double(0);
}

// Dropout at inference: the output is the input and the optional mask is all true (all
// ones of the input's type before opset 10). Training mode with a non-zero ratio would
// need random numbers and is refused.
std::vector<Tensor> dropout_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, ctx.opset < 12 ? 1 : 3);
  const Tensor& x = ctx.input(0);
  if (ctx.opset >= 12 && ctx.has_input(2) && scalar_value(ctx, 2) != 0.0) {
    const double ratio = ctx.has_input(1) ? scalar_value(ctx, 1) : 0.5;
    VKG_CHECK(ratio == 0.0, ctx.node.describe() << ": training mode with ratio " << ratio
                                                << " is not supported by the reference backend (inference only)");
  }
  std::vector<Tensor> outputs;
  outputs.push_back(x);
  if (ctx.num_outputs() > 1) {
    const DType mask_type = ctx.opset < 10 ? x.dtype() : DType::Bool;
    Tensor mask(mask_type, x.shape());
    for (int64_t i = 0; i < mask.size(); ++i) mask.set_from_double(i, 1.0);
    outputs.push_back(std::move(mask));
  }
  return outputs;
}

// A float scale input of QuantizeLinear or DequantizeLinear.
void check_scale(const KernelContext& ctx, const Tensor& scale) {
  VKG_CHECK(is_floating(scale.dtype()) && scale.dtype() != DType::Float64,
            ctx.node.describe() << ": the scale has type " << dtype_name(scale.dtype())
                                << ", expected float32, float16 or bfloat16");
}

// round_half_even(q) + zero_point saturated to [lo, hi]; NaN quantizes as 0.
int64_t quantize_value(double q, int64_t zero_point, std::pair<int64_t, int64_t> range) {
  if (std::isnan(q)) q = 0;
  const double r = std::nearbyint(std::clamp(q, -1e12, 1e12));
  return std::clamp(int64_t(r) + zero_point, range.first, range.second);
}

// y = saturate(round_half_even(x / y_scale) + y_zero_point), the division in float32
// (in double for int32 x); per tensor, per axis or per block (runtime/core/quantization.h).
std::vector<Tensor> quantize_linear_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  VKG_CHECK((is_floating(x.dtype()) && x.dtype() != DType::Float64) || x.dtype() == DType::Int32,
            node.describe() << ": x has type " << dtype_name(x.dtype())
                            << ", expected float32, float16, bfloat16 or int32");
  check_scale(ctx, scale);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const DType out_type = quant::quantized_type(node, ctx.opset, zp ? std::optional(zp->dtype()) : std::nullopt);
  const quant::Layout layout = quant::layout(node, ctx.opset, x.shape(), scale.shape());
  if (zp) quant::check_zero_point(node, scale.shape(), zp->shape(), zp->dtype(), out_type);
  const std::vector<double> scales = scale.to_doubles();
  const std::vector<int64_t> zeros = zp ? zp->to_int64s() : std::vector<int64_t>(scales.size(), 0);
  const std::vector<double> xs = x.to_doubles();
  const bool int_x = x.dtype() == DType::Int32;
  const auto range = quant::range(out_type);
  Tensor y(out_type, x.shape());
  for (int64_t e = 0; e < x.size(); ++e) {
    const auto p = size_t(layout.index(e));
    const double q = int_x ? xs[size_t(e)] / scales[p] : double(float(xs[size_t(e)]) / float(scales[p]));
    y.set_from_double(e, double(quantize_value(q, zeros[p], range)));
  }
  return one_output(std::move(y));
}

// y = (x - x_zero_point) * x_scale, of the scale's type (or output_dtype, opset 23).
std::vector<Tensor> dequantize_linear_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  VKG_CHECK(quant::is_quantized_type(x.dtype(), ctx.opset, true),
            node.describe() << ": x has type " << dtype_name(x.dtype()) << ", which opset " << ctx.opset
                            << " does not dequantize (uint8, int8, int32; uint16, int16 from opset 21)");
  check_scale(ctx, scale);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const quant::Layout layout = quant::layout(node, ctx.opset, x.shape(), scale.shape());
  if (zp) quant::check_zero_point(node, scale.shape(), zp->shape(), zp->dtype(), x.dtype());
  DType out_type = ctx.opset >= 19 ? scale.dtype() : DType::Float32;
  if (const int64_t requested = ctx.opset >= 23 ? node.attr_int("output_dtype", 0) : 0; requested != 0) {
    const std::optional<DType> t = dtype_from_onnx(int32_t(requested));
    VKG_CHECK(t && is_floating(*t) && *t != DType::Float64,
              node.describe() << ": output_dtype " << requested << " is not float32, float16 or bfloat16");
    out_type = *t;
  }
  const std::vector<double> scales = scale.to_doubles();
  const std::vector<int64_t> zeros = zp ? zp->to_int64s() : std::vector<int64_t>(scales.size(), 0);
  const std::vector<int64_t> xs = x.to_int64s();
  Tensor y(out_type, x.shape());
  for (int64_t e = 0; e < x.size(); ++e) {
    const auto p = size_t(layout.index(e));
    y.set_from_double(e, double(float(double(xs[size_t(e)] - zeros[p]) * scales[p])));
  }
  return one_output(std::move(y));
}

// DynamicQuantizeLinear (opset 11): uint8 quantization of float32 x with the scale and
// zero point that map [min(x, 0), max(x, 0)] onto [0, 255], computed in float32 as ONNX's
// reference does.
std::vector<Tensor> dynamic_quantize_linear_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.dtype() == DType::Float32, ctx.node.describe() << ": x has type " << dtype_name(x.dtype())
                                                             << ", expected float32");
  const float* v = x.data<float>();
  float lo = 0, hi = 0;
  for (int64_t e = 0; e < x.size(); ++e) lo = std::min(lo, v[e]), hi = std::max(hi, v[e]);
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zero = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  Tensor y(DType::UInt8, x.shape());
  for (int64_t e = 0; e < x.size(); ++e)
    y.set_from_double(e, double(quantize_value(double(v[e] / scale), int64_t(zero), {0, 255})));
  return {std::move(y), Tensor::scalar<float>(scale), Tensor::scalar<uint8_t>(uint8_t(zero))};
}

}  // namespace

void register_conversion_ops(OpRegistry& registry) {
  registry.add("Cast", cast_kernel);
  registry.add("CastLike", cast_like_kernel);
  registry.add("Identity", identity_kernel);
  registry.add("Dropout", dropout_kernel);
  registry.add("QuantizeLinear", quantize_linear_kernel);
  registry.add("DequantizeLinear", dequantize_linear_kernel);
  registry.add("DynamicQuantizeLinear", dynamic_quantize_linear_kernel);
}

}  // namespace vkg::elementwise
