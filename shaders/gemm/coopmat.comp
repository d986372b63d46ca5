// vkgraphy-variants: f16 f16acc32
// vkgraphy-coopmat-khr
// vkgraphy-coopmat-emulated
// fp16 GEMM on tensor cores through cooperative matrices (NV or KHR:
// common/coopmat.glsl), on the interface of gemm/common.glsl with any strides. A workgroup of
// kWarpsM x kWarpsN subgroups computes a kBM x kBN tile of Y; each subgroup
// owns 2 x 2 fragments of 16 x 16 (fp16 accumulators in .f16, fp32 in
// .f16acc32). Slices of A and B, kBK deep, are staged in shared memory as
// fp16 (zero outside M, N and K), so any M, N and K work; the accumulators go
// through shared memory once at the end, where each invocation applies alpha,
// beta * C and the fused activation to the elements inside Y.
// Needs: 16x16x16 fp16 cooperative matrices with accumulators of the
// variant's type, and subgroup size control: the planner pins the subgroup
// size so that gl_SubgroupID numbers exactly kWarpsM * kWarpsN subgroups.
// Specialization constants: 0 (local_size_x_id) workgroup size, must be
// kWarpsM * kWarpsN * the subgroup size; 1 kWarpsM; 2 kWarpsN; 3 kKSteps
// (kBK = 16 * kKSteps); the epilogue's.
// Dispatch: x = ceil(N / kBN), y = row tiles, z = batches (y and z past their
// counts are looped over).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#include "common/coopmat.glsl"
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

#if defined(VKG_PRECISION_F16ACC32)
#define ACC_BITS 32
#else
#define ACC_BITS 16
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kWarpsM = 2;
layout(constant_id = 2) const uint kWarpsN = 2;
layout(constant_id = 3) const uint kKSteps = 2;

const uint kFrag = 16;      // fragment edge
const uint kFrags = 2;      // fragments per subgroup along M and along N
const uint kBM = kWarpsM * kFrags * kFrag;
const uint kBN = kWarpsN * kFrags * kFrag;
const uint kBK = kKSteps * kFrag;

layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 1) readonly buffer B { sfp b[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

shared float16_t tile_a[kBM * kBK];  // [row][k]
shared float16_t tile_b[kBK * kBN];  // [k][column]
shared afp tile_y[kBM * kBN];        // [row][column]

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint threads = gl_WorkGroupSize.x;
  const uint wm = gl_SubgroupID / kWarpsN, wn = gl_SubgroupID % kWarpsN;
  const uint n0 = gl_WorkGroupID.x * kBN;
  const uint tiles_m = (p.M + kBM - 1) / kBM;
  for (uint batch = gl_WorkGroupID.z; batch < p.batches; batch += gl_NumWorkGroups.z) {
    const uint a_base = gemm_a_base(batch);
    const uint b_base = gemm_b_base(batch);
    for (uint mt = gl_WorkGroupID.y; mt < tiles_m; mt += gl_NumWorkGroups.y) {
      const uint m0 = mt * kBM;
      COOPMAT_ACC(ACC_BITS, kFrag, kFrag) acc[kFrags * kFrags];
      [[unroll]] for (uint i = 0; i < kFrags * kFrags; ++i) acc[i] = COOPMAT_ZERO(ACC_BITS, kFrag, kFrag);
      for (uint k0 = 0; k0 < p.K; k0 += kBK) {
        for (uint e = lid; e < kBM * kBK; e += threads) {
          const uint r = e / kBK, kk = e % kBK;
          float16_t v = float16_t(0);
          if (m0 + r < p.M && k0 + kk < p.K) v = float16_t(a[a_base + (m0 + r) * p.a_sm + (k0 + kk) * p.a_sk]);
          tile_a[e] = v;
        }
        for (uint e = lid; e < kBK * kBN; e += threads) {
          const uint kk = e / kBN, col = e % kBN;
          float16_t v = float16_t(0);
          if (n0 + col < p.N && k0 + kk < p.K) v = float16_t(b[b_base + (k0 + kk) * p.b_sk + (n0 + col) * p.b_sn]);
          tile_b[e] = v;
        }
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
        if (m >= p.M || n >= p.N) continue;
        afp result = afp(uintBitsToFloat(p.alpha_bits)) * tile_y[e];
        if ((p.flags & kGemmHasC) != 0u) result += afp(uintBitsToFloat(p.beta_bits)) * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
        y[(batch * p.M + m) * p.N + n] = afp2sfp(vkg_epilogue(result));
      }
      barrier();
    }
  }
}
