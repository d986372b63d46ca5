// The cooperative-matrix GEMM core of gemm/coopmat.comp and conv/implicit_coopmat.comp:
//   Y(batch, m, n) = sum_k A(batch, m, k) * B(batch, k, n), m < M, n < N, k < K
// on tensor cores (common/coopmat.glsl). A workgroup of kWarpsM x kWarpsN subgroups computes a
// kBM x kBN tile of Y; each subgroup owns 2 x 2 fragments of 16 x 16 (fp16 accumulators in .f16,
// fp32 in .f16acc32). Slices of A and B, kBK deep, are staged in shared memory as fp16 (zero
// outside M, N and K), so any M, N and K work; the accumulators go through shared memory once
// at the end, where each invocation hands the elements inside Y to the shader's store.
//
// The including shader includes common/coopmat.glsl first (before any declaration), then
// common/precision.glsl, and defines before this file:
//   void coop_batch(uint batch)               called before a batch's tiles (its bases)
//   float16_t coop_a(uint m, uint k)          A(batch, m, k), m < M, k < K
//   float16_t coop_b(uint k, uint n)          B(batch, k, n), k < K, n < N
//   void coop_store(uint batch, uint m, uint n, afp sum)
// Needs: 16x16x16 fp16 cooperative matrices with accumulators of the variant's type, and a
// subgroup size the planner pins, so that gl_SubgroupID numbers exactly kWarpsM * kWarpsN
// subgroups. Specialization constants: 0 (local_size_x_id) workgroup size, kWarpsM * kWarpsN *
// the subgroup size; 1 kWarpsM; 2 kWarpsN; 3 kKSteps (kBK = 16 * kKSteps).
// Dispatch: x = ceil(N / kBN), y = row tiles, z = batches (y and z past their counts loop).
#ifndef VKG_GEMM_COOPMAT_TILE_GLSL
#define VKG_GEMM_COOPMAT_TILE_GLSL

#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require

#if defined(VKG_PRECISION_F16ACC32)
#define ACC_BITS 32
#else
#define ACC_BITS 16
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kWarpsM = 2;
layout(constant_id = 2) const uint kWarpsN = 2;
layout(constant_id = 3) const uint kKSteps = 2;

const uint kFrag = 16;  // fragment edge
const uint kFrags = 2;  // fragments per subgroup along M and along N
const uint kBM = kWarpsM * kFrags * kFrag;
const uint kBN = kWarpsN * kFrags * kFrag;
const uint kBK = kKSteps * kFrag;

shared float16_t tile_a[kBM * kBK];  // [row][k]
shared float16_t tile_b[kBK * kBN];  // [k][column]
shared afp tile_y[kBM * kBN];        // [row][column]

// The kBK-deep slices of A and B at k0 into shared memory, zero outside M, N and K.
void coopmat_stage(uint M, uint N, uint K, uint m0, uint n0, uint k0) {
  const uint lid = gl_LocalInvocationID.x, threads = gl_WorkGroupSize.x;
  for (uint e = lid; e < kBM * kBK; e += threads) {
    const uint r = e / kBK, kk = e % kBK;
    tile_a[e] = m0 + r < M && k0 + kk < K ? coop_a(m0 + r, k0 + kk) : float16_t(0);
  }
  for (uint e = lid; e < kBK * kBN; e += threads) {
    const uint kk = e / kBN, col = e % kBN;
    tile_b[e] = n0 + col < N && k0 + kk < K ? coop_b(k0 + kk, n0 + col) : float16_t(0);
  }
}

void coopmat_gemm(uint M, uint N, uint K, uint batches) {
  const uint lid = gl_LocalInvocationID.x, threads = gl_WorkGroupSize.x;
  const uint wm = gl_SubgroupID / kWarpsN, wn = gl_SubgroupID % kWarpsN;
  const uint n0 = gl_WorkGroupID.x * kBN;
  const uint tiles_m = (M + kBM - 1) / kBM;
  for (uint batch = gl_WorkGroupID.z; batch < batches; batch += gl_NumWorkGroups.z) {
    coop_batch(batch);
    for (uint mt = gl_WorkGroupID.y; mt < tiles_m; mt += gl_NumWorkGroups.y) {
      const uint m0 = mt * kBM;
      COOPMAT_ACC(ACC_BITS, kFrag, kFrag) acc[kFrags * kFrags];
      [[unroll]] for (uint i = 0; i < kFrags * kFrags; ++i) acc[i] = COOPMAT_ZERO(ACC_BITS, kFrag, kFrag);
      for (uint k0 = 0; k0 < K; k0 += kBK) {
        coopmat_stage(M, N, K, m0, n0, k0);
        barrier();
        [[unroll]] for (uint ks = 0; ks < kKSteps; ++ks) {
          COOPMAT_A(kFrag, kFrag) fa[kFrags];
          COOPMAT_B(kFrag, kFrag) fb[kFrags];
          [[unroll]] for (uint i = 0; i < kFrags; ++i)
            coopmat_load(fa[i], tile_a, ((wm * kFrags + i) * kFrag) * kBK + ks * kFrag, kBK);
          [[unroll]] for (uint j = 0; j < kFrags; ++j)
            coopmat_load(fb[j], tile_b, ks * kFrag * kBN + (wn * kFrags + j) * kFrag, kBN);
          [[unroll]] for (uint i = 0; i < kFrags; ++i) {
            [[unroll]] for (uint j = 0; j < kFrags; ++j)
              acc[i * kFrags + j] = coopmat_mul_add(fa[i], fb[j], acc[i * kFrags + j]);
          }
        }
        barrier();
      }
      [[unroll]] for (uint i = 0; i < kFrags; ++i) {
        [[unroll]] for (uint j = 0; j < kFrags; ++j)
          coopmat_store(acc[i * kFrags + j], tile_y, (wm * kFrags + i) * kFrag * kBN + (wn * kFrags + j) * kFrag, kBN);
      }
      barrier();
      for (uint e = lid; e < kBM * kBN; e += threads) {
        const uint m = m0 + e / kBN, n = n0 + e % kBN;
        if (m < M && n < N) coop_store(batch, m, n, tile_y[e]);
      }
      barrier();
    }
  }
}

#endif  // VKG_GEMM_COOPMAT_TILE_GLSL
