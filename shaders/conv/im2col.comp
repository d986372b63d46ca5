// vkgraphy-variants: f32 f16
// vkgraphy-texel-reads: X (rec's 1x3 Conv over 960 channels at 40 positions: 0.93 -> 0.37 ms on lavapipe)
// im2col of a Conv over up to 3 spatial dims (1-D and 2-D given as 3-D with
// size-1 leading dims): col[n][g][ci * K + k][p] = the input of channel
// g * cg + ci that output position p reads at kernel offset k, or 0 in the
// padding. Rows hold P4 = P rounded up to 4 positions (the tail is zero) so
// that the GEMM (conv/gemm.comp) reads them as vec4. Moves bits only.
//
// Bindings: 0 X [N][C][ID][IH][IW]; 1 COL [N][group][cg * K][P4] (P = OD * OH * OW).
// Push constants (21 words): see Params.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kOd, 2 kOh, 3 kOw (the output
// extents) and 4 kKd, 5 kKh, 6 kKw (the kernel's): every divisor of the index arithmetic a
// constant, which lavapipe divides by with vector multiplies (by a push constant, one SIMD lane
// at a time). The push constants' od .. kw carry the same values and are not read.
// Dispatch N * C * K * P4 / 4 invocations (vkg_linear_index), one vec4 each.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOd = 1;
layout(constant_id = 2) const uint kOh = 1;
layout(constant_id = 3) const uint kOw = 1;
layout(constant_id = 4) const uint kKd = 1;
layout(constant_id = 5) const uint kKh = 1;
layout(constant_id = 6) const uint kKw = 1;

layout(push_constant) uniform Params {
  uint n, c, group;
  uint id, ih, iw;
  uint od, oh, ow;
  uint kd, kh, kw;
  int sd, sh, sw;
  int dd, dh, dw;
  int pd, ph, pw;
} p;

VKG_INPUT(x_at, x4_at, 0, x, x4)
layout(binding = 1) writeonly buffer Col4 { sfp4 col4[]; };

void main() {
  const uint ow_oh = kOw * kOh;
  const uint positions = ow_oh * kOd;
  const uint quads = (positions + 3) / 4;
  const uint kernel = kKd * kKh * kKw;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.c * kernel * quads) return;
  const uint out_index = idx;
  const uint quad = idx % quads;
  idx /= quads;
  const uint k = idx % kernel;
  const uint nc = idx / kernel;  // n * C + channel: rows of one group are consecutive channels
  const uint e = k % kKw;
  const uint b = (k / kKw) % kKh;
  const uint a = k / (kKw * kKh);
  const uint xc = nc * p.id * p.ih * p.iw;

  afp4 v = afp4(0);
  for (uint j = 0; j < 4; ++j) {
    const uint pos = quad * 4 + j;
    if (pos >= positions) break;
    const uint ox = pos % kOw;
    const uint oy = (pos / kOw) % kOh;
    const uint oz = pos / ow_oh;
    const int iz = int(oz) * p.sd + int(a) * p.dd - p.pd;
    const int iy = int(oy) * p.sh + int(b) * p.dh - p.ph;
    const int ix = int(ox) * p.sw + int(e) * p.dw - p.pw;
    if (iz >= 0 && iz < int(p.id) && iy >= 0 && iy < int(p.ih) && ix >= 0 && ix < int(p.iw)) {
      v[j] = x_at(xc + (uint(iz) * p.ih + uint(iy)) * p.iw + uint(ix));
    }
  }
  col4[out_index] = afp2sfp4(v);
}
