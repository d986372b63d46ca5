// The direct forms of Conv and ConvTranspose: conv.direct and
// conv.transpose_gather (any Conv, runtime weights; conv/direct.comp and the
// any-rank conv/direct_nd.comp) and conv.direct_tile<R>x8 (2-D row tiles on
// conv/direct_tile.comp). Separate from the GEMM forms: no weights repacked as
// a product, one invocation per block of outputs summing every tap.
#include <algorithm>

#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

namespace {

// The any-rank fallback (conv/direct_nd.comp): raw weights, geometry in an int table.
std::optional<LayerPlan> plan_direct_nd(const LayerContext& ctx, const ConvShape& s, bool transpose,
                                        std::string& why_not) {
  LayerPlan plan;
  const StorageType st = ctx.input(0).storage;
  const BindingRef w = bind_input(ctx, plan, 1);
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  std::vector<int32_t> geo{int32_t(s.rank())};
  const WindowGeometry& g = s.window;
  for (size_t d = 0; d < s.rank(); ++d) {
    for (int64_t v : {g.in[d], g.out[d], g.kernel[d], g.strides[d], g.dilations[d], g.pads_begin[d]})
      geo.push_back(int32_t(v));
  }
  const BindingRef geometry = add_weight(plan, int_weight(geo));
  const int64_t k = s.kernel_size();
  const uint32_t w_stride_m = uint32_t(transpose ? k : s.cg() * k);
  const uint32_t w_stride_c = uint32_t(transpose ? s.mg() * k : k);
  const uint64_t invocations = uint64_t(s.batch * s.out_channels * s.out_size());
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(
      dispatch(ctx, ctx.shader("conv/direct_nd"), {{1, has_bias}, {2, transpose}},
               {BindingRef::input(0), w, bias, geometry, BindingRef::output(0)},
               {uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.out_channels), uint32_t(s.group), w_stride_m,
                w_stride_c, uint32_t(s.in_size()), uint32_t(s.out_size()), uint32_t(k)},
               invocations));
  return plan;
}

std::optional<LayerPlan> plan_direct(const LayerContext& ctx, const ConvShape& s, bool transpose,
                                     std::string& why_not) {
  if (!taps_fit(ctx, s, why_not)) return std::nullopt;
  if (s.rank() > 3) return plan_direct_nd(ctx, s, transpose, why_not);
  LayerPlan plan;
  const StorageType st = ctx.input(0).storage;
  const LayerTensor& w_in = ctx.input(1);
  const uint32_t out_channels = s.mg() >= 8 ? 8 : 4;  // per invocation
  const bool packed = w_in.is_constant();
  BindingRef w;
  if (packed) {
    w = add_weight(plan,
                   float_weight(pack_channel_blocks(float_values(*w_in.constant), s, transpose, out_channels), st));
    if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights",
                      why_not))
      return std::nullopt;
  } else {
    w = BindingRef::input(1);
  }
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  const Window3 win = window3(s.window);
  const int64_t k = s.kernel_size();
  std::vector<uint32_t> push{uint32_t(s.batch),
                             uint32_t(s.in_channels),
                             uint32_t(s.out_channels),
                             uint32_t(s.group),
                             uint32_t(transpose ? k : s.cg() * k),
                             uint32_t(transpose ? s.mg() * k : k)};
  push_window(push, win);
  // Positions per invocation along the last dim: for ConvTranspose, of one residue class of the stride.
  const uint64_t stride = uint64_t(win.strides[2]);
  const uint64_t row = transpose ? (win.out[2] + stride - 1) / stride : win.out[2];
  const uint32_t pixels = uint32_t(std::min<uint64_t>(kPixels, row));
  const uint64_t row_blocks = transpose ? stride * ((row + pixels - 1) / pixels) : (row + pixels - 1) / pixels;
  const uint64_t invocations =
      uint64_t(s.batch * s.group * ((s.mg() + out_channels - 1) / out_channels)) * win.out[0] * win.out[1] * row_blocks;
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(dispatch(ctx, ctx.shader("conv/direct"),
                                     {{1, pixels}, {2, packed}, {3, has_bias}, {4, transpose}, {5, out_channels}},
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)}, push, invocations));
  return plan;
}

}  // namespace

std::optional<LayerPlan> plan_conv_direct(const LayerContext& ctx, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  return plan_direct(ctx, s, false, why_not);
}

std::optional<LayerPlan> plan_transpose_gather(const LayerContext& ctx, std::string& why_not) {
  if (!single_transpose(ctx, why_not) || !float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_transpose_shape(ctx);
  check_output(ctx, s);
  return plan_direct(ctx, s, true, why_not);
}

// conv.direct_tile<R>x8: 2-D Conv with few input channels per group on conv/direct_tile.comp:
// 8 output channels x R rows x 8 outputs per invocation, each input row read once per input channel.
std::optional<LayerPlan> plan_direct_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!tile_geometry(s, 5, why_not)) return std::nullopt;
  const LayerTensor& w_in = ctx.input(1);
  if (!w_in.is_constant() || s.cg() * s.kernel_size() > 1024 || s.mg() < 4) {
    why_not =
        "needs constant weights, at most 1024 taps per output (input channels per group x kernel) and 4 or "
        "more output channels per group";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef w =
      add_weight(plan, float_weight(pack_channel_blocks(float_values(*w_in.constant), s, false, 8), *st));
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const WindowGeometry& g = s.window;
  const int64_t blocks = (s.mg() + 7) / 8;
  const uint64_t invocations =
      uint64_t(s.batch * s.group * blocks) * uint64_t((g.out[0] + rows - 1) / rows) * uint64_t((g.out[1] + 7) / 8);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  const auto u = [](int64_t v) { return uint32_t(v); };
  const uint64_t largest = std::max(uint64_t(ctx.input(0).size()), uint64_t(plan.weights.front().size()));
  const std::string shader = ctx.texel_shader("conv/direct_tile", largest, /*wide_stores=*/true);
  plan.dispatches.push_back(dispatch(
      ctx, shader, tile_spec(s, rows, has_bias, shader), {BindingRef::input(0), w, bias, BindingRef::output(0)},
      {u(s.batch), u(s.in_channels), u(s.out_channels), u(s.group), u(g.in[0]), u(g.in[1]), u(g.out[0]), u(g.out[1])},
      invocations));
  return plan;
}

}  // namespace vkg::conv_tactics
