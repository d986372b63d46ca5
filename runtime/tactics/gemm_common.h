// The product description and push constants of shaders/gemm/common.glsl,
// shared by the gemm family (gemm_*.cpp) and the Conv tactics that run the same
// GEMM shaders (conv_gemm.cpp, conv_winograd.cpp, conv_transpose.cpp: conv.*_block
// on gemm/block.comp, conv.implicit_gemm on the shared-memory core of
// gemm/smem_tile.glsl). Defined in gemm_common.cpp and, for the GPU-class cores,
// gemm_gpu.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/device_profile.h"
#include "runtime/engine/tactic.h"

namespace vkg {

// Flags of GemmParams / IntParams (shaders/gemm/common.glsl, integer.comp).
inline constexpr uint32_t kGemmFlagHasC = 1;
inline constexpr uint32_t kGemmFlagBatchTable = 2;

// One layer as Y[b, m, n] = sum_k A(b, m, k) * B(b, k, n) with the addressing
// of shaders/gemm/common.glsl. Batch strides are per batch index of A and B.
struct Product {
  size_t a_input = 0, b_input = 1;  // layer input positions of A and B
  int64_t M = 0, N = 0, K = 0, batches = 1;
  int64_t a_bs = 0, a_sm = 0, a_sk = 0;
  int64_t b_bs = 0, b_sk = 0, b_sn = 0;
  int64_t b_batches = 1;  // batches stored in B
  // Per output batch, the batch index of A and of B; empty when A's batch
  // index is b * (a_bs != 0) and B's is b * (b_bs != 0).
  std::vector<int64_t> a_index, b_index;
};

// Whether A(b, m, k) reads as runs of `width` along k (untransposed, K, rows and batches at
// multiples of width), and B(b, k, n) as runs along n.
inline bool a_runs(const Product& p, int64_t width) {
  return p.a_sk == 1 && p.a_sm % width == 0 && p.a_bs % width == 0 && p.K % width == 0;
}
inline bool b_runs(const Product& p, int64_t width) {
  return p.b_sn == 1 && p.b_sk % width == 0 && p.b_bs % width == 0 && p.N % width == 0;
}

// The 13 words shared by GemmParams and IntParams: sizes, strides, C strides, flags.
std::vector<uint32_t> gemm_common_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags);
// GemmParams of the float shaders: the common words, then alpha, beta and padding.
std::vector<uint32_t> gemm_float_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags, float alpha,
                                      float beta);

// gemm/block.comp's specialization constant 6 (kCMode): 0 without C, 1 for a C along M only
// (c_sn == 0, a bias per row), 3 for a C along N only (c_sm == 0, c_sn == 1, a bias per column),
// 2 for any other C.
inline uint32_t block_c_mode(bool has_c, int64_t c_sm, int64_t c_sn) {
  return !has_c ? 0u : c_sn == 0 ? 1u : c_sm == 0 && c_sn == 1 ? 3u : 2u;
}

// The Dispatch::subgroup_size that makes a pipeline's subgroups full (for shaders whose lanes
// exchange values): the device's subgroup size where it has subgroup size control, else 0.
inline uint32_t full_subgroup_size(const DeviceProfile& device) {
  return device.subgroup_size_control ? device.subgroup_size : 0u;
}

// Sets d.shader (and d.subgroup_size) for a gemm/block dispatch of `p` in blocks of `rows` rows and
// workgroups of `local` invocations: "gemm/block_wide_a" with `wide_a` (A read eight floats per
// load; needs the device's 64-bit integers and A running along k with rows and batches starting at
// multiples of 8, no batch table); "gemm/block_shuffle_a" with `shuffle_a` (A's rows shared through
// subgroup shuffles; needs rows % 8 == 0, the device feature subgroup-shuffle, subgroups of at
// least 8 invocations and workgroups of whole ones, which the pipeline then requires); else
// "gemm/block". The last two in their "_texel" builds, A and B read through uniform texel buffers,
// where the device has them (device feature texel-buffers) and they fit one view each. False,
// with why_not, where the form asked for cannot run.
bool set_block_shader(const LayerContext& ctx, const Product& p, uint32_t rows, uint32_t local, bool wide_a,
                      bool shuffle_a, Dispatch& d, std::string& why_not);

// The specialization constants of a gemm/block.comp dispatch of `shader` (set_block_shader): workgroup
// size `local`, blocks of `rows` x 4 * `col_vecs`, C mode `c_mode` (block_c_mode), the
// depth-to-space map of a ConvTranspose (input d, h, w, kernel d, h, w; all zero: none), and the
// stores that follow: vec4 rows where N % 4 == 0, eight wide (kStore8) in the "_texel" builds where
// column-vector pairs (col_vecs even, N % 8 == 0, no C of any strides) or the depth-to-space taps
// kx = 0, 1 (kD2SPairs) allow.
std::vector<SpecValue> block_spec(const std::string& shader, uint32_t local, uint32_t rows, uint32_t col_vecs,
                                  const Product& p, uint32_t c_mode, const std::array<uint32_t, 6>& d2s_map = {});

// The workgroup size of a thread-per-column-block GEMM (gemm/reg.comp, gemm/block.comp): `local`,
// or fewer invocations, whole subgroups, where there are fewer column blocks than that. lavapipe
// runs every subgroup of a workgroup, busy or not: a 1x1 Conv 384->384 at 10x10 (seven column
// blocks) took 0.99 ms in workgroups of 64 invocations and 0.79 in workgroups of 8. (Workgroups
// enumerating (row block, column block) pairs instead, every lane busy, ran no faster.)
uint32_t column_local_size(int64_t columns, uint32_t local, const DeviceProfile& device);

// Group counts {x: ceil(columns / local), y: rows, z: batches}, y and z capped
// at the device limits (the shaders loop over the rest); nullopt when x exceeds its limit.
std::optional<std::array<uint32_t, 3>> gemm_grid_groups(int64_t columns, uint32_t local, int64_t rows, int64_t batches,
                                                        const DeviceProfile& device);

// The tile of the shared-memory GEMM core (shaders/gemm/smem_tile.glsl): a
// workgroup computes bm x bn outputs through bk-deep slices, each invocation
// a tm x tn register block.
struct SmemTile {
  uint32_t bm = 64, bn = 64, bk = 16, tm = 4, tn = 4;
  // gemm/smem_vec.comp instead of the core of gemm/smem_tile.glsl: runs of four rows and columns per
  // invocation, vec4 shared memory, double-buffered slices (tm, tn and bk multiples of 4; vec4 A and B).
  bool quads = false;
  uint32_t group_m = 0;  // gemm/smem_vec.comp: tiles rasterized in bands of this many row tiles (0: none)
  uint32_t invocations() const { return (bm / tm) * (bn / tn); }
};

// The workgroup of the cooperative-matrix shaders: warps_m x warps_n subgroups, each frags_m x
// frags_n fragments of 16 x 16, slices of k_steps * 16 (gemm/coopmat.comp: 2 x 2 fragments).
struct CoopTile {
  uint32_t warps_m = 2, warps_n = 2, k_steps = 2;
  uint32_t frags_m = 2, frags_n = 2;
  // gemm/coopmat_vec.comp: 16-byte staging through registers, per-subgroup epilogue; aligned products.
  bool vec = false;
  uint32_t stages = 1;  // gemm/coopmat_vec.comp's shared buffers: 2 double-buffers the slices
  uint32_t group_m = 0;  // gemm/coopmat_vec.comp: tiles rasterized in bands of this many row tiles (0: none)
  // gemm/coopmat_vec.comp: K and the row strides compiled in, and no bounds checks where the
  // product is a whole number of tiles.
  bool fixed = false;
  uint32_t bm() const { return warps_m * frags_m * 16; }
  uint32_t bn() const { return warps_n * frags_n * 16; }
  uint32_t bk() const { return k_steps * 16; }
};

// Sets the shader, specialization and groups of `d` (bindings as gemm/common.glsl, push constants
// gemm_float_push) for `p` on gemm/smem_vec.comp with tile `t` (t.quads) or on
// gemm/coopmat_vec.comp with workgroup `t` (t.vec; .f16 and .f16acc32, device feature
// cooperative-matrix); false (why_not filled) when the product's layout or the device does not allow it.
bool smem_vec_dispatch(const LayerContext& ctx, const Product& p, const SmemTile& t, Dispatch& d, std::string& why_not);
bool coopmat_vec_dispatch(const LayerContext& ctx, const Product& p, const CoopTile& t, Dispatch& d,
                          std::string& why_not);
// Sets the shader (`shader_base`'s build for the device and precision), specialization constants
// 0-3, subgroup size and groups of `d` for the cooperative-matrix core gemm/coopmat_tile.glsl
// (gemm/coopmat.comp, conv/implicit_coopmat.comp) over M x N outputs in `batches` with workgroup
// `t` (2 x 2 fragments a subgroup); false (why_not filled) where the device does not allow it.
bool coopmat_tile_dispatch(const LayerContext& ctx, const std::string& shader_base, int64_t M, int64_t N,
                           int64_t batches, const CoopTile& t, Dispatch& d, std::string& why_not);
// Completes `d` (bindings as gemm/common.glsl with Y in slot 3, push constants gemm_float_push) on
// the shared-memory core gemm/smem.comp with tile `t` and adds it to `plan`; with `split_k`, K is
// split over workgroups (products of few tiles and deep K: the GPU's cores filled), the partial
// sums go to a new scratch buffer and gemm/splitk_reduce.comp writes Y. False (why_not filled)
// when the product, its depth or the device does not allow it.
bool smem_core_dispatches(const LayerContext& ctx, const Product& p, const SmemTile& t, bool split_k, Dispatch d,
                          LayerPlan& plan, std::string& why_not);
// True when the device multiplies 16x16x16 fp16 cooperative matrices with accumulators of
// `arith` and pins subgroup sizes; else false with why_not.
bool coopmat_usable(const DeviceProfile& device, Arith arith, std::string& why_not);
// The subgroup size the tensor-core shaders are pinned to: 32 where the device can be asked for it
// (the size tensor cores work in on NVIDIA and, through VK_KHR_cooperative_matrix, on AMD's
// wave32), else the device's default (Intel's 8 or 16; lavapipe's 8 for the emulated builds).
uint32_t coopmat_subgroup_size(const DeviceProfile& dev);

// False (why_not filled) when the device cannot run workgroups of
// `invocations` (1-D) with `shared_bytes` of shared memory.
bool workgroup_fits(uint32_t invocations, uint64_t shared_bytes, const DeviceProfile& device, std::string& why_not);

// Specialization constants 0-8 of the core for a product with vec4-stageable
// A / B and `splits` K ranges; nullopt (why_not filled) when the device cannot
// run the workgroup (invocations, shared memory).
std::optional<std::vector<SpecValue>> smem_tile_spec(const SmemTile& tile, bool vec_a, bool vec_b, uint32_t splits,
                                                     Arith arith, const DeviceProfile& device, std::string& why_not);
// Group counts {ceil(N / bn), row tiles, z}, y and z capped at the device
// limits; nullopt (why_not filled) when x exceeds its limit.
std::optional<std::array<uint32_t, 3>> smem_tile_groups(const SmemTile& tile, int64_t M, int64_t N, int64_t z,
                                                        const DeviceProfile& device, std::string& why_not);

}  // namespace vkg
