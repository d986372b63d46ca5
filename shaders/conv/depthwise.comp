// vkgraphy-variants: f32 f16 f16acc32
// Depthwise Conv (group == C, M = C * multiplier) over up to 3 spatial dims
// (1-D and 2-D given as 3-D with size-1 leading dims). Each invocation computes
// one output channel at kPixels consecutive positions along the last dim, its
// accumulators in registers (a fixed-size array, compile-time indices, unrolled).
//
// Bindings: 0 X [N][C][ID][IH][IW]; 1 W [M][K] (the ONNX layout: one input channel
//   per group); 2 B bias [M] (bound but unread when kHasBias == 0); 3 Y [N][M][OD][OH][OW].
// Push constants (21 words): see Params; output channel m reads input channel m / (M / C).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kPixels (1..8); 2 kHasBias.
// Dispatch N * M * OD * OH * ceil(OW / kPixels) invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPixels = 4;
layout(constant_id = 2) const uint kHasBias = 0;

layout(push_constant) uniform Params {
  uint n, c, m;
  uint id, ih, iw;
  uint od, oh, ow;
  uint kd, kh, kw;
  int sd, sh, sw;
  int dd, dh, dw;
  int pd, ph, pw;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 2) readonly buffer B { sfp bias[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

void main() {
  const uint ow_blocks = (p.ow + kPixels - 1) / kPixels;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.m * p.od * p.oh * ow_blocks) return;
  const uint owb = idx % ow_blocks;
  idx /= ow_blocks;
  const uint oy = idx % p.oh;
  idx /= p.oh;
  const uint oz = idx % p.od;
  idx /= p.od;
  const uint om = idx % p.m;
  const uint n = idx / p.m;
  const uint ci = om / (p.m / p.c);
  const uint ox0 = owb * kPixels;
  const uint xc = (n * p.c + ci) * p.id;
  uint wk = om * p.kd * p.kh * p.kw;

  afp acc[kPixels];
  [[unroll]] for (uint q = 0; q < kPixels; ++q) acc[q] = afp(0);
  for (uint a = 0; a < p.kd; ++a) {
    const int iz = int(oz) * p.sd + int(a) * p.dd - p.pd;
    if (iz < 0 || iz >= int(p.id)) {
      wk += p.kh * p.kw;
      continue;
    }
    for (uint b = 0; b < p.kh; ++b) {
      const int iy = int(oy) * p.sh + int(b) * p.dh - p.ph;
      if (iy < 0 || iy >= int(p.ih)) {
        wk += p.kw;
        continue;
      }
      const uint xrow = ((xc + uint(iz)) * p.ih + uint(iy)) * p.iw;
      for (uint e = 0; e < p.kw; ++e, ++wk) {
        const afp wv = sfp2afp(w[wk]);
        const int ix0 = int(ox0) * p.sw + int(e) * p.dw - p.pw;
        [[unroll]] for (uint q = 0; q < kPixels; ++q) {
          const int ix = ix0 + int(q) * p.sw;
          if (ix >= 0 && ix < int(p.iw)) acc[q] += sfp2afp(x[xrow + uint(ix)]) * wv;
        }
      }
    }
  }
  const afp bv = kHasBias == 1 ? sfp2afp(bias[om]) : afp(0);
  const uint yrow = (((n * p.m + om) * p.od + oz) * p.oh + oy) * p.ow;
  [[unroll]] for (uint q = 0; q < kPixels; ++q) {
    if (ox0 + q < p.ow) y[yrow + ox0 + q] = afp2sfp(vkg_epilogue(acc[q] + bv));
  }
}
