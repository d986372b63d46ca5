// vkgraphy-variants: f16 f16acc32
// vkgraphy-coopmat-khr
// vkgraphy-coopmat-emulated
// fp16 GEMM on tensor cores through cooperative matrices (NV or KHR: common/coopmat.glsl), on
// the interface of gemm/common.glsl with any strides: the core of gemm/coopmat_tile.glsl (its
// tiles, needs and specialization constants 0-3) reading A and B through their strides, and its
// store applying alpha, beta * C and the fused activation (the epilogue's constants).
// Dispatch: x = ceil(N / kBN), y = row tiles, z = batches (y and z past their
// counts are looped over).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/coopmat.glsl"
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 1) readonly buffer B { sfp b[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

uint g_a_base = 0, g_b_base = 0;

void coop_batch(uint batch) {
  g_a_base = gemm_a_base(batch);
  g_b_base = gemm_b_base(batch);
}

float16_t coop_a(uint m, uint k) { return float16_t(a[g_a_base + m * p.a_sm + k * p.a_sk]); }

float16_t coop_b(uint k, uint n) { return float16_t(b[g_b_base + k * p.b_sk + n * p.b_sn]); }

void coop_store(uint batch, uint m, uint n, afp sum) {
  afp result = afp(uintBitsToFloat(p.alpha_bits)) * sum;
  if ((p.flags & kGemmHasC) != 0u) result += afp(uintBitsToFloat(p.beta_bits)) * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
  y[(batch * p.M + m) * p.N + n] = afp2sfp(vkg_epilogue(result));
}

#include "gemm/coopmat_tile.glsl"

void main() { coopmat_gemm(p.M, p.N, p.K, p.batches); }
