// vkgraphy-variants: f32
// Exact 8-bit convolution in int32 over up to 3 spatial dims (1-D and 2-D given
// as 3-D with size-1 leading dims): ConvInteger, and QLinearConv with
// kRequantize. Operands are int32 values of the 8-bit tensors; the zero points
// are subtracted before multiplying (the padding contributes nothing). Each
// invocation computes 4 output channels of one group at kPixels consecutive
// positions along the last dim.
//
// Bindings (all int32 unless said):
//   0 X     [N][C][ID][IH][IW]
//   1 W     kPackedWeights == 1: [group][blocks][cg][K][4], zero point already
//           subtracted (blocks = ceil(mg / 4), zero past mg);
//           kPackedWeights == 0: raw [M][cg][K]
//   2 XZP   [1] the input zero point
//   3 WZP   [w_zp_count] the weight zero point, one value or one per output
//           channel (unread when kPackedWeights == 1)
//   4 BIAS  [M] added to the accumulator (unread when kHasBias == 0)
//   5 MULT  float [mult_count]: x_scale * w_scale / y_scale, one value or one
//           per output channel (unread unless kRequantize)
//   6 YZP   [1] the output zero point (unread unless kRequantize)
//   7 Y     [N][M][OD][OH][OW]: the int32 sums, or with kRequantize
//           clamp(round_half_even(float(sum) * MULT) + YZP, y_lo, y_hi)
// Push constants (26 words): see Params.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kPixels (1..8);
//   2 kPackedWeights; 3 kHasBias; 4 kRequantize.
// Dispatch N * group * blocks * OD * OH * ceil(OW / kPixels) invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPixels = 4;
layout(constant_id = 2) const uint kPackedWeights = 1;
layout(constant_id = 3) const uint kHasBias = 0;
layout(constant_id = 4) const uint kRequantize = 0;

layout(push_constant) uniform Params {
  uint n, c, m, group;
  uint w_zp_count, mult_count;
  uint id, ih, iw;
  uint od, oh, ow;
  uint kd, kh, kw;
  int sd, sh, sw;
  int dd, dh, dw;
  int pd, ph, pw;
  int y_lo, y_hi;
} p;

layout(binding = 0) readonly buffer X { int x[]; };
layout(binding = 1) readonly buffer W { int w[]; };
layout(binding = 1) readonly buffer W4 { ivec4 w4[]; };
layout(binding = 2) readonly buffer XZP { int x_zp[]; };
layout(binding = 3) readonly buffer WZP { int w_zp[]; };
layout(binding = 4) readonly buffer Bias { int bias[]; };
layout(binding = 5) readonly buffer Mult { float mult[]; };
layout(binding = 6) readonly buffer YZP { int y_zp[]; };
layout(binding = 7) writeonly buffer Y { int y[]; };

void main() {
  const uint cg = p.c / p.group;
  const uint mg = p.m / p.group;
  const uint blocks = (mg + 3) / 4;
  const uint ow_blocks = (p.ow + kPixels - 1) / kPixels;
  const uint kernel = p.kd * p.kh * p.kw;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.group * blocks * p.od * p.oh * ow_blocks) return;
  const uint owb = idx % ow_blocks;
  idx /= ow_blocks;
  const uint oy = idx % p.oh;
  idx /= p.oh;
  const uint oz = idx % p.od;
  idx /= p.od;
  const uint gb = idx % (p.group * blocks);
  const uint n = idx / (p.group * blocks);
  const uint g = gb / blocks;
  const uint mb = gb % blocks;
  const uint ox0 = owb * kPixels;
  const int xz = x_zp[0];

  ivec4 wz = ivec4(0);
  if (kPackedWeights == 0) {
    for (uint j = 0; j < 4; ++j) {
      const uint om = g * mg + min(mb * 4 + j, mg - 1);
      wz[j] = w_zp[p.w_zp_count == 1 ? 0 : om];
    }
  }

  ivec4 acc[8];
  for (uint q = 0; q < kPixels; ++q) acc[q] = ivec4(0);
  for (uint ci = 0; ci < cg; ++ci) {
    const uint xc = (n * p.c + g * cg + ci) * p.id;
    for (uint a = 0; a < p.kd; ++a) {
      const int iz = int(oz) * p.sd + int(a) * p.dd - p.pd;
      if (iz < 0 || iz >= int(p.id)) continue;
      for (uint b = 0; b < p.kh; ++b) {
        const int iy = int(oy) * p.sh + int(b) * p.dh - p.ph;
        if (iy < 0 || iy >= int(p.ih)) continue;
        const uint xrow = ((xc + uint(iz)) * p.ih + uint(iy)) * p.iw;
        for (uint e = 0; e < p.kw; ++e) {
          const uint k = (a * p.kh + b) * p.kw + e;
          ivec4 wv;
          if (kPackedWeights == 1) {
            wv = w4[((g * blocks + mb) * cg + ci) * kernel + k];
          } else {
            for (uint j = 0; j < 4; ++j) {
              const uint m = mb * 4 + j;
              wv[j] = m < mg ? w[((g * mg + m) * cg + ci) * kernel + k] - wz[j] : 0;
            }
          }
          const int ix0 = int(ox0) * p.sw + int(e) * p.dw - p.pw;
          for (uint q = 0; q < kPixels; ++q) {
            const int ix = ix0 + int(q) * p.sw;
            if (ix >= 0 && ix < int(p.iw)) acc[q] += (x[xrow + uint(ix)] - xz) * wv;
          }
        }
      }
    }
  }

  for (uint j = 0; j < 4; ++j) {
    const uint m = mb * 4 + j;
    if (m >= mg) break;
    const uint om = g * mg + m;
    const int bv = kHasBias == 1 ? bias[om] : 0;
    const uint yrow = (((n * p.m + om) * p.od + oz) * p.oh + oy) * p.ow;
    for (uint q = 0; q < kPixels; ++q) {
      if (ox0 + q >= p.ow) break;
      const int sum = acc[q][j] + bv;
      if (kRequantize == 1) {
        precise float v = float(sum) * mult[p.mult_count == 1 ? 0 : om];
        v = roundEven(v) + float(y_zp[0]);
        y[yrow + ox0 + q] = int(clamp(v, float(p.y_lo), float(p.y_hi)));
      } else {
        y[yrow + ox0 + q] = sum;
      }
    }
  }
}
