// vkgraphy-variants: f32 f16 f16acc32
// The shared-memory GEMM in the form GPU SGEMMs take (gemm.smemv*), on the interface of
// gemm/common.glsl: a workgroup computes a kBM x kBN tile of Y[batch]; kBK-deep slices of A
// (transposed, [k][row]) and B ([k][column]) are staged in shared memory as vec4s, double
// buffered: the next slice is loaded from global memory into registers while the current one is
// multiplied, then stored to the other buffer, with one barrier per slice. Each invocation owns
// kTM x kTN outputs as runs of four rows and four columns (row quads tm + i * kThreadsM, column
// quads tn + j * kThreadsN), so a step of k reads kTM / 4 + kTN / 4 vec4s of shared memory for
// kTM * kTN multiply-adds; the accumulators are a fixed-size vec4 array indexed with constants.
// A is read as vec4 runs along k and B as vec4 runs along n: the planner requires
// A(b, m, k) = A[a_base + m * a_sm + k] and B(b, k, n) = B[b_base + k * b_sk + n] with K, N,
// a_sm, a_bs, b_sk and b_bs multiples of 4; M, N and K tails read zeros and store nothing.
// Specialization constants: 0 (local_size_x_id) workgroup size, (kBM / kTM) * (kBN / kTN);
// 1 kBM; 2 kBN; 3 kBK (a multiple of 4); 4 kTM; 5 kTN (multiples of 4); 6 kGroupM (gemm_tile's
// bands of row tiles, 0: none); the epilogue's.
// Dispatch: x = ceil(N / kBN), y = row tiles, z = batches (y and z past their counts are
// looped over).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kBM = 128;
layout(constant_id = 2) const uint kBN = 128;
layout(constant_id = 3) const uint kBK = 8;
layout(constant_id = 4) const uint kTM = 8;
layout(constant_id = 5) const uint kTN = 8;
layout(constant_id = 6) const uint kGroupM = 0;

const uint kThreadsM = kBM / kTM;
const uint kThreadsN = kBN / kTN;
const uint kThreads = kThreadsM * kThreadsN;
const uint kQM = kTM / 4;                    // row quads per invocation
const uint kQN = kTN / 4;                    // column quads per invocation
const uint kBlocksA = (kBM / 4) * (kBK / 4);  // 4 x 4 blocks of an A slice
const uint kQuadsB = kBK * (kBN / 4);         // vec4s of a B slice
const uint kLoadsA = (kBlocksA + kThreads - 1) / kThreads;
const uint kLoadsB = (kQuadsB + kThreads - 1) / kThreads;

layout(binding = 0) readonly buffer A4 { sfp4 a4[]; };
layout(binding = 1) readonly buffer B4 { sfp4 b4[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y4 { sfp4 y4[]; };

shared afp4 tile_a[2][kBK][kBM / 4];  // [buffer][k][row quad]
shared afp4 tile_b[2][kBK][kBN / 4];  // [buffer][k][column quad]

afp4 staged_a[kLoadsA * 4];  // per block: its four rows, each a vec4 along k
afp4 staged_b[kLoadsB];

// Loads the slice at k0 of the tile at (m0, n0) into registers, zeros outside M, N and K.
void load_slice(uint a_base, uint b_base, uint m0, uint n0, uint k0) {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < kLoadsA; ++i) {
    const uint block = lid + i * kThreads;
    const uint rq = block / (kBK / 4), k = k0 + block % (kBK / 4) * 4;
    [[unroll]] for (uint r = 0; r < 4; ++r) {
      const uint m = m0 + rq * 4 + r;
      afp4 v = afp4(0);
      if (block < kBlocksA && m < p.M && k < p.K) v = sfp2afp4(a4[(a_base + m * p.a_sm + k) / 4]);
      staged_a[i * 4 + r] = v;
    }
  }
  [[unroll]] for (uint i = 0; i < kLoadsB; ++i) {
    const uint q = lid + i * kThreads;
    const uint k = k0 + q / (kBN / 4), n = n0 + q % (kBN / 4) * 4;
    afp4 v = afp4(0);
    if (q < kQuadsB && k < p.K && n < p.N) v = sfp2afp4(b4[(b_base + k * p.b_sk + n) / 4]);
    staged_b[i] = v;
  }
}

// Stores the registers of load_slice into shared buffer `buf`, A transposed 4 x 4 at a time.
void store_slice(uint buf) {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < kLoadsA; ++i) {
    const uint block = lid + i * kThreads;
    if (block < kBlocksA) {
      const uint rq = block / (kBK / 4), kq = block % (kBK / 4);
      [[unroll]] for (uint j = 0; j < 4; ++j) {
        tile_a[buf][kq * 4 + j][rq] =
            afp4(staged_a[i * 4][j], staged_a[i * 4 + 1][j], staged_a[i * 4 + 2][j], staged_a[i * 4 + 3][j]);
      }
    }
  }
  [[unroll]] for (uint i = 0; i < kLoadsB; ++i) {
    const uint q = lid + i * kThreads;
    if (q < kQuadsB) tile_b[buf][q / (kBN / 4)][q % (kBN / 4)] = staged_b[i];
  }
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint tn = lid % kThreadsN, tm = lid / kThreadsN;
  const uint tiles_m = (p.M + kBM - 1) / kBM;
  const uvec2 tile = gemm_tile((p.N + kBN - 1) / kBN, tiles_m, kGroupM);
  const uint n0 = tile.x * kBN;
  const afp alpha = afp(uintBitsToFloat(p.alpha_bits));
  const afp beta = afp(uintBitsToFloat(p.beta_bits));
  for (uint batch = gl_WorkGroupID.z; batch < p.batches; batch += gl_NumWorkGroups.z) {
    const uint a_base = gemm_a_base(batch), b_base = gemm_b_base(batch);
    for (uint mt = tile.y; mt < tiles_m; mt += gl_NumWorkGroups.y) {
      const uint m0 = mt * kBM;
      afp4 acc[kTM * kQN];  // [row][column quad]
      [[unroll]] for (uint i = 0; i < kTM * kQN; ++i) acc[i] = afp4(0);
      load_slice(a_base, b_base, m0, n0, 0);
      store_slice(0);
      barrier();
      uint buf = 0;
      for (uint k0 = 0; k0 < p.K; k0 += kBK) {
        const bool more = k0 + kBK < p.K;
        if (more) load_slice(a_base, b_base, m0, n0, k0 + kBK);
        [[unroll]] for (uint kk = 0; kk < kBK; ++kk) {
          afp4 av[kQM], bv[kQN];
          [[unroll]] for (uint i = 0; i < kQM; ++i) av[i] = tile_a[buf][kk][tm + i * kThreadsM];
          [[unroll]] for (uint j = 0; j < kQN; ++j) bv[j] = tile_b[buf][kk][tn + j * kThreadsN];
          [[unroll]] for (uint i = 0; i < kQM; ++i) {
            [[unroll]] for (uint r = 0; r < 4; ++r) {
              [[unroll]] for (uint j = 0; j < kQN; ++j) {
                acc[(i * 4 + r) * kQN + j] = fma(afp4(av[i][r]), bv[j], acc[(i * 4 + r) * kQN + j]);
              }
            }
          }
        }
        // The other buffer was last read before the previous barrier.
        if (more) store_slice(buf ^ 1u);
        barrier();
        buf ^= 1u;
      }
      [[unroll]] for (uint i = 0; i < kQM; ++i) {
        [[unroll]] for (uint r = 0; r < 4; ++r) {
          const uint m = m0 + (tm + i * kThreadsM) * 4 + r;
          [[unroll]] for (uint j = 0; j < kQN; ++j) {
            const uint n = n0 + (tn + j * kThreadsN) * 4;
            if (m < p.M && n < p.N) {
              afp4 result = alpha * acc[(i * 4 + r) * kQN + j];
              if ((p.flags & kGemmHasC) != 0u) {
                [[unroll]] for (uint e = 0; e < 4; ++e) {
                  result[e] += beta * sfp2afp(c[m * p.c_sm + (n + e) * p.c_sn]);
                }
              }
              y4[((batch * p.M + m) * p.N + n) / 4] = afp2sfp4(vkg_epilogue4(result));
            }
          }
        }
      }
    }
  }
}
