// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: X (conv/tile_row.glsl) and W
// Depthwise 2-D Conv (group == C == M) on a tile of kRows output rows x 8
// outputs along a row per invocation, the geometry (kernel, strides, leading
// pads) compile-time: each input row the tile needs is read once, as vec4s
// when rows are vec4-aligned, into registers, and every tap of every output
// row that uses it is taken from there. On lavapipe a storage-buffer load
// costs one loop over the SIMD lanes whatever its width (docs/bench.md), so
// this reads about one vec4 per output where conv/depthwise reads a float per
// tap; on GPUs the row is reused from registers as well.
//
// Bindings: 0 X [N][C][IH][IW]; 1 W [C][KH * KW] (the ONNX layout); 2 B bias [C]
//   (bound but unread when kHasBias == 0); 3 Y [N][C][OH][OW].
// Push constants: planes (N * C), c, ih, iw, oh, ow.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kRows (1..4);
//   2 kHasBias; 3 kKh, 4 kKw (1..7); 5 kStrideH, 6 kStrideW (1 or 2); 7 kPadH,
//   8 kPadW (leading pads); 9 kVecLoad (1: IW % 4 == 0, X read as vec4);
//   10 kVecStore (1: OW % 4 == 0, Y written as vec4; 2: also eight wide, conv/tile_row.glsl). The tactic checks that the
//   row span, (kPadW rounded up to 4) - kPadW + 7 * kStrideW + kKw, is at most 24;
//   40 kF32Bindings (f16 variants: bit b, binding b holds fp32, a fused reformat;
//   common/f32_bindings.glsl).
// Dispatch planes * ceil(OH / kRows) * ceil(OW / 8) invocations (vkg_linear_index).
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
  uint planes, c, ih, iw, oh, ow;
} p;

#include "conv/tile_row.glsl"

VKG_INPUT(w_at, w4_at, 1, w, w4)
layout(binding = 2) readonly buffer B { sfp bias[]; };

const uint kInRows = (kRows - 1) * kStrideH + kKh;

void main() {
  const uint ow_blocks = (p.ow + kPixels - 1) / kPixels;
  const uint oh_blocks = (p.oh + kRows - 1) / kRows;
  uint idx = vkg_linear_index();
  if (idx >= p.planes * oh_blocks * ow_blocks) return;
  const uint owb = idx % ow_blocks;
  idx /= ow_blocks;
  const uint ohb = idx % oh_blocks;
  const uint plane = idx / oh_blocks;  // n * C + channel
  const uint ch = plane % p.c;
  const uint ox0 = owb * kPixels, oy0 = ohb * kRows;
  const int x0 = int(ox0 * kStrideW) - int(kAlignW);  // a multiple of 4
  const int y0 = int(oy0 * kStrideH) - int(kPadH);

  afp wv[49];
  [[unroll]] for (uint i = 0; i < kKh * kKw; ++i) wv[i] = w_at(ch * kKh * kKw + i);
  afp acc[32];  // [row][pixel]
  [[unroll]] for (uint i = 0; i < kRows * kPixels; ++i) acc[i] = afp(0);

  [[unroll]] for (uint ir = 0; ir < kInRows; ++ir) {
    afp span[24];
    load_span(plane * p.ih * p.iw, y0 + int(ir), x0, span);
    // Input row ir is tap row ir - r * kStrideH of output row r (compile-time after unrolling).
    [[unroll]] for (uint r = 0; r < kRows; ++r) {
      if (ir >= r * kStrideH && ir - r * kStrideH < kKh) {
        const uint b = ir - r * kStrideH;
        [[unroll]] for (uint e = 0; e < kKw; ++e) {
          [[unroll]] for (uint q = 0; q < kPixels; ++q) {
            acc[r * kPixels + q] += span[kOffset + q * kStrideW + e] * wv[b * kKw + e];
          }
        }
      }
    }
  }

  const afp bv = kHasBias == 1 ? sfp2afp(bias[ch]) : afp(0);
  [[unroll]] for (uint r = 0; r < kRows; ++r) {
    const uint oy = oy0 + r;
    if (oy >= p.oh) continue;
    const uint yrow = (plane * p.oh + oy) * p.ow;
    if (kVecStore != 0) {
      const uint a = r * kPixels;
      put_tile_row(yrow, ox0, vkg_epilogue4(afp4(acc[a], acc[a + 1], acc[a + 2], acc[a + 3]) + bv),
                   vkg_epilogue4(afp4(acc[a + 4], acc[a + 5], acc[a + 6], acc[a + 7]) + bv));
    } else {
      [[unroll]] for (uint q = 0; q < kPixels; ++q) {
        if (ox0 + q < p.ow) y_put(yrow + ox0 + q, vkg_epilogue(acc[r * kPixels + q] + bv));
      }
    }
  }
}
