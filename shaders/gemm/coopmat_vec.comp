// vkgraphy-variants: f16 f16acc32
// vkgraphy-coopmat-khr
// vkgraphy-coopmat-emulated
// fp16 GEMM on tensor cores for large aligned products (gemm.coopmatv*), on the interface of
// gemm/common.glsl: the form NVIDIA's cooperative-matrix samples take. A workgroup of
// kWarpsM x kWarpsN subgroups computes a kBM x kBN tile of Y, each subgroup kFragsM x kFragsN
// fragments of 16 x 16. Slices of A (kBM x kBK) and B (kBK x kBN) move from global to shared
// memory as 16-byte vectors (eight fp16 values): loaded into registers while the previous slice
// is multiplied, then stored, with kStages shared buffers: one (stored between two barriers, after
// every subgroup is done with the previous slice) or two (stored into the buffer not being read,
// one barrier per slice). Shared rows carry eight values of padding
// so that the fragment loads of neighbouring rows fall into other banks. Each subgroup finishes
// a fragment at a time through its own 16 x 16 scratch in shared memory, where its invocations
// apply alpha, beta * C and the fused activation to the elements inside Y (M and N tails).
// Needs: A(b, m, k) = A[a_base + m * a_sm + k] and B(b, k, n) = B[b_base + k * b_sk + n] with
// K, N, a_sm, a_bs, b_sk and b_bs multiples of 8 and no batch table (the planner checks);
// 16x16x16 fp16 cooperative matrices with accumulators of the variant's type; full subgroups of
// kLanes (pinned with subgroup size control) so that gl_SubgroupID numbers the kWarpsM * kWarpsN
// subgroups.
// Specialization constants: 0 (local_size_x_id) workgroup size, kWarpsM * kWarpsN * kLanes;
// 1 kWarpsM; 2 kWarpsN; 3 kFragsM; 4 kFragsN; 5 kKSteps (kBK = 16 * kKSteps); 6 kStages (1 or 2);
// 7 kGroupM (gemm_tile's bands of row tiles, 0: none); 8 kWhole (1: M, N and K are whole
// multiples of the tile, so no load or store checks its bounds); 9 kConstK, 10 kConstASm,
// 11 kConstBSk (K, A's and B's row strides compiled in, as NVIDIA's cooperative-matrix samples
// compile every size and stride; 0: read from the push constants); 12 kLanes, the subgroup size
// (32 on NVIDIA and AMD's wave32, 8 or 16 on Intel, 8 for lavapipe's emulated build); the epilogue's.
// Dispatch: x = ceil(N / kBN), y = row tiles, z = batches (y and z past their counts are
// looped over).
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
layout(constant_id = 2) const uint kWarpsN = 4;
layout(constant_id = 3) const uint kFragsM = 4;
layout(constant_id = 4) const uint kFragsN = 2;
layout(constant_id = 5) const uint kKSteps = 2;
layout(constant_id = 6) const uint kStages = 1;
layout(constant_id = 7) const uint kGroupM = 0;
layout(constant_id = 8) const uint kWhole = 0;
layout(constant_id = 9) const uint kConstK = 0;
layout(constant_id = 10) const uint kConstASm = 0;
layout(constant_id = 11) const uint kConstBSk = 0;
layout(constant_id = 12) const uint kLanes = 32;

const uint kFrag = 16;
const uint kThreads = kWarpsM * kWarpsN * kLanes;
const uint kBM = kWarpsM * kFragsM * kFrag;
const uint kBN = kWarpsN * kFragsN * kFrag;
const uint kBK = kKSteps * kFrag;
// Shared rows in 16-byte vectors (eight fp16 values), one of padding each.
const uint kRowA = kBK / 8 + 1;
const uint kRowB = kBN / 8 + 1;
const uint kVecsA = kBM * (kBK / 8);  // vectors of an A slice
const uint kVecsB = kBK * (kBN / 8);  // vectors of a B slice
const uint kLoadsA = (kVecsA + kThreads - 1) / kThreads;
const uint kLoadsB = (kVecsB + kThreads - 1) / kThreads;
const uint kStageA = kBM * kRowA;  // vectors of one shared A buffer
const uint kStageB = kBK * kRowB;

layout(binding = 0) readonly buffer A8 { uvec4 a8[]; };
layout(binding = 1) readonly buffer B8 { uvec4 b8[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

shared uvec4 tile_a[kStages * kStageA];  // [buffer][row][k / 8]
shared uvec4 tile_b[kStages * kStageB];  // [buffer][k][column / 8]
shared afp scratch[kWarpsM * kWarpsN * kFrag * kFrag];

uvec4 staged_a[kLoadsA];
uvec4 staged_b[kLoadsB];

uint dim_k() { return kConstK != 0u ? kConstK : p.K; }
uint a_row_stride() { return kConstASm != 0u ? kConstASm : p.a_sm; }
uint b_row_stride() { return kConstBSk != 0u ? kConstBSk : p.b_sk; }

void load_slice(uint a_base, uint b_base, uint m0, uint n0, uint k0) {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < kLoadsA; ++i) {
    const uint v = lid + i * kThreads;
    const uint m = m0 + v / (kBK / 8), k = k0 + v % (kBK / 8) * 8;
    uvec4 value = uvec4(0);
    if (v < kVecsA && (kWhole != 0u || (m < p.M && k < dim_k()))) value = a8[(a_base + m * a_row_stride() + k) / 8];
    staged_a[i] = value;
  }
  [[unroll]] for (uint i = 0; i < kLoadsB; ++i) {
    const uint v = lid + i * kThreads;
    const uint k = k0 + v / (kBN / 8), n = n0 + v % (kBN / 8) * 8;
    uvec4 value = uvec4(0);
    if (v < kVecsB && (kWhole != 0u || (k < dim_k() && n < p.N))) value = b8[(b_base + k * b_row_stride() + n) / 8];
    staged_b[i] = value;
  }
}

void store_slice(uint buf) {
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < kLoadsA; ++i) {
    const uint v = lid + i * kThreads;
    if (v < kVecsA) tile_a[buf * kStageA + v / (kBK / 8) * kRowA + v % (kBK / 8)] = staged_a[i];
  }
  [[unroll]] for (uint i = 0; i < kLoadsB; ++i) {
    const uint v = lid + i * kThreads;
    if (v < kVecsB) tile_b[buf * kStageB + v / (kBN / 8) * kRowB + v % (kBN / 8)] = staged_b[i];
  }
}

void main() {
  const uint warp = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint wm = warp / kWarpsN, wn = warp % kWarpsN;
  const uint tiles_m = (p.M + kBM - 1) / kBM;
  const uvec2 tile = gemm_tile((p.N + kBN - 1) / kBN, tiles_m, kGroupM);
  const uint n0 = tile.x * kBN;
  const afp alpha = afp(uintBitsToFloat(p.alpha_bits));
  const afp beta = afp(uintBitsToFloat(p.beta_bits));
  for (uint batch = gl_WorkGroupID.z; batch < p.batches; batch += gl_NumWorkGroups.z) {
    const uint a_base = batch * p.a_bs, b_base = batch * p.b_bs;
    for (uint mt = tile.y; mt < tiles_m; mt += gl_NumWorkGroups.y) {
      const uint m0 = mt * kBM;
      COOPMAT_ACC(ACC_BITS, kFrag, kFrag) acc[kFragsM * kFragsN];
      [[unroll]] for (uint i = 0; i < kFragsM * kFragsN; ++i) {
        acc[i] = COOPMAT_ZERO(ACC_BITS, kFrag, kFrag);
      }
      barrier();  // the previous tile's subgroups are done with the shared buffers
      load_slice(a_base, b_base, m0, n0, 0);
      store_slice(0);
      barrier();
      uint buf = 0;
      for (uint k0 = 0; k0 < dim_k(); k0 += kBK) {
        const bool more = k0 + kBK < dim_k();
        if (more) load_slice(a_base, b_base, m0, n0, k0 + kBK);  // in flight during the math
        const uint a_off = buf * kStageA, b_off = buf * kStageB;
        [[unroll]] for (uint ks = 0; ks < kKSteps; ++ks) {
          COOPMAT_A(kFrag, kFrag) fa[kFragsM];
          [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
            coopmat_load_vec8(fa[i], tile_a, a_off + (wm * kFragsM + i) * kFrag * kRowA + ks * 2, kRowA);
          }
          [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
            COOPMAT_B(kFrag, kFrag) fb;
            coopmat_load_vec8(fb, tile_b, b_off + ks * kFrag * kRowB + (wn * kFragsN + j) * 2, kRowB);
            [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
              acc[i * kFragsN + j] = coopmat_mul_add(fa[i], fb, acc[i * kFragsN + j]);
            }
          }
        }
        if (kStages == 2) {
          // The other buffer was last read before the previous barrier.
          if (more) store_slice(buf ^ 1u);
          barrier();
          buf ^= 1u;
        } else if (more) {
          barrier();  // every subgroup is done with the slice
          store_slice(0);
          barrier();
        }
      }
      // Each fragment through this subgroup's scratch: the epilogue, and only the elements inside Y.
      const uint base = warp * kFrag * kFrag;
      [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
        [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
          coopmat_store(acc[i * kFragsN + j], scratch, base, kFrag);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
          const uint fm = m0 + (wm * kFragsM + i) * kFrag, fn = n0 + (wn * kFragsN + j) * kFrag;
          [[unroll]] for (uint e = lane; e < kFrag * kFrag; e += kLanes) {
            const uint m = fm + e / kFrag, n = fn + e % kFrag;
            if (kWhole != 0u || (m < p.M && n < p.N)) {
              afp result = alpha * scratch[base + e];
              if ((p.flags & kGemmHasC) != 0u) result += beta * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
              y[(batch * p.M + m) * p.N + n] = afp2sfp(vkg_epilogue(result));
            }
          }
          subgroupBarrier();  // the scratch is read before the next fragment overwrites it
        }
      }
    }
  }
}
