// The product description and push constants of shaders/gemm/common.glsl,
// shared by the gemm family (gemm.cpp) and the Conv tactics that run the same
// GEMM shaders (conv.cpp: conv.*_block on gemm/block.comp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/vulkan/device_info.h"

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

// The 13 words shared by GemmParams and IntParams: sizes, strides, C strides, flags.
std::vector<uint32_t> gemm_common_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags);
// GemmParams of the float shaders: the common words, then alpha, beta and padding.
std::vector<uint32_t> gemm_float_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags, float alpha,
                                      float beta);

// Group counts {x: ceil(columns / local), y: rows, z: batches}, y and z capped
// at the device limits (the shaders loop over the rest); nullopt when x exceeds its limit.
std::optional<std::array<uint32_t, 3>> gemm_grid_groups(int64_t columns, uint32_t local, int64_t rows, int64_t batches,
                                                        const vk::DeviceInfo& device);

}  // namespace vkg
