// Shared interface of the float GEMM shaders (naive.comp, tiled.comp, reg.comp):
//   Y[b, m, n] = alpha * sum_k A(b, m, k) * B(b, k, n) + beta * C(m, n)
// for b < batches, m < M, n < N. Y is dense row-major [batches, M, N].
//
// Bindings (set 0):
//   0 A, 1 B, 2 C (bound to any buffer when flags has no kGemmHasC),
//   3 Y, 4 batch table (int32 pairs {A offset, B offset} per batch, in
//   elements; bound to any buffer when flags has no kGemmBatchTable).
// Push constants (16 words, GemmParams below):
//   A(b, m, k) = A[a_base(b) + m * a_sm + k * a_sk]
//   B(b, k, n) = B[b_base(b) + k * b_sk + n * b_sn]
//   C(m, n)    = C[m * c_sm + n * c_sn]    (strides 0 on broadcast axes)
//   a_base(b) = b * a_bs, b_base(b) = b * b_bs, or the batch table's entries
//   when flags has kGemmBatchTable (broadcast batch dims of MatMul).
//   alpha, beta: float bits.
#ifndef VKG_GEMM_COMMON_GLSL
#define VKG_GEMM_COMMON_GLSL

const uint kGemmHasC = 1u;
const uint kGemmBatchTable = 2u;

layout(push_constant) uniform GemmParams {
  uint M, N, K, batches;
  uint a_bs, a_sm, a_sk;
  uint b_bs, b_sk, b_sn;
  uint c_sm, c_sn;
  uint flags;
  uint alpha_bits, beta_bits;
  uint pad0;
} p;

layout(binding = 4) readonly buffer GemmBatchTable { int gemm_batch_table[]; };

uint gemm_a_base(uint b) {
  return (p.flags & kGemmBatchTable) != 0u ? uint(gemm_batch_table[2u * b]) : b * p.a_bs;
}

uint gemm_b_base(uint b) {
  return (p.flags & kGemmBatchTable) != 0u ? uint(gemm_batch_table[2u * b + 1u]) : b * p.b_bs;
}

// The output tile (column tile, row tile) of this workgroup for a grid of tiles_n x tiles_m tiles:
// as dispatched ((x, y); the y past the grid loop on), or, with group_m > 0 and a grid of exactly
// those tiles, rasterized in bands of group_m row tiles taken column by column, so that the
// workgroups running at once read the same few rows of A and columns of B (L2 reuse).
uvec2 gemm_tile(uint tiles_n, uint tiles_m, uint group_m) {
  if (group_m == 0u || gl_NumWorkGroups.x != tiles_n || gl_NumWorkGroups.y != tiles_m)
    return gl_WorkGroupID.xy;
  const uint id = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
  const uint band = group_m * tiles_n;
  const uint first_m = id / band * group_m;
  const uint rows = min(tiles_m - first_m, group_m);
  const uint in_band = id % band;
  return uvec2(in_band / rows, first_m + in_band % rows);
}

#endif  // VKG_GEMM_COMMON_GLSL
