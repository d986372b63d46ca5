// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: A and B
// The GEMM of a convolution, per batch n and group g:
//   Y[n][g * mg + m][pos] = bias + sum over k < kdim of A[g][k][m] * B(n, g, k, pos)
// where B is the im2col buffer (conv.im2col_gemm) or the input itself
// (conv.1x1). Register-blocked: each invocation computes kTileM output channels
// x kTileP positions, loading A as vec4 over channels and B as vec4 over
// positions when aligned.
//
// Bindings:
//   0 A  packed weights [group][kdim][mg_pad] (mg_pad: mg rounded up to kTileM, zero-padded)
//   1 B  element (n, g, k, pos) at n * b_batch + g * b_group + k * ldb + pos, pos < P
//   2 bias [group * mg] (bound but unread when kHasBias == 0)
//   3 Y  [N][group * mg][P]
// Push constants: n, group, mg, mg_pad, P, kdim, ldb, b_group, b_batch.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kTileM             output channels per invocation: 4 or 8
//   2 kTileP             positions per invocation: 4 or 8
//   3 kAlignedB          1: ldb, b_group, b_batch are multiples of 4 and B rows
//                        may be read as vec4 up to P rounded up to 4
//   4 kHasBias           1: add bias
//   5 kVecStore          1: P % 4 == 0, Y rows written as vec4
// Dispatch N * group * (mg_pad / kTileM) * ceil(P / kTileP) invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kTileM = 8;
layout(constant_id = 2) const uint kTileP = 8;
layout(constant_id = 3) const uint kAlignedB = 0;
layout(constant_id = 4) const uint kHasBias = 0;
layout(constant_id = 5) const uint kVecStore = 0;

layout(push_constant) uniform Params {
  uint n, group, mg, mg_pad, positions, kdim, ldb, b_group, b_batch;
} p;

VKG_INPUT(a_at, a4_at, 0, a, a4)
VKG_INPUT(b_at, b4_at, 1, b, b4)
layout(binding = 2) readonly buffer Bias { sfp bias[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer Y4 { sfp4 y4[]; };

const uint kM4 = kTileM / 4;
const uint kP4 = kTileP / 4;

void main() {
  const uint m_blocks = p.mg_pad / kTileM;
  const uint p_blocks = (p.positions + kTileP - 1) / kTileP;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.group * m_blocks * p_blocks) return;
  const uint pb = idx % p_blocks;
  idx /= p_blocks;
  const uint mb = idx % m_blocks;
  idx /= m_blocks;
  const uint g = idx % p.group;
  const uint n = idx / p.group;
  const uint m0 = mb * kTileM;
  const uint p0 = pb * kTileP;
  const uint padded = (p.positions + 3) & ~3u;

  afp4 acc[16];
  for (uint i = 0; i < kTileP * kM4; ++i) acc[i] = afp4(0);

  const uint b_base = n * p.b_batch + g * p.b_group;
  uint a_index = (g * p.kdim * p.mg_pad + m0) / 4;
  for (uint k = 0; k < p.kdim; ++k) {
    afp4 av[2];
    for (uint j = 0; j < kM4; ++j) av[j] = a4_at(a_index + j);
    a_index += p.mg_pad / 4;
    const uint row = b_base + k * p.ldb;
    afp4 bv[2];
    for (uint t = 0; t < kP4; ++t) {
      const uint pos = p0 + 4 * t;
      if (kAlignedB == 1) {
        bv[t] = pos < padded ? b4_at((row + pos) / 4) : afp4(0);
      } else {
        for (uint l = 0; l < 4; ++l) bv[t][l] = pos + l < p.positions ? b_at(row + pos + l) : afp(0);
      }
    }
    for (uint t = 0; t < kP4; ++t) {
      for (uint l = 0; l < 4; ++l) {
        for (uint j = 0; j < kM4; ++j) acc[(4 * t + l) * kM4 + j] += av[j] * bv[t][l];
      }
    }
  }

  const uint channels = p.group * p.mg;
  // Unrolled, without early exits: the accumulators keep compile-time indices (registers).
  [[unroll]] for (uint j = 0; j < kM4; ++j) {
    [[unroll]] for (uint l = 0; l < 4; ++l) {
      const uint m = m0 + 4 * j + l;
      if (m >= p.mg) continue;
      const uint om = g * p.mg + m;
      const afp bv = kHasBias == 1 ? sfp2afp(bias[om]) : afp(0);
      const uint yrow = (n * channels + om) * p.positions;
      if (kVecStore == 1) {  // a quarter of the store instructions
        [[unroll]] for (uint t = 0; t < kP4; ++t) {
          const uint q = 4 * t;
          if (p0 + q < p.positions) {
            const afp4 v = afp4(acc[q * kM4 + j][l], acc[(q + 1) * kM4 + j][l], acc[(q + 2) * kM4 + j][l],
                                acc[(q + 3) * kM4 + j][l]);
            y4[(yrow + p0 + q) / 4] = afp2sfp4(vkg_epilogue4(v + bv));
          }
        }
      } else {
        [[unroll]] for (uint q = 0; q < kTileP; ++q) {
          if (p0 + q < p.positions) y[yrow + p0 + q] = afp2sfp(vkg_epilogue(acc[q * kM4 + j][l] + bv));
        }
      }
    }
  }
}
