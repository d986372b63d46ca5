// vkgraphy-variants: f32 f16acc32
// DeformConv (2-D): one invocation per element of Y [N, M, oH, oW]. Each tap (ki, kj) of
// each input channel of the output's group samples X at its regular position moved by the
// tap's (dy, dx) of offset [N, G * kH * kW * 2, oH, oW] (G offset groups of input
// channels), bilinearly with zeros outside X, times mask [N, G * kH * kW, oH, oW] (kMask),
// and the weighted sum starts from the bias (kBias). Coordinates and the sum are fp32.
// Bindings: 0 = X [N, C, H, W], 1 = W [M, C / group, kH, kW], 2 = offset, 3 = B [M]
// (unread without kBias), 4 = mask (unread without kMask), 5 = Y.
// Push constants: total (Y elements), channels (C), height, width, out_channels (M),
// out_h, out_w, kernel_h, kernel_w, group_channels (C / group), group_outputs (M / group),
// offset_channels (C / G), offset_groups (G), stride_h, stride_w, pad_h, pad_w,
// dilation_h, dilation_w.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kBias              1: add B
//   2 kMask              1: multiply each tap by its mask value
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kBias = 0;
layout(constant_id = 2) const uint kMask = 0;

layout(push_constant) uniform Params {
  uint total;
  uint channels;
  uint height;
  uint width;
  uint out_channels;
  uint out_h;
  uint out_w;
  uint kernel_h;
  uint kernel_w;
  uint group_channels;
  uint group_outputs;
  uint offset_channels;
  uint offset_groups;
  uint stride_h;
  uint stride_w;
  uint pad_h;
  uint pad_w;
  uint dilation_h;
  uint dilation_w;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer Weights { sfp weights[]; };
layout(binding = 2) readonly buffer Offset { sfp offsets[]; };
layout(binding = 3) readonly buffer Bias { sfp bias[]; };
layout(binding = 4) readonly buffer Mask { sfp mask[]; };
layout(binding = 5) writeonly buffer Y { sfp y[]; };

// X's plane at (yy, xx), bilinear, zero outside.
float sample_plane(uint plane, float yy, float xx) {
  const float y0 = floor(yy), x0 = floor(xx);
  const float fy = yy - y0, fx = xx - x0;
  float v = 0.0;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      const int yi = int(y0) + dy, xi = int(x0) + dx;
      if (yi < 0 || yi >= int(p.height) || xi < 0 || xi >= int(p.width)) continue;
      const float w = (dy != 0 ? fy : 1.0 - fy) * (dx != 0 ? fx : 1.0 - fx);
      v += w * float(sfp2afp(x[plane + uint(yi) * p.width + uint(xi)]));
    }
  }
  return v;
}

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint j = e % p.out_w;
  const uint i = (e / p.out_w) % p.out_h;
  const uint oc = (e / (p.out_w * p.out_h)) % p.out_channels;
  const uint n = e / (p.out_w * p.out_h * p.out_channels);
  const uint group = oc / p.group_outputs;
  const uint taps = p.kernel_h * p.kernel_w;
  const uint spatial = p.out_h * p.out_w;
  float acc = kBias != 0 ? float(sfp2afp(bias[oc])) : 0.0;
  for (uint c = 0; c < p.group_channels; ++c) {
    const uint ic = group * p.group_channels + c;
    const uint og = ic / p.offset_channels;
    const uint plane = (n * p.channels + ic) * p.height * p.width;
    for (uint ki = 0; ki < p.kernel_h; ++ki) {
      for (uint kj = 0; kj < p.kernel_w; ++kj) {
        const uint tap = (n * p.offset_groups + og) * taps + ki * p.kernel_w + kj;
        const uint at = i * p.out_w + j;
        const float dy = float(sfp2afp(offsets[(2 * tap) * spatial + at]));
        const float dx = float(sfp2afp(offsets[(2 * tap + 1) * spatial + at]));
        const float yy = float(int(i * p.stride_h + ki * p.dilation_h) - int(p.pad_h)) + dy;
        const float xx = float(int(j * p.stride_w + kj * p.dilation_w) - int(p.pad_w)) + dx;
        float v = sample_plane(plane, yy, xx);
        if (kMask != 0) v *= float(sfp2afp(mask[tap * spatial + at]));
        acc += float(sfp2afp(weights[((oc * p.group_channels + c) * p.kernel_h + ki) * p.kernel_w + kj])) * v;
      }
    }
  }
  y[e] = afp2sfp(afp(acc));
}
