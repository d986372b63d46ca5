// The depthwise forms (group == input channels): conv.depthwise and
// conv.depthwise_wide (conv/depthwise.comp, 1-3 spatial dims) and
// conv.depthwise_tile<R>x8 (2-D row tiles on conv/depthwise_tile.comp).
// Separate because a depthwise Conv is no product: each output channel reads
// one input channel.
#include <algorithm>

#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

std::optional<LayerPlan> plan_depthwise(const LayerContext& ctx, uint32_t max_pixels, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (s.group != s.in_channels) {
    why_not = "serves group == input channels only (group " + std::to_string(s.group) + ", " +
              std::to_string(s.in_channels) + " channels)";
    return std::nullopt;
  }
  if (!within_3d(s, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef w = bind_input(ctx, plan, 1);  // [M][1][K] is already the shader's [M][K]
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.out_channels)};
  push_window(push, win);
  const uint32_t pixels = std::min<uint32_t>(max_pixels, win.out[2]);
  if (max_pixels > kPixels && pixels <= kPixels) {
    why_not = "rows of " + std::to_string(win.out[2]) + " outputs leave nothing to widen (conv.depthwise serves them)";
    return std::nullopt;
  }
  const uint64_t invocations =
      uint64_t(s.batch * s.out_channels) * win.out[0] * win.out[1] * ((win.out[2] + pixels - 1) / pixels);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  plan.dispatches.push_back(dispatch(ctx, ctx.shader("conv/depthwise"), {{1, pixels}, {2, has_bias}},
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)}, push, invocations));
  return plan;
}

// conv.depthwise_tile<R>x8: 2-D depthwise on conv/depthwise_tile.comp, R output rows x 8
// outputs per invocation, each input row read once (as vec4s when aligned).
std::optional<LayerPlan> plan_depthwise_tile(const LayerContext& ctx, uint32_t rows, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (s.group != s.in_channels || s.out_channels != s.in_channels) {
    why_not = "serves group == input channels == output channels only";
    return std::nullopt;
  }
  if (!tile_geometry(s, 7, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef w = bind_input(ctx, plan, 1);  // [C][1][KH][KW] is the shader's [C][KH * KW]
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  const WindowGeometry& g = s.window;
  const int64_t planes = s.batch * s.in_channels;
  const uint64_t invocations = uint64_t(planes) * uint64_t((g.out[0] + rows - 1) / rows) * uint64_t((g.out[1] + 7) / 8);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  const uint64_t largest = uint64_t(std::max(ctx.input(0).size(), ctx.input(1).size()));  // X, W
  const std::string shader = ctx.texel_shader("conv/depthwise_tile", largest, /*wide_stores=*/true);
  plan.dispatches.push_back(dispatch(ctx, shader, tile_spec(s, rows, has_bias, shader),
                                     {BindingRef::input(0), w, bias, BindingRef::output(0)},
                                     {uint32_t(planes), uint32_t(s.in_channels), uint32_t(g.in[0]), uint32_t(g.in[1]),
                                      uint32_t(g.out[0]), uint32_t(g.out[1])},
                                     invocations));
  return plan;
}

}  // namespace vkg::conv_tactics
