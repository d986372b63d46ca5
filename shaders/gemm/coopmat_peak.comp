// vkgraphy-variants: f16 f16acc32
// vkgraphy-coopmat-khr
// The tensor cores' peak through cooperative matrices, NV or KHR (vkgraphy_tactic_bench --peak): the
// inner loop of gemm/coopmat_vec.comp without the global memory. Each subgroup holds
// kFragsM x kFragsN accumulators of 16 x 16 and runs kIters steps of kFragsM * kFragsN
// 16x16x16 multiply-adds on kFragsM fragments of A and kFragsN of B. kShared 0: the fragments
// are loaded from shared memory once, before the loop (the multiply-adds alone); 1: loaded again
// every step, from one of two slices in turn, with the padded rows and strides of
// gemm/coopmat_vec.comp (what the GEMM's fragment loads cost beside its multiply-adds). The sum
// of a subgroup's accumulators goes to Y. 16 * 16 * 16 * 2 operations per multiply-add.
// Specialization constants: 0 (local_size_x_id) workgroup size, whole subgroups (of the size the
// bench pins with subgroup size control, as the tactics do); 1 kFragsM; 2 kFragsN; 3 kIters;
// 4 kShared.
// Bindings: 0 X (fp16, 2 * 16 * (kFragsM + kFragsN) * 16 values: the two slices), 1 Y (16 x 16
// accumulators per subgroup).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#include "common/coopmat.glsl"
#include "common/precision.glsl"

#if defined(VKG_PRECISION_F16ACC32)
#define ACC_BITS 32
#define acc_t float
#else
#define ACC_BITS 16
#define acc_t float16_t
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kFragsM = 4;
layout(constant_id = 2) const uint kFragsN = 4;
layout(constant_id = 3) const uint kIters = 1024;
layout(constant_id = 4) const uint kShared = 0;

const uint kFrag = 16;
const uint kRow = (kFragsM + kFragsN) * 2 + 1;  // 16-byte vectors per shared row, one of padding
const uint kSlice = kFrag * kRow;

layout(binding = 0) readonly buffer X { uvec4 x8[]; };
layout(binding = 1) writeonly buffer Y { acc_t y[]; };

shared uvec4 tile[2 * kSlice];

void main() {
  const uint vecs = (kFragsM + kFragsN) * 2;  // unpadded vectors per row
  for (uint v = gl_LocalInvocationID.x; v < 2 * kFrag * vecs; v += gl_WorkGroupSize.x) {
    tile[v / vecs * kRow + v % vecs] = x8[v];
  }
  barrier();
  COOPMAT_ACC(ACC_BITS, kFrag, kFrag) acc[kFragsM * kFragsN];
  [[unroll]] for (uint i = 0; i < kFragsM * kFragsN; ++i) {
    acc[i] = COOPMAT_ZERO(ACC_BITS, kFrag, kFrag);
  }
  COOPMAT_A(kFrag, kFrag) fa[kFragsM];
  COOPMAT_B(kFrag, kFrag) fb[kFragsN];
  [[unroll]] for (uint i = 0; i < kFragsM; ++i) coopmat_load(fa[i], tile, i * 2, kRow);
  [[unroll]] for (uint j = 0; j < kFragsN; ++j) coopmat_load(fb[j], tile, (kFragsM + j) * 2, kRow);
  // Never true for the bench's small fp16 values, but the compiler cannot know: the loop may
  // write shared memory, so the loads of a slice cannot be hoisted out of it.
  const bool never = x8[0].x == 0xffffffffu;
  [[dont_unroll]] for (uint it = 0; it < kIters; ++it) {
    if (kShared != 0u) {
      if (never) tile[it % (2 * kSlice)] = uvec4(it);
      const uint slice = (it & 1u) * kSlice;
      [[unroll]] for (uint i = 0; i < kFragsM; ++i) coopmat_load(fa[i], tile, slice + i * 2, kRow);
      [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
        coopmat_load(fb[j], tile, slice + (kFragsM + j) * 2, kRow);
      }
    }
    [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
      [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
        acc[i * kFragsN + j] = coopmat_mul_add(fa[i], fb[j], acc[i * kFragsN + j]);
      }
    }
  }
  [[unroll]] for (uint i = 1; i < kFragsM * kFragsN; ++i) acc[0] += acc[i];
  const uint subgroup = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat_store(acc[0], y, subgroup * kFrag * kFrag, kFrag);
}
