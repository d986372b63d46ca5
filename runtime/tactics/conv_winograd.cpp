// The Winograd forms of 2-D 3x3 Convs (stride 1, one group): conv.winograd_f23,
// conv.winograd_f23_block<RxC> and conv.winograd_f43_block<RxC>. Separate from
// the other GEMM forms: the weights are transformed, not packed, and each plan
// is three stages (input transform, batched GEMM, output transform).
#include <algorithm>
#include <utility>

#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

namespace {

// U = G g G^T for every (m, c), as the GEMM's A of each of the (out_tile + 2)^2
// elements xi of U: [xi][C][m_pad]. G of F(2x2, 3x3), or of F(4x4, 3x3) (Lavin
// and Gray: interpolation points 0, -1, 1, -2, 2 and infinity).
std::vector<float> winograd_weights(const std::vector<float>& w, int64_t m_count, int64_t c_count, int64_t m_pad,
                                    int out_tile) {
  static const double kG23[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double kG43[6][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
  const int n = out_tile + 2;
  const double(*g_rows)[3] = out_tile == 4 ? kG43 : kG23;
  std::vector<float> out(size_t(n * n * c_count * m_pad), 0.0f);
  for (int64_t m = 0; m < m_count; ++m)
    for (int64_t c = 0; c < c_count; ++c) {
      const float* g = w.data() + (m * c_count + c) * 9;
      double gg[6][3];  // G g
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = g_rows[i][0] * g[j] + g_rows[i][1] * g[3 + j] + g_rows[i][2] * g[6 + j];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double u = gg[i][0] * g_rows[j][0] + gg[i][1] * g_rows[j][1] + gg[i][2] * g_rows[j][2];
          out[size_t(((i * n + j) * c_count + c) * m_pad + m)] = float(u);
        }
    }
  return out;
}

// Whether F(out_tile x out_tile, 3x3) serves the layer: 2-D 3x3 kernels with stride 1, dilation 1
// and group 1, constant weights, and with `block` (rows of the transformed weights read as vec4
// runs) input channels % 4 == 0.
bool winograd_serves(const LayerContext& ctx, const ConvShape& s, bool block, std::string& why_not) {
  const WindowGeometry& g = s.window;
  if (s.rank() != 2 || g.kernel != Shape{3, 3} || g.strides != std::vector<int64_t>{1, 1} ||
      g.dilations != std::vector<int64_t>{1, 1} || s.group != 1) {
    why_not = "serves 2-D 3x3 kernels with stride 1, dilation 1 and group 1 only";
    return false;
  }
  if (!ctx.input(1).is_constant()) {
    why_not = "needs constant weights to transform";
    return false;
  }
  if (block && s.in_channels % 4 != 0) {
    why_not = "needs input channels % 4 == 0 (vec4 runs of the transformed weights)";
    return false;
  }
  return true;
}

// The tiles of a Winograd layer: tiles_h x tiles_w per image, `positions` in all (rows of the
// transformed input p_pad apart), `xis` elements per transformed tile (16 or 36), and the elements
// of the transformed input (scratch 0) and of the products (scratch 1).
struct WinogradTiles {
  int64_t tiles_h = 0, tiles_w = 0, positions = 0, p_pad = 0, xis = 0;
  uint64_t v_elements = 0, m_elements = 0;
};

WinogradTiles winograd_tiles(const ConvShape& s, int out_tile) {
  const WindowGeometry& g = s.window;
  WinogradTiles t;
  t.tiles_h = (g.out[0] + out_tile - 1) / out_tile;
  t.tiles_w = (g.out[1] + out_tile - 1) / out_tile;
  // F(4x4): a row of whole tiles (OW % 4 == 0) over an input row of vec4 runs is padded to a
  // multiple of four tiles, so that both transforms work on quads (the padding tiles read zeros
  // and are not stored): det's 40x40 level, 10 tiles a row, 2.2 -> 1.2 ms.
  if (out_tile == 4 && g.out[1] % 4 == 0 && g.in[1] % 4 == 0 && g.pads_begin[1] >= 0)
    t.tiles_w = round_up(t.tiles_w, 4);
  t.positions = s.batch * t.tiles_h * t.tiles_w;
  t.p_pad = round_up(t.positions, 4);
  t.xis = (out_tile + 2) * (out_tile + 2);  // elements of a transformed tile: 16 or 36
  t.v_elements = uint64_t(t.xis * s.in_channels * t.p_pad);
  t.m_elements = uint64_t(t.xis * s.out_channels * t.positions);
  return t;
}

// The transformed weights as the GEMM's A: [xi][C][m_pad] for conv/gemm.comp, [xi][M][C] rows
// for gemm/block.comp (`block`).
std::vector<float> transformed_weights(const LayerContext& ctx, const ConvShape& s, const WinogradTiles& t,
                                       int64_t mg_pad, bool block, int out_tile) {
  std::vector<float> u_values = winograd_weights(float_values(*ctx.input(1).constant), s.out_channels, s.in_channels,
                                                 block ? s.out_channels : mg_pad, out_tile);
  if (block) {  // [xi][C][M] -> [xi][M][C]
    std::vector<float> rows(u_values.size());
    const int64_t m_count = s.out_channels, c_count = s.in_channels;
    for (int64_t xi = 0; xi < t.xis; ++xi)
      for (int64_t c = 0; c < c_count; ++c)
        for (int64_t m = 0; m < m_count; ++m)
          rows[size_t((xi * m_count + m) * c_count + c)] = u_values[size_t((xi * c_count + c) * m_count + m)];
    u_values = std::move(rows);
  }
  return u_values;
}

// The input transform (conv/winograd_input.comp, conv/winograd43_input.comp): X into scratch 0.
Dispatch input_transform(const LayerContext& ctx, const ConvShape& s, const WinogradTiles& t, int out_tile) {
  const WindowGeometry& g = s.window;
  // Four tiles of a row per invocation where rows of tiles and of inputs are vec4 runs; eight
  // (two such quads) stored eight wide where the device can.
  const bool vec4 = t.tiles_w % 4 == 0 && g.in[1] % 4 == 0 && g.pads_begin[1] >= 0;
  const uint64_t x_elements = uint64_t(ctx.input(0).size());
  const bool vec8 = vec4 && t.positions % 8 == 0 && ctx.texel_reads(x_elements, /*wide_stores=*/true);
  const uint32_t per_invocation = vec8 ? 8 : vec4 ? 4 : 1;
  const uint32_t in_form = vec8 ? 2 : vec4 ? 1 : 0;  // the transforms' specialization constant 1
  return dispatch(
      ctx, ctx.texel_shader(out_tile == 4 ? "conv/winograd43_input" : "conv/winograd_input", x_elements),
      {{1, in_form}, {2, uint32_t(vec4 ? g.pads_begin[1] : 0)}}, {BindingRef::input(0), BindingRef::scratch(0)},
      {uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(g.in[0]), uint32_t(g.in[1]), uint32_t(t.tiles_h),
       uint32_t(t.tiles_w), word(int32_t(g.pads_begin[0])), word(int32_t(g.pads_begin[1]))},
      t.v_elements / uint64_t(t.xis) / per_invocation);
}

// The output transform (conv/winograd_output.comp, conv/winograd43_output.comp): the products in
// scratch 1 plus the bias into the layer output.
Dispatch output_transform(const LayerContext& ctx, const ConvShape& s, const WinogradTiles& t, int out_tile,
                          BindingRef bias, bool has_bias) {
  const WindowGeometry& g = s.window;
  // Four whole tiles per invocation (F(4x4): or padding tiles past OW, which are not stored).
  const bool out_vec4 = t.tiles_w % 4 == 0 && g.out[1] % out_tile == 0;
  // F(4x4, 3x3): their output rows (16 values) stored eight wide where the device can.
  const bool out_vec8 =
      out_vec4 && out_tile == 4 && g.out[1] % 8 == 0 && ctx.texel_reads(t.m_elements, /*wide_stores=*/true);
  const uint32_t out_form = out_vec8 ? 2 : out_vec4 ? 1 : 0;
  return dispatch(ctx,
                  ctx.texel_shader(out_tile == 4 ? "conv/winograd43_output" : "conv/winograd_output", t.m_elements),
                  {{1, has_bias}, {2, out_form}}, {BindingRef::scratch(1), bias, BindingRef::output(0)},
                  {uint32_t(s.batch), uint32_t(s.out_channels), uint32_t(g.out[0]), uint32_t(g.out[1]),
                   uint32_t(t.tiles_h), uint32_t(t.tiles_w)},
                  t.m_elements / uint64_t(t.xis) / (out_vec4 ? 4 : 1));
}

}  // namespace

// Input transform (conv/winograd_input.comp) -> 16 GEMMs over the input
// channels (conv/gemm.comp with the 16 elements as its groups) -> output
// transform (conv/winograd_output.comp).
// The 16 GEMMs run on conv/gemm.comp (`blocking`), or with `block` on
// gemm/block.comp (register blocks: transformed weights as [16][M][C] rows,
// which needs C % 4 == 0). With out_tile 4, F(4x4, 3x3): the same with 36
// elements per tile (conv/winograd43_input.comp, conv/winograd43_output.comp).
std::optional<LayerPlan> plan_winograd(const LayerContext& ctx, GemmBlocking blocking, std::optional<BlockShape> block,
                                       std::string& why_not, int out_tile) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!winograd_serves(ctx, s, block.has_value(), why_not)) return std::nullopt;
  const WinogradTiles t = winograd_tiles(s, out_tile);
  const size_t bytes = storage_element_bytes(*st);
  if (!fits_scratch(ctx, t.v_elements * bytes, "the Winograd input tiles", why_not) ||
      !fits_scratch(ctx, t.m_elements * bytes, "the Winograd products", why_not) ||
      !fits_invocations(t.v_elements / uint64_t(t.xis), why_not) ||
      !fits_invocations(t.m_elements / uint64_t(t.xis), why_not))
    return std::nullopt;

  LayerPlan plan;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, t.v_elements * bytes));
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, t.m_elements * bytes));
  GemmShape shape;
  shape.group = t.xis;
  shape.mg = s.out_channels;
  shape.mg_pad = round_up(s.out_channels, blocking.tile_m);
  shape.positions = t.positions;
  shape.kdim = s.in_channels;
  shape.ldb = t.p_pad;
  shape.b_group = s.in_channels * t.p_pad;
  shape.aligned_b = true;
  const BindingRef u =
      add_weight(plan, float_weight(transformed_weights(ctx, s, t, shape.mg_pad, block.has_value(), out_tile), *st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "transformed weights",
                    why_not))
    return std::nullopt;
  const BindingRef no_bias = add_weight(plan, float_weight({}, *st));
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);

  plan.dispatches.push_back(input_transform(ctx, s, t, out_tile));
  std::optional<Dispatch> gemm;
  if (block) {
    // M[xi][m][p] = sum_c U[xi][m][c] * V[xi][c][p]: one batch of the product per xi.
    Product p;
    p.M = s.out_channels, p.N = t.positions, p.K = s.in_channels, p.batches = t.xis;
    p.a_bs = s.out_channels * s.in_channels, p.a_sm = s.in_channels, p.a_sk = 1;
    p.b_bs = s.in_channels * t.p_pad, p.b_sk = t.p_pad, p.b_sn = 1;
    gemm = block_dispatch(ctx, plan, p, *block, u, BindingRef::scratch(0), {no_bias, false}, {}, why_not,
                          BindingRef::scratch(1));
  } else {
    gemm =
        gemm_dispatch(ctx, shape, blocking, u, BindingRef::scratch(0), no_bias, false, BindingRef::scratch(1), why_not);
  }
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  plan.dispatches.push_back(output_transform(ctx, s, t, out_tile, bias, has_bias));
  return plan;
}

}  // namespace vkg::conv_tactics
