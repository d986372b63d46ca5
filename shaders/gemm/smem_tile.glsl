// The GPU-class GEMM core shared by gemm/smem.comp and conv/implicit_gemm.comp:
// a workgroup computes a kBM x kBN tile of Y[batch] = A[batch] * B[batch],
// staging kBK-deep slices of A and B in shared memory; each invocation owns a
// kTM x kTN block of the tile in registers (a fixed-size array indexed with
// compile-time constants in unrolled loops), its rows and columns strided by
// the number of invocations along each axis so that shared-memory reads of B
// are consecutive across a subgroup and reads of A are broadcasts.
//
// Specialization constants: 0 (local_size_x_id) workgroup size, must be
// (kBM / kTM) * (kBN / kTN); 1 kBM; 2 kBN; 3 kBK (a multiple of 4); 4 kTM;
// 5 kTN; 6 kVecA (1: A is staged as vec4 runs along k, K % 4 == 0); 7 kVecB
// (1: B is staged as vec4 runs along n, N % 4 == 0); 8 kSplits (split-K: the
// z groups cover batches * kSplits, each split a kBK-aligned range of k).
//
// The includer defines, before including this file:
//   void smem_batch(uint batch)          called once per batch before loads
//   afp  smem_a1(uint m, uint k)          A(batch, m, k), in range
//   afp4 smem_a4(uint m, uint k)          A(batch, m, k..k+3) (kVecA only)
//   afp  smem_b1(uint k, uint n)          B(batch, k, n), in range
//   afp4 smem_b4(uint k, uint n)          B(batch, k, n..n+3) (kVecB only)
//   void smem_store(uint batch, uint split, uint m, uint n, afp v)   sum of split `split`
// and calls smem_gemm(M, N, K, batches) from main(). Dispatch: x = ceil(N /
// kBN), y = row tiles, z = batches * kSplits; y and z past their counts are
// looped over.
#ifndef VKG_GEMM_SMEM_TILE_GLSL
#define VKG_GEMM_SMEM_TILE_GLSL

#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kBM = 64;
layout(constant_id = 2) const uint kBN = 64;
layout(constant_id = 3) const uint kBK = 16;
layout(constant_id = 4) const uint kTM = 4;
layout(constant_id = 5) const uint kTN = 4;
layout(constant_id = 6) const uint kVecA = 0;
layout(constant_id = 7) const uint kVecB = 0;
layout(constant_id = 8) const uint kSplits = 1;

const uint kThreadsM = kBM / kTM;
const uint kThreadsN = kBN / kTN;
const uint kThreads = kThreadsM * kThreadsN;

shared afp smem_tile_a[kBK * kBM];  // [k][row]
shared afp smem_tile_b[kBK * kBN];  // [k][column]

// Stages A(m0.., k0..) and B(k0.., n0..) into shared memory, zero outside M, N and k_end.
void smem_stage(uint m0, uint n0, uint k0, uint k_end, uint M, uint N) {
  const uint lid = gl_LocalInvocationID.x;
  if (kVecA != 0) {
    const uint quads = kBM * kBK / 4;
    [[unroll]] for (uint i = 0; i < (quads + kThreads - 1) / kThreads; ++i) {
      const uint q = lid + i * kThreads;
      if (q < quads) {
        const uint r = q / (kBK / 4), kk = q % (kBK / 4) * 4;
        afp4 v = afp4(0);
        if (m0 + r < M && k0 + kk < k_end) v = smem_a4(m0 + r, k0 + kk);
        [[unroll]] for (uint j = 0; j < 4; ++j) smem_tile_a[(kk + j) * kBM + r] = v[j];
      }
    }
  } else {
    [[unroll]] for (uint i = 0; i < (kBM * kBK + kThreads - 1) / kThreads; ++i) {
      const uint e = lid + i * kThreads;
      if (e < kBM * kBK) {
        const uint r = e % kBM, kk = e / kBM;
        afp v = afp(0);
        if (m0 + r < M && k0 + kk < k_end) v = smem_a1(m0 + r, k0 + kk);
        smem_tile_a[kk * kBM + r] = v;
      }
    }
  }
  if (kVecB != 0) {
    const uint quads = kBK * kBN / 4;
    [[unroll]] for (uint i = 0; i < (quads + kThreads - 1) / kThreads; ++i) {
      const uint q = lid + i * kThreads;
      if (q < quads) {
        const uint kk = q / (kBN / 4), c = q % (kBN / 4) * 4;
        afp4 v = afp4(0);
        if (n0 + c < N && k0 + kk < k_end) v = smem_b4(k0 + kk, n0 + c);
        [[unroll]] for (uint j = 0; j < 4; ++j) smem_tile_b[kk * kBN + c + j] = v[j];
      }
    }
  } else {
    [[unroll]] for (uint i = 0; i < (kBN * kBK + kThreads - 1) / kThreads; ++i) {
      const uint e = lid + i * kThreads;
      if (e < kBN * kBK) {
        const uint c = e % kBN, kk = e / kBN;
        afp v = afp(0);
        if (n0 + c < N && k0 + kk < k_end) v = smem_b1(k0 + kk, n0 + c);
        smem_tile_b[kk * kBN + c] = v;
      }
    }
  }
}

void smem_gemm(uint M, uint N, uint K, uint batches) {
  const uint lid = gl_LocalInvocationID.x;
  const uint tn = lid % kThreadsN, tm = lid / kThreadsN;
  const uint n0 = gl_WorkGroupID.x * kBN;
  const uint tiles_m = (M + kBM - 1) / kBM;
  const uint k_chunk = ((K + kSplits - 1) / kSplits + kBK - 1) / kBK * kBK;
  for (uint z = gl_WorkGroupID.z; z < batches * kSplits; z += gl_NumWorkGroups.z) {
    const uint batch = z / kSplits, split = z % kSplits;
    const uint k_begin = split * k_chunk, k_end = min(K, k_begin + k_chunk);
    smem_batch(batch);
    for (uint mt = gl_WorkGroupID.y; mt < tiles_m; mt += gl_NumWorkGroups.y) {
      const uint m0 = mt * kBM;
      afp acc[kTM * kTN];
      [[unroll]] for (uint i = 0; i < kTM * kTN; ++i) acc[i] = afp(0);
      for (uint k0 = k_begin; k0 < k_end; k0 += kBK) {
        smem_stage(m0, n0, k0, k_end, M, N);
        barrier();
        [[unroll]] for (uint kk = 0; kk < kBK; ++kk) {
          afp av[kTM], bv[kTN];
          [[unroll]] for (uint i = 0; i < kTM; ++i) av[i] = smem_tile_a[kk * kBM + tm + i * kThreadsM];
          [[unroll]] for (uint j = 0; j < kTN; ++j) bv[j] = smem_tile_b[kk * kBN + tn + j * kThreadsN];
          [[unroll]] for (uint i = 0; i < kTM; ++i) {
            [[unroll]] for (uint j = 0; j < kTN; ++j) acc[i * kTN + j] = fma(av[i], bv[j], acc[i * kTN + j]);
          }
        }
        barrier();
      }
      [[unroll]] for (uint i = 0; i < kTM; ++i) {
        const uint m = m0 + tm + i * kThreadsM;
        [[unroll]] for (uint j = 0; j < kTN; ++j) {
          const uint n = n0 + tn + j * kThreadsN;
          if (m < M && n < N) smem_store(batch, split, m, n, acc[i * kTN + j]);
        }
      }
    }
  }
}

#endif  // VKG_GEMM_SMEM_TILE_GLSL
