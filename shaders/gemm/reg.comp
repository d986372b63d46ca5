// vkgraphy-variants: f32 f16 f16acc32
// Register-blocked GEMM: each invocation computes a kRows x (4 * kColVecs)
// block of Y in vec4 accumulators, reading B as vec4 rows and, when kAVec4,
// A as vec4 runs along k. The interface of gemm/common.glsl, with these
// requirements on B (met by packing a constant B at plan time, N padded to a
// multiple of 4):
//   b_sn == 1, b_sk and every B batch base a multiple of 4, and B readable up
//   to column round_up(N, 4) - 1 of every row (padding columns are ignored).
// kAVec4 == 1 requires a_sk == 1 and a_sm and every A batch base a multiple
// of 4; otherwise A is read as scalars with any strides.
// kNVec4 == 1 (N a multiple of 4) stores Y as vec4.
// kShareA == 1: the lanes of a subgroup (which share their rows) each load a
// part of the block's A values and broadcast them (subgroup ballot
// operations); every element load is costly on lavapipe, shuffles are not.
// Dispatch: groups (ceil(ceil(ceil(N / 4) / kColVecs) / local size), row
// blocks, batches): invocation gl_GlobalInvocationID.x owns vec4 column blocks
// x * kColVecs .. + kColVecs - 1, workgroup y row block y and z batch z. Row
// blocks and batches past the y and z counts are looped over, so those counts
// may be capped at the device limits. A workgroup shares its rows.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kRows
// (1..16); 2 kAVec4; 3 kNVec4; 4 kColVecs (1 or 2); 5 kShareA.
// The loops over rows stay rolled ([[dont_unroll]]): unrolled 16 x 8 blocks
// take lavapipe's JIT several seconds per pipeline and run no faster.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kRows = 4;
layout(constant_id = 2) const uint kAVec4 = 0;
layout(constant_id = 3) const uint kNVec4 = 0;
layout(constant_id = 4) const uint kColVecs = 1;
layout(constant_id = 5) const uint kShareA = 0;

layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 0) readonly buffer A4 { sfp4 a4[]; };
layout(binding = 1) readonly buffer B4 { sfp4 b4[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer Y4 { sfp4 y4[]; };

// Y[batch, m, n0 .. n0 + 3] = alpha * acc + beta * C (columns and rows past N and M skipped).
void store(uint batch, uint m, uint n0, afp4 acc) {
  if (m >= p.M || n0 >= p.N) return;
  afp4 result = afp(uintBitsToFloat(p.alpha_bits)) * acc;
  if ((p.flags & kGemmHasC) != 0u) {
    const afp beta = afp(uintBitsToFloat(p.beta_bits));
    [[dont_unroll]] for (uint j = 0; j < 4; ++j) {
      if (n0 + j < p.N) result[j] += beta * sfp2afp(c[m * p.c_sm + (n0 + j) * p.c_sn]);
    }
  }
  const uint yi = (batch * p.M + m) * p.N + n0;
  if (kNVec4 == 1) {
    y4[yi / 4] = afp2sfp4(vkg_epilogue4(result));
  } else {
    [[dont_unroll]] for (uint j = 0; j < 4; ++j) {
      if (n0 + j < p.N) y[yi + j] = afp2sfp(vkg_epilogue(result[j]));
    }
  }
}

// With kShareA, lane l of a subgroup of size S loads rows l, l + S, ... of
// the block (clamped) into `mine`; row i is then broadcast from lane i % S.
// The broadcast goes through fp32 (no 16-bit subgroup types needed).
#define GEMM_SHARED_ROWS (kShareA == 1 ? kRows : 1)

void main() {
  const uint blocks_n = (p.N + 3) / 4;  // vec4 column blocks of a B row
  if (blocks_n == 0) return;
  // No early return of single invocations: kShareA needs every lane of the
  // subgroup. Column vectors past N read the last block and are not stored.
  const uint cb = gl_GlobalInvocationID.x * kColVecs;
  uint cv[kColVecs];
  for (uint j = 0; j < kColVecs; ++j) cv[j] = min(cb + j, blocks_n - 1);
  const uint blocks_m = (p.M + kRows - 1) / kRows;
  const uint b_sk4 = p.b_sk / 4;
  const uint S = gl_SubgroupSize;
  for (uint batch = gl_WorkGroupID.z; batch < p.batches; batch += gl_NumWorkGroups.z) {
    const uint a_base = gemm_a_base(batch);
    const uint b_base = gemm_b_base(batch) / 4;
    for (uint mb = gl_WorkGroupID.y; mb < blocks_m; mb += gl_NumWorkGroups.y) {
      const uint m0 = mb * kRows;
      // Rows past M read row M - 1 and are not stored.
      uint a_row[kRows];
      for (uint i = 0; i < kRows; ++i) a_row[i] = a_base + min(m0 + i, p.M - 1) * p.a_sm;
      uint my_row[GEMM_SHARED_ROWS];
      for (uint s = 0; s < GEMM_SHARED_ROWS; ++s) {
        my_row[s] = a_base + min(m0 + min(s * S + gl_SubgroupInvocationID, kRows - 1), p.M - 1) * p.a_sm;
      }
      afp4 acc[kRows * kColVecs];  // [row][column vector]
      for (uint i = 0; i < kRows * kColVecs; ++i) acc[i] = afp4(0);
      uint bi = b_base;
      uint k = 0;
      if (kAVec4 == 1) {
        for (; k + 4 <= p.K; k += 4) {
          afp4 bv[4 * kColVecs];  // [column vector][k]
          for (uint j = 0; j < kColVecs; ++j) {
            for (uint kk = 0; kk < 4; ++kk) bv[j * 4 + kk] = sfp2afp4(b4[bi + kk * b_sk4 + cv[j]]);
          }
          bi += 4 * b_sk4;
          vec4 mine[GEMM_SHARED_ROWS];
          if (kShareA == 1) {
            for (uint s = 0; s < GEMM_SHARED_ROWS && s * S < kRows; ++s) mine[s] = vec4(a4[(my_row[s] + k) / 4]);
          }
          [[dont_unroll]] for (uint i = 0; i < kRows; ++i) {
            const afp4 av = kShareA == 1 ? afp4(subgroupBroadcast(mine[i / S], i % S))
                                         : sfp2afp4(a4[(a_row[i] + k) / 4]);
            for (uint j = 0; j < kColVecs; ++j) {
              acc[i * kColVecs + j] +=
                  av.x * bv[j * 4] + av.y * bv[j * 4 + 1] + av.z * bv[j * 4 + 2] + av.w * bv[j * 4 + 3];
            }
          }
        }
      }
      for (; k < p.K; ++k) {
        afp4 bv[kColVecs];
        for (uint j = 0; j < kColVecs; ++j) bv[j] = sfp2afp4(b4[bi + cv[j]]);
        bi += b_sk4;
        float mine[GEMM_SHARED_ROWS];
        if (kShareA == 1) {
          for (uint s = 0; s < GEMM_SHARED_ROWS && s * S < kRows; ++s) mine[s] = float(a[my_row[s] + k * p.a_sk]);
        }
        [[dont_unroll]] for (uint i = 0; i < kRows; ++i) {
          const afp av = kShareA == 1 ? afp(subgroupBroadcast(mine[i / S], i % S)) : sfp2afp(a[a_row[i] + k * p.a_sk]);
          for (uint j = 0; j < kColVecs; ++j) acc[i * kColVecs + j] += av * bv[j];
        }
      }
      [[dont_unroll]] for (uint i = 0; i < kRows; ++i) {
        for (uint j = 0; j < kColVecs; ++j) store(batch, m0 + i, (cb + j) * 4, acc[i * kColVecs + j]);
      }
    }
  }
}
