// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: X (conv/tile_row.glsl) and W
// 2-D Conv on a tile of 8 output channels (of one group) x kRows output rows x 8
// outputs along a row per invocation, the geometry (kernel up to 5x5, strides,
// leading pads) compile-time: for each input channel, each input row the tile
// needs is read once (as vec4s when rows are vec4-aligned) and every tap of every
// output row that uses it is taken from registers, against the taps' weights for
// the 8 channels (two vec4s, packed). For convolutions with few input channels
// (a network's first layer), where the GEMM forms spend their time gathering
// (on lavapipe each load or store instruction costs a loop over the SIMD lanes).
//
// Bindings: 0 X [N][C][IH][IW]; 1 W packed [group][blocks][cg][KH * KW][8] (output
//   channels of a block, zero past mg; blocks = ceil(mg / 8)); 2 B bias [M]
//   (bound but unread when kHasBias == 0); 3 Y [N][M][OH][OW].
// Push constants: n, c, m, group, ih, iw, oh, ow.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kRows (1..2);
//   2 kHasBias; 3 kKh, 4 kKw (1..5); 5 kStrideH, 6 kStrideW (1 or 2); 7 kPadH,
//   8 kPadW (leading pads); 9 kVecLoad (1: IW % 4 == 0); 10 kVecStore (1: OW % 4 == 0;
//   2: also eight wide, conv/tile_row.glsl);
//   40 kF32Bindings (f16 variants: bit b, binding b holds fp32, a fused reformat; common/f32_bindings.glsl).
//   The tactic checks that the row span, (kPadW rounded up to 4) - kPadW + 7 * kStrideW
//   + kKw, is at most 24.
// Dispatch N * group * blocks * ceil(OH / kRows) * ceil(OW / 8) invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/f32_bindings.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kRows = 2;
layout(constant_id = 2) const uint kHasBias = 0;

layout(push_constant) uniform Params {
  uint n, c, m, group, ih, iw, oh, ow;
} p;

#include "conv/tile_row.glsl"

VKG_INPUT(w_at, w4_at, 1, w, w4)
layout(binding = 2) readonly buffer B { sfp bias[]; };

const uint kInRows = (kRows - 1) * kStrideH + kKh;
// Input channels a step: a 1x1 kernel takes four, a kernel of up to 4 taps two, so that each
// accumulator update sums at least four products. lavapipe keeps the accumulators in memory and
// merges every update with the lanes' mask: one update per input channel and tap cost 1x1 Convs
// half their time.
const uint kCiStep = kKh * kKw == 1 ? 4 : kKh * kKw <= 4 ? 2 : 1;

afp4 acc[32];  // [(row * 8 + pixel) * 2 + channel vec4]

// Adds input channels ci .. ci + count - 1 (count: kCiStep or 1, a constant) of image n, group g
// and channel block gb to the accumulators: every product of one accumulator summed first.
void accumulate(uint n, uint g, uint gb, uint cg, uint ci, uint count, int x0, int y0) {
  afp4 wv[kCiStep][50];  // [channel][tap][channel vec4]
  afp span[kCiStep][kInRows][24];  // [channel][input row][column]
  [[unroll]] for (uint c = 0; c < count; ++c) {
    const uint wbase = (gb * cg + ci + c) * kKh * kKw * 2;
    [[unroll]] for (uint i = 0; i < kKh * kKw * 2; ++i) wv[c][i] = w4_at(wbase + i);
    const uint plane = n * p.c + g * cg + ci + c;
    [[unroll]] for (uint ir = 0; ir < kInRows; ++ir) load_span(plane * p.ih * p.iw, y0 + int(ir), x0, span[c][ir]);
  }
  [[unroll]] for (uint r = 0; r < kRows; ++r) {
    [[unroll]] for (uint q = 0; q < kPixels; ++q) {
      afp4 s0 = afp4(0), s1 = afp4(0);
      [[unroll]] for (uint c = 0; c < count; ++c) {
        [[unroll]] for (uint b = 0; b < kKh; ++b) {
          [[unroll]] for (uint e = 0; e < kKw; ++e) {
            const afp xv = span[c][r * kStrideH + b][kOffset + q * kStrideW + e];
            s0 += xv * wv[c][(b * kKw + e) * 2];
            s1 += xv * wv[c][(b * kKw + e) * 2 + 1];
          }
        }
      }
      acc[(r * kPixels + q) * 2] += s0;
      acc[(r * kPixels + q) * 2 + 1] += s1;
    }
  }
}

void main() {
  const uint cg = p.c / p.group, mg = p.m / p.group;
  const uint blocks = (mg + 7) / 8;
  const uint ow_blocks = (p.ow + kPixels - 1) / kPixels;
  const uint oh_blocks = (p.oh + kRows - 1) / kRows;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.group * blocks * oh_blocks * ow_blocks) return;
  const uint owb = idx % ow_blocks;
  idx /= ow_blocks;
  const uint ohb = idx % oh_blocks;
  idx /= oh_blocks;
  const uint gb = idx % (p.group * blocks);  // group * blocks + block
  const uint n = idx / (p.group * blocks);
  const uint g = gb / blocks, mb = gb % blocks;
  const uint ox0 = owb * kPixels, oy0 = ohb * kRows;
  const int x0 = int(ox0 * kStrideW) - int(kAlignW);  // a multiple of 4
  const int y0 = int(oy0 * kStrideH) - int(kPadH);

  [[unroll]] for (uint i = 0; i < kRows * kPixels * 2; ++i) acc[i] = afp4(0);
  uint ci = 0;
  for (; ci + kCiStep <= cg; ci += kCiStep) accumulate(n, g, gb, cg, ci, kCiStep, x0, y0);
  if (kCiStep > 1) {
    for (; ci < cg; ++ci) accumulate(n, g, gb, cg, ci, 1, x0, y0);
  }

  [[unroll]] for (uint v = 0; v < 2; ++v) {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      const uint m = mb * 8 + 4 * v + j;
      if (m >= mg) continue;
      const uint om = g * mg + m;
      const afp bv = kHasBias == 1 ? sfp2afp(bias[om]) : afp(0);
      [[unroll]] for (uint r = 0; r < kRows; ++r) {
        const uint oy = oy0 + r;
        if (oy >= p.oh) continue;
        const uint yrow = ((n * p.m + om) * p.oh + oy) * p.ow;
        if (kVecStore != 0) {
          const uint a = r * kPixels * 2 + v;  // pixel q's accumulator: a + 2 * q
          put_tile_row(yrow, ox0, vkg_epilogue4(afp4(acc[a][j], acc[a + 2][j], acc[a + 4][j], acc[a + 6][j]) + bv),
                       vkg_epilogue4(afp4(acc[a + 8][j], acc[a + 10][j], acc[a + 12][j], acc[a + 14][j]) + bv));
        } else {
          [[unroll]] for (uint q = 0; q < kPixels; ++q) {
            if (ox0 + q < p.ow) y_put(yrow + ox0 + q, vkg_epilogue(acc[(r * kPixels + q) * 2 + v][j] + bv));
          }
        }
      }
    }
  }
}
