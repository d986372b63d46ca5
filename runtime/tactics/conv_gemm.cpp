// The Conv forms that run a GEMM: conv.im2col_gemm and conv.1x1 (conv/gemm.comp),
// conv.1x1_block, conv.im2col_block and their _wide_a builds (gemm/block.comp),
// the GPU forms conv.1x1_smemv, conv.1x1_coopmatv and conv.im2col_splitk, and
// conv.implicit_gemm / conv.transpose_implicit_gemm (the shared-memory core
// reading the window as it stages B). gemm_dispatch and block_dispatch are
// shared with the Winograd and ConvTranspose forms (conv_common.h).
#include <algorithm>

#include "runtime/tactics/conv_common.h"

namespace vkg::conv_tactics {

namespace {

// Weights [M][cg][K] as the GEMM's A: [group][cg * K][mg_pad].
std::vector<float> pack_gemm_weights(const std::vector<float>& w, const ConvShape& s, int64_t mg_pad) {
  const int64_t kdim = s.cg() * s.kernel_size(), mg = s.mg();
  std::vector<float> out(size_t(s.group * kdim * mg_pad), 0.0f);
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t k = 0; k < kdim; ++k) out[size_t((g * kdim + k) * mg_pad + m)] = w[size_t((g * mg + m) * kdim + k)];
  return out;
}

// The GEMM of a Conv over B: packs the constant weights as A, binds the bias
// and writes the layer output.
std::optional<Dispatch> conv_gemm_dispatch(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s,
                                           GemmBlocking blocking, BindingRef b, GemmShape shape, std::string& why_not) {
  if (!taps_fit(ctx, s, why_not)) return std::nullopt;
  const StorageType st = ctx.input(0).storage;
  const LayerTensor& w_in = ctx.input(1);
  if (!w_in.is_constant()) {
    why_not = "needs constant weights to pack (conv.direct serves runtime weights)";
    return std::nullopt;
  }
  shape.batch = s.batch;
  shape.group = s.group;
  shape.mg = s.mg();
  shape.mg_pad = round_up(s.mg(), blocking.tile_m);
  shape.positions = s.out_size();
  shape.kdim = s.cg() * s.kernel_size();
  const BindingRef a =
      add_weight(plan, float_weight(pack_gemm_weights(float_values(*w_in.constant), s, shape.mg_pad), st));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "packed weights", why_not))
    return std::nullopt;
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, st);
  return gemm_dispatch(ctx, shape, blocking, a, b, bias, has_bias, BindingRef::output(0), why_not);
}

// The im2col columns of a Conv into scratch 0, [batch][C * kernel][positions rounded up to 4]
// (rows of a group consecutive; the dispatch added to `plan`): the row stride of B for the GEMM
// after it, or nullopt (why_not filled).
std::optional<int64_t> add_im2col(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s, StorageType st,
                                  std::string& why_not) {
  if (!within_3d(s, why_not)) return std::nullopt;
  const int64_t p4 = round_up(s.out_size(), 4);
  const int64_t col_rows = s.in_channels * s.kernel_size();
  const uint64_t col_elements = uint64_t(s.batch) * uint64_t(col_rows) * uint64_t(p4);
  if (!fits_scratch(ctx, col_elements * storage_element_bytes(st), "the im2col buffer", why_not)) return std::nullopt;
  if (!fits_invocations(col_elements / 4, why_not)) return std::nullopt;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, col_elements * storage_element_bytes(st)));
  const Window3 win = window3(s.window);
  std::vector<uint32_t> push{uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.group)};
  push_window(push, win);
  // im2col moves bits: the fp16 variant serves both fp16 arithmetics.
  const bool texel = ctx.texel_reads(uint64_t(ctx.input(0).size()));
  const std::string im2col =
      std::string(texel ? "conv/im2col_texel" : "conv/im2col") + (st == StorageType::F16 ? ".f16" : ".f32");
  plan.dispatches.push_back(dispatch(
      ctx, im2col,
      {{1, win.out[0]}, {2, win.out[1]}, {3, win.out[2]}, {4, win.kernel[0]}, {5, win.kernel[1]}, {6, win.kernel[2]}},
      {BindingRef::input(0), BindingRef::scratch(0)}, push, col_elements / 4));
  return p4;
}

// The start of every im2col tactic: the layer's shape and a plan holding the im2col dispatch (the
// columns in scratch 0, rows of p4 positions); nullopt (why_not filled) where it cannot be made.
struct Im2colStart {
  ConvShape s;
  LayerPlan plan;
  int64_t p4 = 0;
};
std::optional<Im2colStart> start_im2col(const LayerContext& ctx, std::string& why_not) {
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  Im2colStart start{conv_shape(ctx, 0, 1), {}, 0};
  check_output(ctx, start.s);
  const std::optional<int64_t> p4 = add_im2col(ctx, start.plan, start.s, *st, why_not);
  if (!p4) return std::nullopt;
  start.p4 = *p4;
  return start;
}

bool is_pointwise(const WindowGeometry& g) {
  for (size_t i = 0; i < g.in.size(); ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) return false;
  }
  return true;
}

// The constant weights of a one-group Conv, as stored, bound as A of the product
// Y[n, m, p] = sum_k W[m, k] * B[n, k, p] (+ bias[m]), A shared by every batch, B's rows `ldb` and
// its batches `b_batch` apart; nullopt (why_not filled) when the weights exceed a binding.
std::optional<std::pair<BindingRef, Product>> weights_product(const LayerContext& ctx, LayerPlan& plan,
                                                              const ConvShape& s, int64_t ldb, int64_t b_batch,
                                                              std::string& why_not) {
  const BindingRef a = add_weight(plan, float_weight(float_values(*ctx.input(1).constant), ctx.input(0).storage));
  if (!fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  const int64_t kdim = s.cg() * s.kernel_size();
  Product p;
  p.M = s.out_channels, p.N = s.out_size(), p.K = kdim, p.batches = s.batch;
  p.a_bs = 0, p.a_sm = kdim, p.a_sk = 1;
  p.b_bs = b_batch, p.b_sk = ldb, p.b_sn = 1;
  return std::pair{a, p};
}

// The bindings and push constants of the GEMM of weights_product on the interface of
// shaders/gemm/common.glsl: A the weights `a`, B `b`, C the layer's bias along M (input 2, where
// it has one), Y the layer output.
void bind_weights_gemm(const LayerContext& ctx, LayerPlan& plan, BindingRef a, BindingRef b, const Product& p,
                       Dispatch& d) {
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, ctx.input(0).storage);
  d.bindings = {a, b, bias, BindingRef::output(0), add_weight(plan, int_weight({0}))};
  d.push = gemm_float_push(p, /*c_sm=*/1, /*c_sn=*/0, has_bias ? kGemmFlagHasC : 0u, 1.0f, 1.0f);
}

std::optional<Dispatch> block_gemm_dispatch(const LayerContext& ctx, LayerPlan& plan, const ConvShape& s,
                                            BlockShape block, BindingRef b, int64_t ldb, int64_t b_batch,
                                            std::string& why_not) {
  if (!ctx.input(1).is_constant() || s.group != 1 || s.cg() * s.kernel_size() % 4 != 0) {
    why_not = "needs constant weights, one group and C * kernel size % 4 == 0";
    return std::nullopt;
  }
  const auto product = weights_product(ctx, plan, s, ldb, b_batch, why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  return block_dispatch(ctx, plan, p, block, a, b, bind_optional(ctx, plan, 2, ctx.input(0).storage), {}, why_not);
}

}  // namespace

std::optional<Dispatch> gemm_dispatch(const LayerContext& ctx, const GemmShape& g, GemmBlocking blocking, BindingRef a,
                                      BindingRef b, BindingRef bias, bool has_bias, BindingRef y,
                                      std::string& why_not) {
  const uint64_t invocations = uint64_t(g.batch * g.group * (g.mg_pad / blocking.tile_m)) *
                               uint64_t((g.positions + blocking.tile_p - 1) / blocking.tile_p);
  if (!fits_invocations(invocations, why_not)) return std::nullopt;
  // The largest of A (packed weights) and B (the input or the im2col columns) bounds the texel views.
  const uint64_t a_elements = uint64_t(g.group * g.kdim * g.mg_pad);
  const uint64_t b_elements =
      uint64_t(g.batch) * uint64_t(std::max<int64_t>(g.b_batch, g.group * g.b_group + g.kdim * g.ldb));
  return dispatch(ctx, ctx.texel_shader("conv/gemm", std::max(a_elements, b_elements)),
                  {{1, blocking.tile_m},
                   {2, blocking.tile_p},
                   {3, g.aligned_b},
                   {4, has_bias},
                   {5, g.positions % 4 == 0 ? 1u : 0u}},
                  {a, b, bias, y},
                  {uint32_t(g.batch), uint32_t(g.group), uint32_t(g.mg), uint32_t(g.mg_pad), uint32_t(g.positions),
                   uint32_t(g.kdim), uint32_t(g.ldb), uint32_t(g.b_group), uint32_t(g.b_batch)},
                  invocations);
}

std::optional<LayerPlan> plan_im2col_gemm(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  const int64_t col_rows = s.in_channels * s.kernel_size();  // over all groups
  GemmShape shape;
  shape.ldb = p4;
  shape.b_group = s.cg() * s.kernel_size() * p4;
  shape.b_batch = col_rows * p4;
  shape.aligned_b = true;
  std::optional<Dispatch> gemm = conv_gemm_dispatch(ctx, plan, s, blocking, BindingRef::scratch(0), shape, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return std::move(plan);
}

std::optional<LayerPlan> plan_pointwise(const LayerContext& ctx, GemmBlocking blocking, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window)) {
    why_not = "serves 1x1 kernels with stride 1 and no padding only";
    return std::nullopt;
  }
  LayerPlan plan;
  const int64_t positions = s.out_size();
  GemmShape shape;
  shape.ldb = positions;
  shape.b_group = s.cg() * positions;
  shape.b_batch = s.in_channels * positions;
  shape.aligned_b = positions % 4 == 0;
  std::optional<Dispatch> gemm = conv_gemm_dispatch(ctx, plan, s, blocking, BindingRef::input(0), shape, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.1x1_block and conv.im2col_block: the GEMM of gemm/block.comp (the
// interface of shaders/gemm/common.glsl), whose accumulator blocks stay in
// registers. A is the weights as stored ([M][C * K]: vec4 runs along k need
// C * K % 4 == 0), B the input (1x1) or the im2col columns, per batch
// [C * K][positions]; C is the bias along M; Y is the layer output.

std::optional<Dispatch> block_dispatch(const LayerContext& ctx, LayerPlan& plan, const Product& p, BlockShape block,
                                       BindingRef a, BindingRef b, std::pair<BindingRef, bool> bias,
                                       const std::array<uint32_t, 6>& map, std::string& why_not, BindingRef y) {
  const int64_t columns = ((p.N + 3) / 4 + block.col_vecs - 1) / block.col_vecs;
  const uint32_t local = column_local_size(columns, kLocalSize, ctx.device);
  const auto groups = gemm_grid_groups(columns, local, (p.M + block.rows - 1) / block.rows, p.batches, ctx.device);
  if (!groups) {
    why_not = "too many positions for one dispatch";
    return std::nullopt;
  }
  Dispatch d;
  if (!set_block_shader(ctx, p, block.rows, local, block.wide_a, block.shuffle_a, d, why_not)) return std::nullopt;
  d.spec = block_spec(d.shader, local, block.rows, block.col_vecs, p, block_c_mode(bias.second, /*c_sm=*/1, /*c_sn=*/0),
                      map);
  d.bindings = {a, b, bias.first, y, add_weight(plan, int_weight({0}))};
  d.push = gemm_float_push(p, /*c_sm=*/1, /*c_sn=*/0, bias.second ? kGemmFlagHasC : 0u, 1.0f, 1.0f);
  d.groups = *groups;
  return d;
}

std::optional<LayerPlan> plan_pointwise_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window) || s.out_size() % 4 != 0) {
    why_not = "serves 1x1 kernels with stride 1, no padding and a multiple of 4 positions only";
    return std::nullopt;
  }
  LayerPlan plan;
  std::optional<Dispatch> gemm = block_gemm_dispatch(ctx, plan, s, block, BindingRef::input(0), s.out_size(),
                                                     s.in_channels * s.out_size(), why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return plan;
}

// conv.1x1_smemv* and conv.1x1_coopmatv*: the pointwise GEMM of plan_pointwise_block (weights as
// A, the input as B, the bias as C along M) on the GPU forms gemm/smem_vec.comp (`smem`) or
// gemm/coopmat_vec.comp (`coop`).
std::optional<LayerPlan> plan_pointwise_gpu(const LayerContext& ctx, const SmemTile* smem, const CoopTile* coop,
                                            std::string& why_not) {
  if (!float_storage(ctx, why_not)) return std::nullopt;
  const ConvShape s = conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!is_pointwise(s.window) || s.group != 1 || !ctx.input(1).is_constant()) {
    why_not = "serves 1x1 kernels with stride 1, no padding, one group and constant weights only";
    return std::nullopt;
  }
  LayerPlan plan;
  const auto product = weights_product(ctx, plan, s, s.out_size(), s.in_channels * s.out_size(), why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  Dispatch d;
  if (smem ? !smem_vec_dispatch(ctx, p, *smem, d, why_not) : !coopmat_vec_dispatch(ctx, p, *coop, d, why_not))
    return std::nullopt;
  bind_weights_gemm(ctx, plan, a, BindingRef::input(0), p, d);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<LayerPlan> plan_im2col_block(const LayerContext& ctx, BlockShape block, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  std::optional<Dispatch> gemm = block_gemm_dispatch(ctx, plan, s, block, BindingRef::scratch(0), p4,
                                                     s.in_channels * s.kernel_size() * p4, why_not);
  if (!gemm) return std::nullopt;
  plan.dispatches.push_back(std::move(*gemm));
  return std::move(plan);
}

// conv.im2col_splitk32x32: the im2col columns, then the shared-memory core with K split over
// workgroups (gemm.smem32x32_splitk's form). For Convs of few outputs and many taps, such as
// PP-OCRv4 rec's 1x3 Convs over 480 channels at 40 positions: the register-block forms give such
// a product a few dozen invocations, each summing the whole depth (0.35 ms on an H200).
std::optional<LayerPlan> plan_im2col_splitk(const LayerContext& ctx, std::string& why_not) {
  std::optional<Im2colStart> start = start_im2col(ctx, why_not);
  if (!start) return std::nullopt;
  auto& [s, plan, p4] = *start;
  if (!ctx.input(1).is_constant() || s.group != 1) {
    why_not = "needs constant weights and one group";
    return std::nullopt;
  }
  const auto product = weights_product(ctx, plan, s, p4, s.in_channels * s.kernel_size() * p4, why_not);
  if (!product) return std::nullopt;
  const auto& [a, p] = *product;
  Dispatch d;
  bind_weights_gemm(ctx, plan, a, BindingRef::scratch(0), p, d);
  if (!smem_core_dispatches(ctx, p, SmemTile{32, 32, 32, 4, 4}, /*split_k=*/true, std::move(d), plan, why_not))
    return std::nullopt;
  return std::move(plan);
}

// ---------------------------------------------------------------------------
// conv.implicit_gemm<BM>x<BN> and conv.transpose_implicit_gemm<BM>x<BN>: the
// shared-memory GEMM core (gemm/smem_tile.glsl) with B read through the window
// as the GEMM stages it (conv/implicit_gemm.comp): no im2col buffer, any
// groups, runtime or constant weights as stored.

namespace {

// What both implicit GEMMs bind and push (conv/implicit_gemm_operands.glsl) into `plan` and `d`,
// with the layer's shape; nullopt (why_not filled) where the operands cannot serve the layer.
std::optional<ConvShape> implicit_gemm_operands(const LayerContext& ctx, bool transpose, LayerPlan& plan, Dispatch& d,
                                                std::string& why_not) {
  if (transpose && !single_transpose(ctx, why_not)) return std::nullopt;
  const std::optional<StorageType> st = float_storage(ctx, why_not);
  if (!st) return std::nullopt;
  const ConvShape s = transpose ? conv_transpose_shape(ctx) : conv_shape(ctx, 0, 1);
  check_output(ctx, s);
  if (!within_3d(s, why_not)) return std::nullopt;
  if (!transpose && s.mg() < 4) {
    // A depthwise Conv as 64-row tiles of one row each: 2 s for a 3x3 48-channel 80x80 one on
    // lavapipe against 1 ms on conv.depthwise_tile, and a GPU build's first candidates.
    why_not = "serves 4 or more output channels per group (the depthwise and narrow-group forms serve the rest)";
    return std::nullopt;
  }
  if (!fits_invocations(uint64_t(s.batch * s.out_channels) * uint64_t(s.out_size()), why_not)) return std::nullopt;
  const BindingRef w = bind_input(ctx, plan, 1);
  if (!plan.weights.empty() &&
      !fits_binding(ctx, plan.weights.back().nbytes(), uint64_t(plan.weights.back().size()), "weights", why_not))
    return std::nullopt;
  const auto [bias, has_bias] = bind_optional(ctx, plan, 2, *st);
  d.push = {uint32_t(s.batch), uint32_t(s.in_channels), uint32_t(s.group)};
  push_window(d.push, window3(s.window));
  d.push.insert(d.push.end(), {uint32_t(s.mg()), uint32_t(s.cg() * s.kernel_size()), has_bias ? 1u : 0u});
  d.bindings = {BindingRef::input(0), w, bias, BindingRef::output(0)};
  return s;
}

}  // namespace

std::optional<LayerPlan> plan_implicit_gemm(const LayerContext& ctx, SmemTile tile, bool transpose,
                                            std::string& why_not) {
  LayerPlan plan;
  Dispatch d;
  const std::optional<ConvShape> s = implicit_gemm_operands(ctx, transpose, plan, d, why_not);
  if (!s) return std::nullopt;
  const int64_t kdim = s->cg() * s->kernel_size();
  std::optional<std::vector<SpecValue>> spec =
      smem_tile_spec(tile, !transpose && kdim % 4 == 0, false, 1, ctx.arith, ctx.device, why_not);
  if (!spec) return std::nullopt;
  spec->push_back({9, transpose ? 1u : 0u});
  const auto groups = smem_tile_groups(tile, s->mg(), s->out_size(), s->batch * s->group, ctx.device, why_not);
  if (!groups) return std::nullopt;
  d.shader = ctx.shader("conv/implicit_gemm");
  d.spec = std::move(*spec);
  d.groups = *groups;
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// ---------------------------------------------------------------------------
// conv.implicit_coopmat<BM>x<BN> and conv.transpose_implicit_coopmat<BM>x<BN>: the same
// operands on the cooperative-matrix core (gemm/coopmat_tile.glsl, conv/implicit_coopmat.comp):
// tensor cores for 3x3, strided and grouped Convs, fp16 in, fp16 or fp32 accumulation.

std::optional<LayerPlan> plan_implicit_coopmat(const LayerContext& ctx, CoopTile tile, bool transpose,
                                               std::string& why_not) {
  if (!coopmat_usable(ctx.device, ctx.arith, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d;
  const std::optional<ConvShape> s = implicit_gemm_operands(ctx, transpose, plan, d, why_not);
  if (!s) return std::nullopt;
  if (!coopmat_tile_dispatch(ctx, "conv/implicit_coopmat", s->mg(), s->out_size(), s->batch * s->group, tile, d,
                             why_not))
    return std::nullopt;
  d.spec.push_back({9, transpose ? 1u : 0u});
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::conv_tactics
