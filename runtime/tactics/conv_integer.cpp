// The exact integer forms: conv.integer_direct.i32 (ConvInteger) and
// conv.qlinear_direct.i32 (QLinearConv) on conv/integer.comp, int32 sums and
// the reference's requantization whatever the layer's precision.
#include <algorithm>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

namespace {

bool is_8bit(DType d) { return d == DType::UInt8 || d == DType::Int8; }

// The plan of conv/integer.comp. Inputs: x, w and the zero points at x_zp/w_zp;
// with requantize, multiplier (one or M values), bias at bias_index and y_zp at y_zp_index.
struct IntegerInputs {
  size_t x = 0, w = 1, x_zp = 2, w_zp = 3;
  std::optional<size_t> bias, y_zp;
  std::vector<float> multiplier;  // empty: no requantization
};

std::optional<LayerPlan> plan_integer(const LayerContext& ctx, const IntegerInputs& in, std::string& why_not) {
  const Node& node = ctx.node;
  const ConvShape s = conv_shape(ctx, in.x, in.w);
  check_output(ctx, s);
  if (!within_3d(s, why_not) || !fits_tensors(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(in.x);
  const LayerTensor& w = ctx.input(in.w);
  VKG_CHECK(is_8bit(x.dtype) && is_8bit(w.dtype), node.describe()
                                                      << ": x and w must be uint8 or int8, got " << dtype_name(x.dtype)
                                                      << " and " << dtype_name(w.dtype));
  if (ctx.has_input(in.x_zp)) {
    VKG_CHECK(ctx.input(in.x_zp).size() == 1, node.describe() << ": the zero point of x must be one value, got "
                                                              << shape_to_string(ctx.input(in.x_zp).shape));
  }
  int64_t w_zp_count = 1;
  if (ctx.has_input(in.w_zp)) {
    w_zp_count = ctx.input(in.w_zp).size();
    VKG_CHECK(w_zp_count == 1 || w_zp_count == s.out_channels, node.describe()
                                                                   << ": the zero point of w has " << w_zp_count
                                                                   << " values, expected 1 or " << s.out_channels);
  }

  LayerPlan plan;
  // Constant weights (and zero point) are packed with the zero point subtracted.
  const bool packed = w.is_constant() && (!ctx.has_input(in.w_zp) || ctx.input(in.w_zp).is_constant());
  BindingRef w_bind;
  if (packed) {
    std::vector<int32_t> values = int_values(*w.constant);
    if (ctx.has_input(in.w_zp)) {
      const std::vector<int32_t> zp = int_values(*ctx.input(in.w_zp).constant);
      const int64_t per_channel = s.cg() * s.kernel_size();
      for (size_t e = 0; e < values.size(); ++e) values[e] -= zp[zp.size() == 1 ? 0 : e / size_t(per_channel)];
    }
    w_bind = add_weight(plan, int_weight(pack_channel_blocks(values, s, false, 4)));
    if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights",
                      why_not))
      return std::nullopt;
  } else {
    w_bind = BindingRef::input(uint32_t(in.w));
  }
  const BindingRef x_zp = bind_optional(ctx, plan, in.x_zp, StorageType::I32).first;
  const BindingRef w_zp = bind_optional(ctx, plan, in.w_zp, StorageType::I32).first;
  const auto [bias, has_bias] = bind_optional(ctx, plan, in.bias, StorageType::I32);
  const bool requantize = !in.multiplier.empty();
  const BindingRef mult = add_weight(plan, float_weight(in.multiplier, StorageType::F32));
  const BindingRef y_zp = in.y_zp ? bind_input(ctx, plan, *in.y_zp) : add_weight(plan, int_weight({}));
  int32_t y_lo = std::numeric_limits<int32_t>::min(), y_hi = std::numeric_limits<int32_t>::max();
  if (requantize) {
    const bool is_unsigned = ctx.output(0).dtype == DType::UInt8;
    y_lo = is_unsigned ? 0 : -128;
    y_hi = is_unsigned ? 255 : 127;
  }

  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch),        uint32_t(s.in_channels),
                             uint32_t(s.out_channels), uint32_t(s.group),
                             uint32_t(w_zp_count),     uint32_t(std::max<size_t>(1, in.multiplier.size()))};
  push_window(push, win);
  push.push_back(word(y_lo));
  push.push_back(word(y_hi));
  const uint32_t pixels = std::min<uint32_t>(kPixels, win.out[2]);
  const uint64_t invocations =
      uint64_t(s.batch * s.group * ((s.mg() + 3) / 4)) * win.out[0] * win.out[1] * ((win.out[2] + pixels - 1) / pixels);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(
      dispatch(ctx, "conv/integer.f32", {{1, pixels}, {2, packed}, {3, has_bias}, {4, requantize}},
               {BindingRef::input(uint32_t(in.x)), w_bind, x_zp, w_zp, bias, mult, y_zp, BindingRef::output(0)}, push,
               invocations));
  return plan;
}

// A float scale input that must be a build-time constant: one value, or
// `per_channel` values when per_channel > 0.
std::optional<std::vector<float>> constant_scales(const LayerContext& ctx, size_t index, int64_t per_channel,
                                                  std::string& why_not) {
  const LayerTensor& t = ctx.input(index);
  if (!t.is_constant()) {
    why_not = "scale input '" + t.name + "' must be a build-time constant (the multiplier is folded on the host)";
    return std::nullopt;
  }
  VKG_CHECK(t.constant->dtype() == DType::Float32, ctx.node.describe()
                                                       << ": scale '" << t.name << "' has type "
                                                       << dtype_name(t.constant->dtype()) << ", expected float32");
  VKG_CHECK(t.size() == 1 || (per_channel > 0 && t.size() == per_channel),
            ctx.node.describe() << ": scale '" << t.name << "' has shape " << shape_to_string(t.shape)
                                << ", expected one value" << (per_channel > 0 ? " or one per output channel" : ""));
  return float_values(*t.constant);
}

}  // namespace

std::optional<LayerPlan> plan_conv_integer(const LayerContext& ctx, std::string& why_not) {
  return plan_integer(ctx, IntegerInputs{}, why_not);
}

std::optional<LayerPlan> plan_qlinear_conv(const LayerContext& ctx, std::string& why_not) {
  IntegerInputs in;
  in.x = 0;
  in.x_zp = 2;
  in.w = 3;
  in.w_zp = 5;
  in.bias = 8;
  in.y_zp = 7;
  VKG_CHECK(!ctx.input(3).shape.empty(), ctx.node.describe() << ": weights must have rank >= 3");
  const int64_t m = ctx.input(3).shape[0];
  const std::optional<std::vector<float>> x_scale = constant_scales(ctx, 1, 0, why_not);
  if (!x_scale) return std::nullopt;
  const std::optional<std::vector<float>> w_scale = constant_scales(ctx, 4, m, why_not);
  if (!w_scale) return std::nullopt;
  const std::optional<std::vector<float>> y_scale = constant_scales(ctx, 6, 0, why_not);
  if (!y_scale) return std::nullopt;
  // Exactly the reference's float arithmetic: x_scale * w_scale / y_scale.
  for (float ws : *w_scale) in.multiplier.push_back((*x_scale)[0] * ws / (*y_scale)[0]);
  VKG_CHECK(ctx.input(7).size() == 1 && is_8bit(ctx.input(7).dtype),
            ctx.node.describe() << ": the output zero point must be one uint8 or int8 value");
  return plan_integer(ctx, in, why_not);
}

}  // namespace vkg::conv_tactics
