// What the gemm family's planners share (gemm.cpp registers them): a layer
// described as a Product (gemm_product.cpp), the checks and small weights every
// plan makes, and the planners of the float (gemm_float.cpp), integer
// (gemm_integer.cpp) and Det (gemm_det.cpp) layers. The dispatches shared with
// the conv family are in gemm_common.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_common.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::gemm_tactics {

inline int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }
inline int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }

// A and B of MatMul-like ops with numpy semantics (1-D promotion, broadcast
// batch dims); throws Error naming the node on shapes that do not multiply.
Product matmul_product(const LayerContext& ctx, size_t a_input, size_t b_input, bool fold_batches);
// A and B of Gemm (2-D, transA/transB); throws Error on shapes that do not multiply.
Product gemm_product(const LayerContext& ctx);
// Broadcast strides {row, column} of Gemm's C over [M, N]; throws Error when C does not broadcast.
std::array<int64_t, 2> gemm_c_strides(const LayerContext& ctx, int64_t m, int64_t n);

// Declines (false, why_not) when a tensor of the layer cannot live on the device.
bool dtypes_supported(const LayerContext& ctx, std::string& why_not);
// Declines when a buffer of the plan exceeds the device's storage buffer range.
bool buffers_fit(const LayerContext& ctx, const LayerPlan& plan, std::string& why_not);
// The batch table weight ({A offset, B offset} per batch) or the `zero` weight.
BindingRef batch_table(const Product& p, LayerPlan& plan, BindingRef zero);
BindingRef zero_weight(LayerPlan& plan);

// ---------------------------------------------------------------------------
// Float layers (gemm_float.cpp)

enum class Algorithm { Naive, Tiled, Reg, Block, Smem, CoopMat };

struct FloatTactic {
  Algorithm algorithm = Algorithm::Naive;
  uint32_t block = 1;     // tile edge (Tiled) or rows per invocation (Reg, Block)
  uint32_t col_vecs = 1;  // Reg, Block: vec4 column vectors per invocation (Reg: 1 or 2, Block: 1..4)
  bool only_m1 = false;   // the GEMV form: products with M == 1 only
  bool share_a = false;   // Reg, Block: lanes of a subgroup load A once and share it (Block: by shuffles,
                          // gemm/block_shuffle_a, device feature subgroup-shuffle)
  bool wide_a = false;    // Block: A read eight floats per load (gemm/block_wide_a, device feature int64)
  SmemTile smem = {};     // Smem: the workgroup tile
  bool split_k = false;   // Smem: split K over workgroups (few output tiles, deep K)
  CoopTile coop = {};     // CoopMat: the workgroup
};

std::optional<LayerPlan> plan_float(const FloatTactic& tactic, const LayerContext& ctx, std::string& why_not);

// ---------------------------------------------------------------------------
// Integer layers (gemm_integer.cpp): the exact int32 shader gemm/integer.

std::optional<LayerPlan> plan_matmul_integer(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_qlinear_matmul(const LayerContext& ctx, std::string& why_not);
// MatMul and Gemm on int32/int64/uint32 tensors (computed in wrapping int32,
// exact whenever the results fit the int32 device storage).
std::optional<LayerPlan> plan_integer_product(const LayerContext& ctx, std::string& why_not);

// Det (gemm_det.cpp): shaders/gemm/det.comp, one invocation per matrix eliminating on a scratch copy.
std::optional<LayerPlan> plan_det(const LayerContext& ctx, std::string& why_not);

}  // namespace vkg::gemm_tactics
