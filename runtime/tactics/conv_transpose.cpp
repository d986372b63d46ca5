// The ConvTranspose forms that are not a direct gather: conv.transpose_block<RxC>
// (kernel == strides: one GEMM on gemm/block.comp storing each tap where it
// lands) and conv.transpose_pair (two such ConvTransposes fused into one layer,
// conv/transpose_pair.comp). The gather forms are in conv_direct.cpp and
// conv_gemm.cpp (conv.transpose_implicit_gemm).
#include <algorithm>
#include <bit>

#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

// conv.transpose_block<RxC>: ConvTranspose whose kernel equals its strides,
// without padding or dilation (every output position gets exactly one tap of
// one input position: the upsampling "deconvolution" of segmentation heads)
// is one GEMM, Y'[(m, tap)][p] = sum_c W[c][m][tap] * X[c][p], on
// gemm/block.comp, whose store puts row (m, tap), column p where the tap
// lands in the output (kDepthToSpace).
std::optional<LayerPlan> plan_transpose_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  if (!single_transpose(ctx, why_not)) return std::nullopt;
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_transpose_shape(ctx);
  check_output(ctx, s);
  if (!within_3d(s, why_not)) return std::nullopt;
  const WindowGeometry& g = s.window;
  for (size_t d = 0; d < s.rank(); ++d) {
    if (g.kernel[d] != g.strides[d] || g.dilations[d] != 1 || g.pads_begin[d] != 0 ||
        g.out[d] != g.in[d] * g.strides[d]) {
      why_not = "serves kernels equal to their strides, without padding, dilation or output padding";
      return std::nullopt;
    }
  }
  const LayerTensor& w_in = ctx.input(1);
  const int64_t taps = s.kernel_size(), positions = s.in_size(), channels = s.in_channels;
  if (s.group != 1 || !w_in.is_constant() || (ctx.has_input(2) && !ctx.input(2).is_constant()) || channels % 4 != 0 ||
      positions % 4 != 0) {
    why_not = "needs one group, constant weights and bias, input channels % 4 == 0 and input positions % 4 == 0";
    return std::nullopt;
  }
  // A[(m, tap)][c] = W[c][m][tap]; the bias repeats over the taps of its channel.
  const std::vector<float> w = float_values(*w_in.constant);
  const int64_t rows = s.out_channels * taps;
  std::vector<float> a(size_t(rows * channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t r = 0; r < rows; ++r) a[size_t(r * channels + c)] = w[size_t(c * rows + r)];
  LayerPlan plan;
  const BindingRef a_ref = add_weight(plan, float_weight(std::move(a), *st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  std::pair<BindingRef, bool> bias;
  if (ctx.has_input(2)) {
    std::vector<float> expanded;
    for (float v : float_values(*ctx.input(2).constant)) expanded.insert(expanded.end(), size_t(taps), v);
    bias = {add_weight(plan, float_weight(std::move(expanded), *st)), true};
  } else {
    bias = bind_optional(ctx, plan, std::nullopt, *st);
  }
  Product p;
  p.M = rows, p.N = positions, p.K = channels, p.batches = s.batch;
  p.a_bs = 0, p.a_sm = channels, p.a_sk = 1;
  p.b_bs = channels * positions, p.b_sk = positions, p.b_sn = 1;
  const Window3 win = window3(g);
  const std::array<uint32_t, 6> map = {win.in[0], win.in[1], win.in[2], win.kernel[0], win.kernel[1], win.kernel[2]};
  std::optional<Dispatch> d = block_dispatch(ctx, plan, p, block, a_ref, BindingRef::input(0), bias, map, why_not);
  if (!d) return std::nullopt;
  plan.dispatches.push_back(std::move(*d));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.transpose_pair: two upsampling ConvTransposes fused into one layer (graph_optimizer.h,
// transpose_pair) on conv/transpose_pair.comp, the intermediate tensor kept in registers.

constexpr int64_t kPairMaxHidden = 128;  // C1: the first ConvTranspose's outputs an invocation holds per input
constexpr int64_t kPairMaxOutputs = 64;  // 4 * kh2 * kw2: the outputs an invocation writes per channel

std::optional<LayerPlan> plan_transpose_pair(const LayerContext& ctx, std::string& why_not) {
  const std::optional<TransposePair> pair = transpose_pair(ctx.node);
  if (!pair) {
    why_not = "serves layers of two ConvTransposes only (graph_optimizer.h, transpose_pair)";
    return std::nullopt;
  }
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(
      ctx.inputs.size() == 5 && x.shape.size() == 4 && ctx.input(1).shape.size() == 4 && ctx.input(3).shape.size() == 4,
      ctx.node.describe() << ": a pair of ConvTransposes takes X, W1, B1, W2 and B2 (2-D)");
  const Shape& w1 = ctx.input(1).shape;
  const Shape& w2 = ctx.input(3).shape;
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t c1 = w1[1], c2 = w2[1];
  const Shape out = {n, c2, h * w1[2] * w2[2], w * w1[3] * w2[3]};
  VKG_CHECK(w1[0] == c && w2[0] == c1 && ctx.input(2).size() == c1 && ctx.input(4).size() == c2 &&
                pair->kernel == std::vector<int64_t>(w2.begin() + 2, w2.end()) && ctx.output(0).shape == out,
            ctx.node.describe() << ": weights " << shape_to_string(w1) << " and " << shape_to_string(w2)
                                << " do not chain from " << shape_to_string(x.shape) << " to "
                                << shape_to_string(ctx.output(0).shape));
  for (size_t i = 1; i < 5; ++i) {
    if (!ctx.input(i).is_constant()) {
      why_not = "needs constant weights and biases";
      return std::nullopt;
    }
  }
  const int64_t taps1 = w1[2] * w1[3];
  if (w % 4 != 0 || c1 > kPairMaxHidden || 4 * w2[2] * w2[3] > kPairMaxOutputs) {
    why_not = "serves input rows of a multiple of 4, C1 <= " + std::to_string(kPairMaxHidden) +
              " and 4 * kh2 * kw2 <= " + std::to_string(kPairMaxOutputs) + " only";
    return std::nullopt;
  }
  const uint64_t invocations = uint64_t(n * h * (w / 4) * taps1);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;  // float_storage checked the tensors
  LayerPlan plan;
  // W1 [C][C1][taps] -> [C][taps][C1]: one tap's C1 weights a run.
  const std::vector<float> w1_values = float_values(*ctx.input(1).constant);
  std::vector<float> packed(w1_values.size());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t m = 0; m < c1; ++m)
      for (int64_t t = 0; t < taps1; ++t)
        packed[size_t((ci * taps1 + t) * c1 + m)] = w1_values[size_t((ci * c1 + m) * taps1 + t)];
  std::vector<BindingRef> bindings = {BindingRef::input(0), add_weight(plan, float_weight(std::move(packed), *st))};
  for (size_t i = 2; i < 5; ++i) bindings.push_back(bind_input(ctx, plan, i));
  bindings.push_back(BindingRef::output(0));
  const FusedActivation& inner = pair->inner;
  plan.dispatches.push_back(dispatch(
      ctx,
      ctx.texel_shader("conv/transpose_pair", uint64_t(std::max({x.size(), ctx.input(1).size(), ctx.input(3).size()}))),
      {{1, uint32_t(c1)},
       {2, uint32_t(w1[2])},
       {3, uint32_t(w1[3])},
       {4, uint32_t(w2[2])},
       {5, uint32_t(w2[3])},
       {6, uint32_t(inner.kind)},
       {7, std::bit_cast<uint32_t>(inner.alpha)},
       {8, std::bit_cast<uint32_t>(inner.beta)},
       {9, std::bit_cast<uint32_t>(inner.post_scale)},
       {10, std::bit_cast<uint32_t>(inner.post_shift)}},
      std::move(bindings), {uint32_t(n), uint32_t(c), uint32_t(h), uint32_t(w), uint32_t(c2)}, invocations));
  return plan;
}

}  // namespace vkg::conv_tactics
