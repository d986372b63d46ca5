// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: A and B (float products only; rec's attention, [8 x 40 x 40] x [8 x 40 x 15], 1.46 -> 0.41 ms on lavapipe)
// GEMM, one output element per invocation, any strides (transposes, broadcast
// batch dims): the interface of gemm/common.glsl.
// Dispatch: batches * M * N invocations through linear_groups().
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"
#include "gemm/common.glsl"

VKG_INPUT(a_at, a4_at, 0, a, a4)
VKG_INPUT(b_at, b4_at, 1, b, b4)
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

void main() {
  const uint idx = vkg_linear_index();
  const uint mn = p.M * p.N;
  if (idx >= p.batches * mn) return;
  const uint batch = idx / mn;
  const uint m = (idx % mn) / p.N;
  const uint n = idx % p.N;

  uint ai = gemm_a_base(batch) + m * p.a_sm;
  uint bi = gemm_b_base(batch) + n * p.b_sn;
  afp acc = afp(0);
  for (uint k = 0; k < p.K; ++k) {
    acc += a_at(ai) * b_at(bi);
    ai += p.a_sk;
    bi += p.b_sk;
  }
  afp result = afp(uintBitsToFloat(p.alpha_bits)) * acc;
  if ((p.flags & kGemmHasC) != 0u) {
    result += afp(uintBitsToFloat(p.beta_bits)) * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
  }
  y[idx] = afp2sfp(vkg_epilogue(result));
}
