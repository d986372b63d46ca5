// vkgraphy-variants: f32 f16 f16acc32
// The second dispatch of a split-K GEMM (gemm/smem.comp with kSplits > 1):
// Y[b, m, n] = act(alpha * sum_s P[s, b, m, n] + beta * C(m, n)), P the fp32
// partial sums. The push constants are the GEMM's (gemm/common.glsl).
// Bindings: 0 P (fp32), 2 C, 3 Y: the GEMM's slots (1 and 4 are unused).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kSplits;
// the epilogue's.
// Dispatch batches * M * N invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kSplits = 2;

layout(binding = 0) readonly buffer Partial { float partial[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

void main() {
  const uint i = vkg_linear_index();
  const uint total = p.batches * p.M * p.N;
  if (i >= total) return;
  float sum = 0.0;
  for (uint s = 0; s < kSplits; ++s) sum += partial[s * total + i];
  const uint mn = i % (p.M * p.N);
  const uint m = mn / p.N, n = mn % p.N;
  float result = uintBitsToFloat(p.alpha_bits) * sum;
  if ((p.flags & kGemmHasC) != 0u) result += uintBitsToFloat(p.beta_bits) * float(c[m * p.c_sm + n * p.c_sn]);
  y[i] = afp2sfp(vkg_epilogue(afp(result)));
}
