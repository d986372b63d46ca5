// vkgraphy-variants: f32
// Exact integer GEMM (int32 storage and arithmetic, wrapping like int32) for
// MatMulInteger, QLinearMatMul and integer MatMul/Gemm, one output element
// per invocation:
//   acc = sum_k (A(b, m, k) - a_zp(m)) * (B(b, k, n) - b_zp(n)) [+ C(m, n)]
//   Y[b, m, n] = acc, or with kIntRequantize:
//   clamp(roundEven(float(acc) * multiplier) + y_zero_point, y_lo, y_hi)
// (the float product and round-half-even of the reference's requantize).
// Addressing of A, B, C and the batch table as in gemm/common.glsl.
// Bindings (set 0): 0 A, 1 B, 2 C (any buffer without kIntHasC), 3 a_zp,
//   4 b_zp (zero points; a buffer holding 0 when absent), 5 Y,
//   6 batch table (any buffer without kIntBatchTable).
// Push constants (20 words, IntParams below): a_zp_sm / b_zp_sn are the zero
//   point strides per row / column (0: one value); multiplier_bits is a float.
// Dispatch: batches * M * N invocations through linear_groups().
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x_id = 0) in;
#include "common/index.glsl"

const uint kIntHasC = 1u;
const uint kIntBatchTable = 2u;
const uint kIntRequantize = 4u;

layout(push_constant) uniform IntParams {
  uint M, N, K, batches;
  uint a_bs, a_sm, a_sk;
  uint b_bs, b_sk, b_sn;
  uint c_sm, c_sn;
  uint flags;
  uint a_zp_sm, b_zp_sn;
  uint multiplier_bits;
  int y_zero_point, y_lo, y_hi;
  uint pad0;
} p;

layout(binding = 0) readonly buffer A { int a[]; };
layout(binding = 1) readonly buffer B { int b[]; };
layout(binding = 2) readonly buffer C { int c[]; };
layout(binding = 3) readonly buffer AZp { int a_zp[]; };
layout(binding = 4) readonly buffer BZp { int b_zp[]; };
layout(binding = 5) writeonly buffer Y { int y[]; };
layout(binding = 6) readonly buffer BatchTable { int batch_table[]; };

void main() {
  const uint idx = vkg_linear_index();
  const uint mn = p.M * p.N;
  if (idx >= p.batches * mn) return;
  const uint batch = idx / mn;
  const uint m = (idx % mn) / p.N;
  const uint n = idx % p.N;

  const bool table = (p.flags & kIntBatchTable) != 0u;
  uint ai = (table ? uint(batch_table[2u * batch]) : batch * p.a_bs) + m * p.a_sm;
  uint bi = (table ? uint(batch_table[2u * batch + 1u]) : batch * p.b_bs) + n * p.b_sn;
  const int za = a_zp[m * p.a_zp_sm];
  const int zb = b_zp[n * p.b_zp_sn];
  int acc = 0;
  for (uint k = 0; k < p.K; ++k) {
    acc += (a[ai] - za) * (b[bi] - zb);
    ai += p.a_sk;
    bi += p.b_sk;
  }
  if ((p.flags & kIntHasC) != 0u) acc += c[m * p.c_sm + n * p.c_sn];
  if ((p.flags & kIntRequantize) != 0u) {
    const float scaled = roundEven(float(acc) * uintBitsToFloat(p.multiplier_bits)) + float(p.y_zero_point);
    acc = int(clamp(scaled, float(p.y_lo), float(p.y_hi)));
  }
  y[idx] = acc;
}
