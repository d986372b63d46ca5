// vkgraphy-variants: f32 f16 f16acc32
// Direct convolution over any number of spatial dims, one output element per
// invocation: Conv, or ConvTranspose in gather form (kTranspose). The general
// fallback of conv.direct and conv.transpose_gather for more than 3 spatial dims.
//
// Bindings:
//   0 X  [N][C][in...]
//   1 W  raw weights, element (g, m, ci, k) at g * mg * cg * K + m * w_stride_m + ci * w_stride_c + k
//        (k: flat kernel offset)
//   2 B  bias [M] (bound but unread when kHasBias == 0)
//   3 G  int geometry: [0] = r (spatial dims), then per dim d at 1 + 6 * d:
//        in, out, kernel, stride, dilation, pad_begin
//   4 Y  [N][M][out...]
// Push constants: n, c, m, group, w_stride_m, w_stride_c, in_size, out_size, kernel_size
//   (sizes: products of the spatial dims).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kHasBias; 2 kTranspose.
// Dispatch N * M * out_size invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kHasBias = 0;
layout(constant_id = 2) const uint kTranspose = 0;

layout(push_constant) uniform Params {
  uint n, c, m, group;
  uint w_stride_m, w_stride_c;
  uint in_size, out_size, kernel_size;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 2) readonly buffer B { sfp bias[]; };
layout(binding = 3) readonly buffer G { int geo[]; };
layout(binding = 4) writeonly buffer Y { sfp y[]; };

void main() {
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.m * p.out_size) return;
  const uint o = idx % p.out_size;
  idx /= p.out_size;
  const uint om = idx % p.m;
  const uint n = idx / p.m;
  const uint cg = p.c / p.group;
  const uint mg = p.m / p.group;
  const uint g = om / mg;
  const uint mi = om % mg;
  const int r = geo[0];

  afp acc = afp(0);
  for (uint k = 0; k < p.kernel_size; ++k) {
    // The flat input position of (o, k), walking the dims from the last.
    uint orest = o, krest = k, stride_in = 1, pos = 0;
    bool inside = true;
    for (int d = r - 1; d >= 0; --d) {
      const int in_d = geo[1 + 6 * d], out_d = geo[2 + 6 * d], k_d = geo[3 + 6 * d];
      const int s_d = geo[4 + 6 * d], dil_d = geo[5 + 6 * d], pad_d = geo[6 + 6 * d];
      const int od = int(orest % uint(out_d));
      const int kd = int(krest % uint(k_d));
      orest /= uint(out_d);
      krest /= uint(k_d);
      int i;
      if (kTranspose == 1) {
        const int t = od + pad_d - kd * dil_d;
        i = (t >= 0 && t % s_d == 0) ? t / s_d : -1;
      } else {
        i = od * s_d + kd * dil_d - pad_d;
      }
      if (i < 0 || i >= in_d) {
        inside = false;
        break;
      }
      pos += uint(i) * stride_in;
      stride_in *= uint(in_d);
    }
    if (!inside) continue;
    const uint wbase = g * mg * cg * p.kernel_size + mi * p.w_stride_m + k;
    const uint xbase = (n * p.c + g * cg) * p.in_size + pos;
    for (uint ci = 0; ci < cg; ++ci) {
      acc += sfp2afp(x[xbase + ci * p.in_size]) * sfp2afp(w[wbase + ci * p.w_stride_c]);
    }
  }
  if (kHasBias == 1) acc += sfp2afp(bias[om]);
  y[(n * p.m + om) * p.out_size + o] = afp2sfp(vkg_epilogue(acc));
}
