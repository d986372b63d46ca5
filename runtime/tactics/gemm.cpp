// Vulkan tactics of the gemm family (see runtime/engine/tactic.h): MatMul,
// Gemm, MatMulInteger and QLinearMatMul.
//
// Every layer is first described as one strided, batched product (Product:
// the push constants of shaders/gemm/common.glsl), then planned with one of
//   gemm.naive         one output per invocation, any layout
//   gemm.tiled<T>x<T>  shared-memory tiles of T x T (spec constant)
//   gemm.reg<R>x<C>    R x C outputs per invocation (C = 4 or 8) in vec4
//                      registers; a constant B is packed at plan time into
//                      vec4 rows
//   gemm.sgreg<R>x<C>  the same, the lanes of a subgroup sharing A's loads
//                      (subgroup broadcasts)
//   gemm.gemv1x4       the 1 x 4 register block, for products with M == 1
//   gemm.smem<BM>x<BN> shared-memory tiles of BM x BN with register blocks
//                      (gemm/smem_tile.glsl): the GPU-class form; _splitk
//                      splits a deep K over workgroups when the output has
//                      few tiles, then sums the splits (gemm/splitk_reduce)
//   gemm.smemv<BM>x<BN> the same as GPU SGEMMs do it (gemm/smem_vec.comp): runs of four
//                      rows and columns per invocation, vec4 shared memory, slices
//                      double-buffered through registers; _k16 with 16-deep slices, _g8
//                      with the tiles rasterized in bands of 8 row tiles (L2 reuse)
//   gemm.coopmat<BM>x<BN> fp16 on tensor cores (cooperative matrices,
//                      gemm/coopmat.comp), .f16 and .f16acc32 only, on devices
//                      with the cooperative-matrix feature
//   gemm.coopmatv<BM>x<BN> the same for aligned products, staged 16 bytes at a
//                      time through registers (gemm/coopmat_vec.comp); _db with
//                      double-buffered shared slices (_db_g8: and bands of 8 row
//                      tiles), _k64 with 64-deep slices, _w4 with four subgroups of 64 x 64,
//                      _fixed with K and the strides compiled in (no bounds checks on whole tiles)
// Integer layers (MatMulInteger, QLinearMatMul, and MatMul/Gemm on int32,
// int64 or uint32 tensors) run the exact int32 shader gemm/integer.
//
// This file registers them; the planners live in gemm_float.cpp,
// gemm_integer.cpp and gemm_det.cpp (gemm_planners.h), the products they
// compute in gemm_product.cpp, the dispatches shared with the conv family in
// gemm_common.cpp and gemm_gpu.cpp (gemm_common.h).
#include <string>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_planners.h"

namespace vkg {

namespace gemm_tactics {
namespace {

// The f32, f16 and f16acc32 variants of a float GEMM tactic.
void add_float(TacticRegistry& r, const std::string& base, int priority, FloatTactic tactic,
               const TacticRegistry::Traits& traits = {}) {
  r.add_variants(
      base, {"MatMul", "Gemm"}, priority, {Arith::F32, Arith::F16, Arith::F16Acc32},
      [tactic](const LayerContext& ctx, std::string& why_not) { return plan_float(tactic, ctx, why_not); }, traits);
}

// The tensor-core tactics: fp16 inputs, fp16 or fp32 accumulators, on devices with cooperative matrices.
void add_coopmat(TacticRegistry& r, const std::string& base, int priority, CoopTile tile) {
  const FloatTactic tactic{.algorithm = Algorithm::CoopMat, .coop = tile};
  r.add_variants(base, {"MatMul", "Gemm"}, priority, {Arith::F16, Arith::F16Acc32},
                 [tactic](const LayerContext& ctx, std::string& why_not) { return plan_float(tactic, ctx, why_not); },
                 {.device_feature = "cooperative-matrix"});
}

// Register blocks (rows x columns per invocation). On lavapipe every element
// load is costly and arithmetic is cheap, so larger blocks (more reuse per
// load) and A loads shared over a subgroup win, at the price of longer
// shader compiles.
void register_register_blocks(TacticRegistry& r) {
  // Blocks held in registers (compile-time indexed, unrolled): the GPU-sane form, and on lavapipe the
  // fastest for large products.
  // The same reading A eight floats per load: fewer loads on lavapipe (fp32 only, 64-bit integers).
  {
    const FloatTactic wide{.algorithm = Algorithm::Block, .block = 16, .col_vecs = 4, .wide_a = true};
    r.add_variants("gemm.block16x16_wide_a", {"MatMul", "Gemm"}, 6, {Arith::F32},
                   [wide](const LayerContext& ctx, std::string& why_not) { return plan_float(wide, ctx, why_not); },
                   {.device_feature = "int64"});
  }
  add_float(r, "gemm.block16x16", 6, {.algorithm = Algorithm::Block, .block = 16, .col_vecs = 4});
  // A's rows shared through subgroup shuffles (gemm/block_shuffle_a.comp): one A load per 8 rows. fp32 only:
  // lavapipe, where they pay, runs fp16 arithmetic slower, and each variant is minutes of a cold test run.
  for (const auto& [name, rows, col_vecs] : {std::tuple{"gemm.block24x16_shuffle_a", 24u, 4u},
                                             std::tuple{"gemm.block48x8_shuffle_a", 48u, 2u}}) {
    const FloatTactic t{.algorithm = Algorithm::Block, .block = rows, .col_vecs = col_vecs, .share_a = true};
    r.add_variants(name, {"MatMul", "Gemm"}, 6, {Arith::F32},
                   [t](const LayerContext& ctx, std::string& why_not) { return plan_float(t, ctx, why_not); },
                   {.device_feature = "subgroup-shuffle"});
  }
  add_float(r, "gemm.block8x16", 7, {.algorithm = Algorithm::Block, .block = 8, .col_vecs = 4});
  add_float(r, "gemm.block16x8", 7, {.algorithm = Algorithm::Block, .block = 16, .col_vecs = 2});
  add_float(r, "gemm.block4x8", 13, {.algorithm = Algorithm::Block, .block = 4, .col_vecs = 2});
  add_float(r, "gemm.gemv1x4", 5, {.algorithm = Algorithm::Reg, .block = 1, .col_vecs = 1, .only_m1 = true});
  add_float(r, "gemm.sgreg16x4", 8, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 1, .share_a = true});
  add_float(r, "gemm.sgreg16x8", 9, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 2, .share_a = true});
  add_float(r, "gemm.reg16x8", 10, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 2});
  add_float(r, "gemm.reg16x4", 11, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 1});
  add_float(r, "gemm.reg4x4", 12, {.algorithm = Algorithm::Reg, .block = 4, .col_vecs = 1});
}

// Shared-memory tiles with register blocks: the GPU-class form (slow on lavapipe, where barriers are costly).
void register_shared_memory_tiles(TacticRegistry& r) {
  add_float(r, "gemm.smem64x64", 14, {.algorithm = Algorithm::Smem, .smem = {64, 64, 16, 4, 4}});
  add_float(r, "gemm.smem128x128", 15, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8}});
  add_float(r, "gemm.smem128x64", 16, {.algorithm = Algorithm::Smem, .smem = {128, 64, 16, 8, 4}});
  add_float(r, "gemm.smem32x32", 17, {.algorithm = Algorithm::Smem, .smem = {32, 32, 32, 4, 4}});
  // The same in the form GPU SGEMMs take: vec4 shared memory, double-buffered slices (gemm/smem_vec.comp);
  // among the first candidates on GPUs, where level 3 times six per precision.
  add_float(r, "gemm.smemv128x128", 14, {.algorithm = Algorithm::Smem, .smem = {128, 128, 8, 8, 8, true}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv128x64", 15, {.algorithm = Algorithm::Smem, .smem = {128, 64, 8, 8, 4, true}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv64x64", 16, {.algorithm = Algorithm::Smem, .smem = {64, 64, 16, 4, 4, true}},
            {.gpu_priority = 4});
  // 16-deep slices: the fastest fp32 form on an H200 (4096^3: 80% of cuBLAS, 2026-11-27; _g8 81%,
  // within the runs' spread).
  add_float(r, "gemm.smemv128x128_k16", 16, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8, true}},
            {.gpu_priority = 2});
  add_float(r, "gemm.smemv128x128_k16_g8", 17, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8, true, 8}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv128x128_g8", 16, {.algorithm = Algorithm::Smem, .smem = {128, 128, 8, 8, 8, true, 8}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smem32x32_splitk", 18, {.algorithm = Algorithm::Smem, .smem = {32, 32, 32, 4, 4}, .split_k = true});
}

void register_cooperative_matrices(TacticRegistry& r) {
  add_coopmat(r, "gemm.coopmat64x64", 3, {.warps_m = 2, .warps_n = 2, .k_steps = 2});
  add_coopmat(r, "gemm.coopmat128x64", 4, {.warps_m = 4, .warps_n = 2, .k_steps = 2});
  add_coopmat(r, "gemm.coopmatv128x128", 1,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true});
  add_coopmat(r, "gemm.coopmatv128x256", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true});
  add_coopmat(r, "gemm.coopmatv64x64", 2,
              {.warps_m = 2, .warps_n = 2, .k_steps = 2, .frags_m = 2, .frags_n = 2, .vec = true});
  // The 128 x 128 tile with double-buffered slices, with 64-deep slices (half the barriers), and
  // with four subgroups of 64 x 64 each (more multiply-adds per fragment loaded).
  add_coopmat(r, "gemm.coopmatv128x128_db", 1,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .stages = 2});
  add_coopmat(r, "gemm.coopmatv128x128_k64", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 4, .frags_m = 4, .frags_n = 2, .vec = true});
  add_coopmat(
      r, "gemm.coopmatv128x128_db_g8", 2,
      {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .stages = 2, .group_m = 8});
  add_coopmat(r, "gemm.coopmatv128x128_w4", 2,
              {.warps_m = 2, .warps_n = 2, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true, .stages = 2});
  // The two fastest shapes on an H200 with K and the strides compiled in and, on whole tiles, no
  // bounds checks: 0.613 and 0.631 ms at 4096^3 (0.672 and 0.670 without), 2026-11-27. Four
  // subgroups of 64 x 128 (fragments 4 x 8: 12 loads per 32 multiply-adds) ran 4.3x slower, out of
  // registers (docs/bench.md, fourth GPU run).
  add_coopmat(r, "gemm.coopmatv128x256_fixed", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true, .fixed = true});
  add_coopmat(r, "gemm.coopmatv128x128_fixed", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .fixed = true});
}

}  // namespace
}  // namespace gemm_tactics

void register_gemm_tactics(TacticRegistry& r) {
  using namespace gemm_tactics;
  register_register_blocks(r);
  register_shared_memory_tiles(r);
  register_cooperative_matrices(r);
  add_float(r, "gemm.naive", 20, {.algorithm = Algorithm::Naive, .block = 1, .col_vecs = 1});
  add_float(r, "gemm.tiled16x16", 30, {.algorithm = Algorithm::Tiled, .block = 16, .col_vecs = 1});
  add_float(r, "gemm.tiled8x8", 31, {.algorithm = Algorithm::Tiled, .block = 8, .col_vecs = 1});
  r.add_variants("matmul_integer.naive", {"MatMulInteger"}, 20, {Arith::F32}, plan_matmul_integer);
  r.add_variants("qlinear_matmul.naive", {"QLinearMatMul"}, 20, {Arith::F32}, plan_qlinear_matmul);
  r.add_variants("det.elimination", {"Det"}, 20, {Arith::F32}, plan_det);
}

}  // namespace vkg
