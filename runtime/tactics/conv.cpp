// Vulkan tactics of the conv family (see runtime/engine/tactic.h): Conv,
// ConvTranspose, ConvInteger, QLinearConv and DeformConv.
//
//   conv.direct              any Conv (N-D, groups, runtime weights): 4 or 8 output
//                            channels x 4 positions per invocation
//   conv.im2col_gemm.<MxP>   im2col into scratch + a GEMM blocked M output channels x
//                            P positions per invocation (1-3 spatial dims)
//   conv.1x1.<MxP>           pointwise Conv as the same GEMM straight on the input (any rank)
//   conv.1x1_block<RxC>      pointwise Conv on gemm/block.comp (register-resident R x C blocks)
//   conv.im2col_block<RxC>   im2col into scratch + gemm/block.comp (one group)
//   conv.1x1_block16x16_wide_a, conv.im2col_block16x16_wide_a  the same on gemm/block_wide_a.comp
//   conv.1x1_block24x16_shuffle_a, conv.1x1_block48x8_shuffle_a  the same on gemm/block_shuffle_a.comp
//                            (A's rows shared through subgroup shuffles)
//   conv.im2col_splitk32x32 im2col into scratch + the shared-memory core with K split over
//                            workgroups (few outputs, deep K: the GPU form)
//   conv.1x1_smemv<BM>x<BN>, conv.1x1_coopmatv<BM>x<BN>  pointwise Conv on the GPU forms
//                            gemm/smem_vec.comp and gemm/coopmat_vec.comp (tensor cores)
//                            (weights read 8 floats per load: fp32, 64-bit integers, C * kernel % 8 == 0)
//   conv.implicit_gemm<BxB>  Conv on the shared-memory GEMM core (gemm/smem_tile.glsl),
//                            the window read as B is staged (1-3 spatial dims, any groups)
//   conv.transpose_implicit_gemm<BxB>  ConvTranspose the same way (gather form)
//   conv.depthwise           group == C_in (any channel multiplier), 1-3 spatial dims
//   conv.depthwise_wide      the same, 8 outputs along a row per invocation (rows longer than 4)
//   conv.depthwise_tile<R>x8 2-D depthwise (multiplier 1, kernels up to 7x7, strides 1-2): R output
//                            rows x 8 outputs per invocation, each input row read once (vec4s)
//   conv.direct_tile<R>x8    2-D Conv with at most 1024 taps per output (input channels per group x
//                            kernel), kernels up to 5x5, strides 1-2: 8 output channels x R rows x 8
//                            outputs per invocation, each input row read once per input channel
//   conv.winograd_f23        F(2x2, 3x3): 2-D, 3x3, stride 1, dilation 1, group 1; input
//                            transform, 16 GEMMs (the same GEMM), output transform
//   conv.winograd_f23_block<RxC>  the same with the 16 GEMMs on gemm/block.comp (C % 4 == 0)
//   conv.winograd_f43_block<RxC>  F(4x4, 3x3), 36 GEMMs on gemm/block.comp (fp32, C % 4 == 0)
//   conv.transpose_block<RxC> ConvTranspose with kernel == strides (no padding): one GEMM on
//                            gemm/block.comp storing each tap where it lands (depth to space)
//   conv.transpose_gather    ConvTranspose in gather form (N-D, groups, runtime weights)
//   conv.transpose_pair      two kernel == strides ConvTransposes fused into one layer
//                            (graph_optimizer.h, transpose_pair): the one between never stored
//   conv.integer_direct.i32  ConvInteger, exact int32
//   conv.qlinear_direct.i32  QLinearConv, exact int32 sums, requantized as the reference does
//   deform_conv.direct       DeformConv (2-D): each tap sampled bilinearly at its runtime offset
//
// Float tactics come in f32, f16 and f16acc32. Shapes of 1 to 3 spatial dims
// are given to the shaders as 3-D (leading dims of size 1); the window geometry
// comes from runtime/core/window_geometry.h, as the reference's does, so that the
// attributes mean exactly what the oracle says. Constant weights are packed at plan time; runtime weights are
// bound as they are (conv.direct, conv.depthwise, conv.transpose_gather and
// the integer tactics).
//
// This file registers them; each form's planner lives in a conv_*.cpp of its
// own (conv_direct, conv_depthwise, conv_gemm, conv_winograd, conv_transpose,
// conv_integer, conv_deform), the helpers they share in conv_common.h.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/conv_common.h"

namespace vkg {

namespace conv_tactics {
namespace {

constexpr auto kF32 = Arith::F32, kF16 = Arith::F16, kF16Acc32 = Arith::F16Acc32;

// Specialised tactics first (each declines what it cannot serve): DeformConv, the depthwise and
// row-tile forms, Winograd.
void register_specialised_forms(TacticRegistry& r) {
  const std::vector<std::string> conv{"Conv"};
  r.add_variants("deform_conv.direct", {"DeformConv"}, 0, {kF32, kF16Acc32}, plan_deform_conv);
  r.add_variants("conv.depthwise", conv, 10, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_depthwise(c, kPixels, w); });
  r.add_variants("conv.depthwise_wide", conv, 11, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_depthwise(c, 2 * kPixels, w); });
  for (const uint32_t rows : {2u, 4u}) {
    r.add_variants("conv.depthwise_tile" + std::to_string(rows) + "x8", conv, 8 + (rows == 2 ? 1 : 0),
                   {kF32, kF16, kF16Acc32},
                   [rows](const LayerContext& c, std::string& w) { return plan_depthwise_tile(c, rows, w); });
  }
  for (const uint32_t rows : {1u, 2u}) {
    r.add_variants("conv.direct_tile" + std::to_string(rows) + "x8", conv, 15 + int(rows), {kF32, kF16, kF16Acc32},
                   [rows](const LayerContext& c, std::string& w) { return plan_direct_tile(c, rows, w); });
  }
  r.add_variants("conv.winograd_f23", conv, 20, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, std::nullopt, w);
  });
  // After the F(4x4) tactics (optimization level 3 times the first six that serve): on det's four
  // FPN scales it never won against F(2x2) on 24-row blocks, F(4x4) or the plain F(2x2).
  r.add_variants("conv.winograd_f23_block8x8", conv, 25, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_winograd(c, {8, 8}, BlockShape{8, 2}, w);
                 });
  // 24 rows: M = 24 (det's FPN convolutions) in one block, fewer loads per multiply-add on lavapipe.
  r.add_variants("conv.winograd_f23_block24x16", conv, 22, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_winograd(c, {8, 8}, BlockShape{24, 4}, w);
                 });
  // F(4x4, 3x3): 36 GEMMs of a quarter of the positions, 1.78x fewer multiply-adds than F(2x2, 3x3) and fewer
  // transformed values to write; its transforms grow values more, so fp32 only.
  r.add_variants("conv.winograd_f43_block24x16", conv, 23, {kF32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, BlockShape{24, 4}, w, /*out_tile=*/4);
  });
  // A's rows shared through subgroup shuffles (gemm/block_shuffle_a.comp): 3 A loads a k step, not 24.
  r.add_variants("conv.winograd_f43_block24x16_shuffle_a", conv, 22, {kF32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_winograd(c, {8, 8}, BlockShape{.rows = 24, .col_vecs = 4, .shuffle_a = true}, w,
                                        /*out_tile=*/4);
                 },
                 {.device_feature = "subgroup-shuffle"});
  // Half the columns: twice the invocations of a small product, fewer idle SIMD lanes on lavapipe.
  r.add_variants("conv.winograd_f43_block24x8", conv, 24, {kF32}, [](const LayerContext& c, std::string& w) {
    return plan_winograd(c, {8, 8}, BlockShape{24, 2}, w, /*out_tile=*/4);
  });
}

// The pointwise and im2col GEMMs.
void register_gemm_forms(TacticRegistry& r) {
  const std::vector<std::string> conv{"Conv"};
  // In fp16 arithmetic on lavapipe it won 12 of det's 22 pointwise layers, the register blocks 2 (every
  // tactic timed, 2026-12-01): there it comes before them, among the candidates level 3 times.
  r.add_variants(
      "conv.1x1.8x8", conv, 30, {kF32, kF16, kF16Acc32},
      [](const LayerContext& c, std::string& w) { return plan_pointwise(c, {8, 8}, w); }, {.slow_fp16_priority = 24});
  r.add_variants("conv.im2col_gemm.8x8", conv, 40, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_gemm(c, {8, 8}, w);
  });
  r.add_variants("conv.1x1.4x8", conv, 45, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise(c, {4, 8}, w);
  });
  r.add_variants("conv.im2col_gemm.4x8", conv, 46, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_gemm(c, {4, 8}, w);
  });
  r.add_variants("conv.1x1_block16x16", conv, 25, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {16, 4}, w);
  });
  r.add_variants("conv.1x1_block24x16", conv, 26, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {24, 4}, w);
  });
  // A's rows shared through subgroup shuffles (gemm/block_shuffle_a.comp): on lavapipe a 96 x 96 x 1600
  // product in 1.09 ms against 1.32 for the 24x16 block reading every row (docs/bench.md).
  r.add_variants("conv.1x1_block24x16_shuffle_a", conv, 24, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_pointwise_block(c, {.rows = 24, .col_vecs = 4, .shuffle_a = true}, w);
                 },
                 {.device_feature = "subgroup-shuffle"});
  r.add_variants("conv.1x1_block48x8_shuffle_a", conv, 24, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) {
                   return plan_pointwise_block(c, {.rows = 48, .col_vecs = 2, .shuffle_a = true}, w);
                 },
                 {.device_feature = "subgroup-shuffle"});
  r.add_variants("conv.1x1_block8x8", conv, 27, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_pointwise_block(c, {8, 2}, w);
  });
  // The GPU forms of the pointwise GEMM: first on GPUs, never among the candidates a lavapipe build
  // times at the default level (the conformance test runs them there).
  for (const auto& [base, tile, gpu_priority] :
       {std::tuple{"conv.1x1_smemv128x128", SmemTile{128, 128, 8, 8, 8, true}, 1},
        std::tuple{"conv.1x1_smemv64x64", SmemTile{64, 64, 16, 4, 4, true}, 2}}) {
    r.add_variants(
        base, conv, 60, {kF32, kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_pointwise_gpu(c, &tile, nullptr, w); },
        {.gpu_priority = gpu_priority});
  }
  for (const auto& [base, tile] : {std::pair{"conv.1x1_coopmatv128x128", CoopTile{2, 4, 2, 4, 2, true}},
                                   std::pair{"conv.1x1_coopmatv64x64", CoopTile{2, 2, 2, 2, 2, true}}}) {
    r.add_variants(
        base, conv, 60, {kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_pointwise_gpu(c, nullptr, &tile, w); },
        {.gpu_priority = 0, .device_feature = "cooperative-matrix"});
  }
  // The same reading the weights eight floats per load (fp32, 64-bit integers): fewer loads on lavapipe.
  for (const auto& [base, planner, priority] : {std::tuple{"conv.1x1_block16x16_wide_a", &plan_pointwise_block, 25},
                                                std::tuple{"conv.im2col_block16x16_wide_a", &plan_im2col_block, 35}}) {
    r.add_variants(base, conv, priority, {kF32},
                   [planner = planner](const LayerContext& c, std::string& w) {
                     return planner(c, BlockShape{16, 4, true}, w);
                   },
                   {.device_feature = "int64"});
  }
  r.add_variants("conv.im2col_block16x16", conv, 35, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_block(c, {16, 4}, w);
  });
  r.add_variants("conv.im2col_block8x8", conv, 36, {kF32, kF16, kF16Acc32}, [](const LayerContext& c, std::string& w) {
    return plan_im2col_block(c, {8, 2}, w);
  });
  // First on GPUs among the forms of the few Convs it serves.
  r.add_variants("conv.im2col_splitk32x32", conv, 39, {kF32, kF16, kF16Acc32}, plan_im2col_splitk, {.gpu_priority = 1});
}

// ConvTranspose as a GEMM, the implicit GEMMs, then the forms that serve every layer (conv.direct
// serves every Conv) and the exact integer tactics.
void register_general_forms(TacticRegistry& r) {
  const std::vector<std::string> conv{"Conv"};
  r.add_variants("conv.transpose_block16x16", {"ConvTranspose"}, 40, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_transpose_block(c, {16, 4}, w); });
  r.add_variants("conv.transpose_block4x8", {"ConvTranspose"}, 41, {kF32, kF16, kF16Acc32},
                 [](const LayerContext& c, std::string& w) { return plan_transpose_block(c, {4, 2}, w); });
  // Implicit GEMM on shared-memory tiles: the GPU-class form (lavapipe prefers the register blocks above),
  // among the first a GPU build times for the Convs the 1x1 and split-K forms leave (3x3 and wider).
  for (const auto& [name, tile, priority, gpu_priority] : {std::tuple{"64x64", SmemTile{64, 64, 16, 4, 4}, 37, 3},
                                                           std::tuple{"32x32", SmemTile{32, 32, 16, 4, 4}, 38, 4}}) {
    r.add_variants(
        std::string("conv.implicit_gemm") + name, conv, priority, {kF32, kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_implicit_gemm(c, tile, false, w); },
        {.gpu_priority = gpu_priority});
    r.add_variants(
        std::string("conv.transpose_implicit_gemm") + name, {"ConvTranspose"}, priority + 20, {kF32, kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_implicit_gemm(c, tile, true, w); });
  }
  // The same on tensor cores: 3x3, strided and grouped Convs (the 1x1 forms above serve pointwise ones
  // from runs of eight), first among a GPU build's candidates for them.
  for (const auto& [name, tile, gpu_priority] :
       {std::tuple{"64x64", CoopTile{2, 2, 2}, 1}, std::tuple{"128x64", CoopTile{4, 2, 2}, 2}}) {
    const TacticRegistry::Traits traits{.gpu_priority = gpu_priority, .device_feature = "cooperative-matrix"};
    r.add_variants(
        std::string("conv.implicit_coopmat") + name, conv, 37, {kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_implicit_coopmat(c, tile, false, w); },
        traits);
    r.add_variants(
        std::string("conv.transpose_implicit_coopmat") + name, {"ConvTranspose"}, 57, {kF16, kF16Acc32},
        [tile = tile](const LayerContext& c, std::string& w) { return plan_implicit_coopmat(c, tile, true, w); },
        traits);
  }
  r.add_variants("conv.direct", conv, 50, {kF32, kF16, kF16Acc32}, plan_conv_direct);
  r.add_variants("conv.transpose_gather", {"ConvTranspose"}, 50, {kF32, kF16, kF16Acc32}, plan_transpose_gather);
  r.add_variants("conv.transpose_pair", {"ConvTranspose"}, 39, {kF32, kF16, kF16Acc32}, plan_transpose_pair);
  // Exact integer tactics: int32 arithmetic whatever the layer's precision, named by it.
  r.add(Tactic{"conv.integer_direct.i32", {"ConvInteger"}, kF32, 50, plan_conv_integer});
  r.add(Tactic{"conv.qlinear_direct.i32", {"QLinearConv"}, kF32, 50, plan_qlinear_conv});
}

}  // namespace
}  // namespace conv_tactics

void register_conv_tactics(TacticRegistry& r) {
  conv_tactics::register_specialised_forms(r);
  conv_tactics::register_gemm_forms(r);
  conv_tactics::register_general_forms(r);
}

}  // namespace vkg
