// vkgraphy-variants: f32 f16 f16acc32
// GPU-class GEMM: shared-memory tiles with 2-D register blocking
// (gemm/smem_tile.glsl), on the interface of gemm/common.glsl with any
// strides (transposes, broadcast batch dims, batch tables). A is staged as
// vec4 runs along k when kVecA is set (a_sk == 1, a_sm, every A batch base and
// K multiples of 4), B as vec4 runs along n when kVecB is set (b_sn == 1, b_sk,
// every B batch base and N multiples of 4).
// With kSplits > 1 (split-K), binding 3 is an fp32 scratch buffer that
// receives the partial sums [kSplits][batches][M][N] unscaled, and
// gemm/splitk_reduce.comp finishes the layer; otherwise the shader applies
// alpha, beta * C and the fused activation and stores Y.
// Specialization constants: those of gemm/smem_tile.glsl, and the epilogue's.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 0) readonly buffer A4 { sfp4 a4[]; };
layout(binding = 1) readonly buffer B { sfp b[]; };
layout(binding = 1) readonly buffer B4 { sfp4 b4[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer Partial { float partial[]; };

uint g_a_base = 0, g_b_base = 0;

void smem_batch(uint batch) {
  g_a_base = gemm_a_base(batch);
  g_b_base = gemm_b_base(batch);
}
afp smem_a1(uint m, uint k) { return sfp2afp(a[g_a_base + m * p.a_sm + k * p.a_sk]); }
afp4 smem_a4(uint m, uint k) { return sfp2afp4(a4[(g_a_base + m * p.a_sm + k) / 4]); }
afp smem_b1(uint k, uint n) { return sfp2afp(b[g_b_base + k * p.b_sk + n * p.b_sn]); }
afp4 smem_b4(uint k, uint n) { return sfp2afp4(b4[(g_b_base + k * p.b_sk + n) / 4]); }

void smem_store(uint batch, uint split, uint m, uint n, afp v);

#include "gemm/smem_tile.glsl"

void smem_store(uint batch, uint split, uint m, uint n, afp v) {
  if (kSplits > 1) {
    partial[((split * p.batches + batch) * p.M + m) * p.N + n] = float(v);
    return;
  }
  afp result = afp(uintBitsToFloat(p.alpha_bits)) * v;
  if ((p.flags & kGemmHasC) != 0u) result += afp(uintBitsToFloat(p.beta_bits)) * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
  y[(batch * p.M + m) * p.N + n] = afp2sfp(vkg_epilogue(result));
}

void main() { smem_gemm(p.M, p.N, p.K, p.batches); }
