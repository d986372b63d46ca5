// The 8-bit integer forms of Conv and MatMul: ConvInteger, MatMulInteger (int32
// results) and QLinearConv, QLinearMatMul (requantized to 8 bits). Operands are
// widened to int32 with their zero points subtracted and go through the same
// Conv/MatMul code as floats.
#include <cmath>
#include <limits>

#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg::linalg {

namespace {

bool is_8bit(DType dt) { return dt == DType::UInt8 || dt == DType::Int8; }

// int32(t) - zero_point. The zero point is absent (0), a single value, or `count` values
// each applying to a run of `inner` consecutive elements, cycling (per output channel,
// per row or per column).
Tensor subtract_zero_point(const Node& node, const Tensor& t, const Tensor* zp, int64_t inner, int64_t count,
                           const char* name) {
  VKG_CHECK(is_8bit(t.dtype()),
            node.describe() << ": " << name << " has type " << dtype_name(t.dtype()) << ", expected uint8 or int8");
  std::vector<int64_t> zero{0};
  if (zp) {
    VKG_CHECK(zp->dtype() == t.dtype(), node.describe()
                                            << ": the zero point of " << name << " has type " << dtype_name(zp->dtype())
                                            << " but " << name << " has type " << dtype_name(t.dtype()));
    VKG_CHECK(zp->size() == 1 || (zp->rank() == 1 && zp->size() == count),
              node.describe() << ": the zero point of " << name << " has shape " << shape_to_string(zp->shape())
                              << ", expected one value or " << count);
    zero = zp->to_int64s();
  }
  Tensor out(DType::Int32, t.shape());
  int32_t* o = out.data<int32_t>();
  const std::vector<int64_t> values = t.to_int64s();
  for (int64_t e = 0; e < t.size(); ++e) {
    const int64_t z = zero.size() == 1 ? zero[0] : zero[size_t((e / inner) % count)];
    o[e] = int32_t(values[size_t(e)] - z);
  }
  return out;
}

// int32(w) - w_zp for Conv weights, whose zero point is one value or one per output
// channel (dim 0).
Tensor conv_weights_minus_zero_point(const Node& node, const Tensor& w, const Tensor* w_zp) {
  const int64_t m = w.dim(0);
  return subtract_zero_point(node, w, w_zp, w.size() / std::max<int64_t>(m, 1), m, "w");
}

// A float scale input: one value, or (when per_channel > 0) `per_channel` values. Scales
// are float32, or float16/bfloat16 from opset 21.
std::vector<float> scales_of(const Node& node, const Tensor& s, int64_t per_channel, const char* name) {
  VKG_CHECK(is_floating(s.dtype()) && s.dtype() != DType::Float64,
            node.describe() << ": " << name << " has type " << dtype_name(s.dtype())
                            << ", expected float32, float16 or bfloat16");
  VKG_CHECK(s.size() == 1 || (per_channel > 0 && s.rank() == 1 && s.size() == per_channel),
            node.describe() << ": " << name << " has shape " << shape_to_string(s.shape()) << ", expected one value"
                            << (per_channel > 0 ? " or one per output channel" : ""));
  std::vector<float> v;
  for (double d : s.to_doubles()) v.push_back(float(d));
  return v;
}

// saturate(round_half_even(acc * multiplier[c]) + zero_point) in the 8-bit type of
// `zero_point`, where c = (element / inner) % multiplier.size().
Tensor requantize(const Node& node, const Tensor& acc, const std::vector<float>& multiplier, int64_t inner,
                  const Tensor& zero_point) {
  VKG_CHECK(
      is_8bit(zero_point.dtype()) && zero_point.size() == 1,
      node.describe() << ": the output zero point must be one uint8 or int8 value, got " << zero_point.describe());
  const bool is_unsigned = zero_point.dtype() == DType::UInt8;
  const double lo = is_unsigned ? 0.0 : -128.0;
  const double hi = is_unsigned ? 255.0 : 127.0;
  const double zp = zero_point.get_as_double(0);
  Tensor out(zero_point.dtype(), acc.shape());
  const int32_t* a = acc.data<int32_t>();
  const int64_t channels = int64_t(multiplier.size());
  for (int64_t e = 0; e < acc.size(); ++e) {
    const float m = multiplier[size_t(channels == 1 ? 0 : (e / inner) % channels)];
    const double v = std::nearbyint(double(float(a[e]) * m)) + zp;
    out.set_from_double(e, std::clamp(v, lo, hi));
  }
  return out;
}

}  // namespace

std::vector<Tensor> conv_integer(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const ConvSetup setup = conv_setup(node, x, w);
  const Tensor* x_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* w_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const Tensor xi = subtract_zero_point(node, x, x_zp, x.size(), 1, "x");
  const Tensor wi = conv_weights_minus_zero_point(node, w, w_zp);
  return one_output(conv_forward<int32_t>(xi, wi, nullptr, setup));
}

std::vector<Tensor> qlinear_conv(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(3);
  const ConvSetup setup = conv_setup(node, x, w);
  const int64_t m = w.dim(0);
  const Tensor xi = subtract_zero_point(node, x, &ctx.input(2), x.size(), 1, "x");
  const Tensor wi = conv_weights_minus_zero_point(node, w, &ctx.input(5));
  const Tensor* bias = conv_bias(ctx, 8, m, DType::Int32);
  const Tensor acc = conv_forward<int32_t>(xi, wi, bias, setup);

  const float x_scale = scales_of(node, ctx.input(1), 0, "x_scale")[0];
  const std::vector<float> w_scale = scales_of(node, ctx.input(4), m, "w_scale");
  const float y_scale = scales_of(node, ctx.input(6), 0, "y_scale")[0];
  std::vector<float> multiplier;
  for (float s : w_scale) multiplier.push_back(x_scale * s / y_scale);
  const int64_t plane = num_elements(setup.geometry.out);
  return one_output(requantize(node, acc, multiplier, plane, ctx.input(7)));
}

std::vector<Tensor> matmul_integer(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  // a's zero point may be one per row (M), b's one per column (N).
  const int64_t k = a.rank() >= 1 ? a.dim(a.rank() - 1) : 1;
  const int64_t rows = a.rank() >= 2 ? a.dim(a.rank() - 2) : 1;
  const int64_t cols = b.rank() >= 2 ? b.dim(b.rank() - 1) : 1;
  const Tensor* a_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* b_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const Tensor ai = subtract_zero_point(node, a, a_zp, k, rows, "A");
  const Tensor bi = subtract_zero_point(node, b, b_zp, 1, cols, "B");
  return one_output(matmul_forward<int32_t>(node, ai, bi));
}

std::vector<Tensor> qlinear_matmul(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  const Tensor ai = subtract_zero_point(node, a, &ctx.input(2), a.size(), 1, "a");
  const Tensor bi = subtract_zero_point(node, b, &ctx.input(5), b.size(), 1, "b");
  const Tensor acc = matmul_forward<int32_t>(node, ai, bi);
  const float a_scale = scales_of(node, ctx.input(1), 0, "a_scale")[0];
  const float b_scale = scales_of(node, ctx.input(4), 0, "b_scale")[0];
  const float y_scale = scales_of(node, ctx.input(6), 0, "y_scale")[0];
  return one_output(requantize(node, acc, {a_scale * b_scale / y_scale}, 1, ctx.input(7)));
}

}  // namespace vkg::linalg
