// vkgraphy-variants: f32 f16 f16acc32
// Direct convolution over up to 3 spatial dims (1-D and 2-D layers are given as
// 3-D with size-1 leading dims): Conv, or ConvTranspose in gather form
// (kTranspose). Each invocation computes kOutChannels output channels of one
// group (vec4s of weights) at kPixels positions along the last spatial dim:
// consecutive ones for Conv; for ConvTranspose ones kw-stride apart (a residue
// class of the stride), which share their valid kernel taps and read
// consecutive inputs.
//
// Bindings:
//   0 X  [N][C][ID][IH][IW]
//   1 W  kPackedWeights == 1: [group][blocks][cg][K][kOutChannels] (output
//        channels of a block, zero past mg; blocks = ceil(mg / kOutChannels));
//        kPackedWeights == 0: raw weights, element (g, m, ci, k) at
//        g * mg * cg * K + m * w_stride_m + ci * w_stride_c + k
//   2 B  bias [M] (bound but unread when kHasBias == 0)
//   3 Y  [N][M][OD][OH][OW]
// with cg = C / group input and mg = M / group output channels per group and K = KD * KH * KW.
// Push constants (24 words): see Params. Conv reads input position
//   o * stride + k * dilation - pad; ConvTranspose output o gathers input
//   (o + pad - k * dilation) / stride where that divides exactly.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kPixels            output positions per invocation (1..8)
//   2 kPackedWeights     1: packed vec4 weights, 0: raw weights
//   3 kHasBias           1: add B
//   4 kTranspose         1: ConvTranspose (gather form)
//   5 kOutChannels       output channels per invocation: 4 or 8
// Dispatch N * group * blocks * OD * OH * ow_blocks invocations (vkg_linear_index), where
// ow_blocks = ceil(OW / kPixels) for Conv and SW * ceil(ceil(OW / SW) / kPixels) for ConvTranspose.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPixels = 4;
layout(constant_id = 2) const uint kPackedWeights = 1;
layout(constant_id = 3) const uint kHasBias = 0;
layout(constant_id = 4) const uint kTranspose = 0;
layout(constant_id = 5) const uint kOutChannels = 4;

layout(push_constant) uniform Params {
  uint n, c, m, group;
  uint w_stride_m, w_stride_c;
  uint id, ih, iw;
  uint od, oh, ow;
  uint kd, kh, kw;
  int sd, sh, sw;
  int dd, dh, dw;
  int pd, ph, pw;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 1) readonly buffer W4 { sfp4 w4[]; };
layout(binding = 2) readonly buffer B { sfp bias[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

const uint kVecs = kOutChannels / 4;

// The input index that output position o reads at kernel offset k along one
// dim, or -1 when it falls into the padding (or, transposed, between strides).
int input_pos(uint o, uint k, int stride, int dilation, int pad, uint size) {
  if (kTranspose == 1) {
    const int t = int(o) + pad - int(k) * dilation;
    if (t < 0 || t % stride != 0) return -1;
    const int i = t / stride;
    return i < int(size) ? i : -1;
  }
  const int i = int(o) * stride + int(k) * dilation - pad;
  return (i >= 0 && i < int(size)) ? i : -1;
}

void main() {
  const uint cg = p.c / p.group;
  const uint mg = p.m / p.group;
  const uint blocks = (mg + kOutChannels - 1) / kOutChannels;
  const uint sw = uint(p.sw);
  const uint class_blocks = ((p.ow + sw - 1) / sw + kPixels - 1) / kPixels;  // ConvTranspose
  const uint ow_blocks = kTranspose == 1 ? sw * class_blocks : (p.ow + kPixels - 1) / kPixels;
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
  // Output position q of this invocation along the last dim is ox0 + q * ox_step.
  const uint residue = kTranspose == 1 ? owb / class_blocks : 0;
  const uint j0 = kTranspose == 1 ? (owb % class_blocks) * kPixels : owb * kPixels;
  const uint ox0 = kTranspose == 1 ? residue + j0 * sw : j0;
  const uint ox_step = kTranspose == 1 ? sw : 1;

  afp4 acc[16];  // [q * kVecs + v]
  for (uint i = 0; i < kPixels * kVecs; ++i) acc[i] = afp4(0);

  for (uint ci = 0; ci < cg; ++ci) {
    const uint xc = (n * p.c + g * cg + ci) * p.id;
    for (uint a = 0; a < p.kd; ++a) {
      const int iz = input_pos(oz, a, p.sd, p.dd, p.pd, p.id);
      if (iz < 0) continue;
      for (uint b = 0; b < p.kh; ++b) {
        const int iy = input_pos(oy, b, p.sh, p.dh, p.ph, p.ih);
        if (iy < 0) continue;
        const uint xrow = ((xc + uint(iz)) * p.ih + uint(iy)) * p.iw;
        for (uint e = 0; e < p.kw; ++e) {
          // Input of position q: ix0 + q * ix_step, inside [0, IW) or skipped.
          int ix0, ix_step;
          if (kTranspose == 1) {
            const int t = int(residue) + p.pw - int(e) * p.dw;
            if (vkg_floor_mod(t, p.sw) != 0) continue;
            ix0 = vkg_floor_div(t, p.sw) + int(j0);
            ix_step = 1;
          } else {
            ix0 = int(ox0) * p.sw + int(e) * p.dw - p.pw;
            ix_step = p.sw;
          }
          const uint k = (a * p.kh + b) * p.kw + e;
          afp4 wv[2];
          if (kPackedWeights == 1) {
            const uint wi = (((g * blocks + mb) * cg + ci) * kernel + k) * kVecs;
            for (uint v = 0; v < kVecs; ++v) wv[v] = sfp2afp4(w4[wi + v]);
          } else {
            const uint base = g * mg * cg * kernel + ci * p.w_stride_c + k;
            for (uint v = 0; v < kVecs; ++v) {
              for (uint j = 0; j < 4; ++j) {
                const uint m = mb * kOutChannels + v * 4 + j;
                wv[v][j] = m < mg ? sfp2afp(w[base + m * p.w_stride_m]) : afp(0);
              }
            }
          }
          for (uint q = 0; q < kPixels; ++q) {
            const int ix = ix0 + int(q) * ix_step;
            if (ix < 0 || ix >= int(p.iw)) continue;
            const afp xv = sfp2afp(x[xrow + uint(ix)]);
            for (uint v = 0; v < kVecs; ++v) acc[q * kVecs + v] += xv * wv[v];
          }
        }
      }
    }
  }

  // Unrolled, without early exits: the accumulators keep compile-time indices (registers).
  [[unroll]] for (uint v = 0; v < kVecs; ++v) {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      const uint m = mb * kOutChannels + v * 4 + j;
      if (m >= mg) continue;
      const uint om = g * mg + m;
      const afp bv = kHasBias == 1 ? sfp2afp(bias[om]) : afp(0);
      const uint yrow = (((n * p.m + om) * p.od + oz) * p.oh + oy) * p.ow;
      [[unroll]] for (uint q = 0; q < kPixels; ++q) {
        const uint ox = ox0 + q * ox_step;
        if (ox < p.ow) y[yrow + ox] = afp2sfp(vkg_epilogue(acc[q * kVecs + v][j] + bv));
      }
    }
  }
}
