// vkgraphy-variants: f32 f16 f16acc32
// Resize (linear) of the last two axes, the leading axes unchanged (planes of
// in_h x in_w in, out_h x out_w out). Tap tables are built at build time
// (runtime/tactics/gather.cpp) as for resize.comp; each output row and column
// has one or two taps, or is outside (tf_crop_and_resize: extrapolation).
// One invocation per output element: at most four loads.
// Bindings: 0 = X, 1 = out,
//   2 = taps (int32): out_h row entries then out_w column entries of 3 ints:
//       tap count (0: outside, 1 or 2), then two input offsets (row taps
//       pre-multiplied by in_w; the second equals the first for one tap),
//   3 = weights (float32): 2 per entry, in the same order.
// Push constants: n (output elements), out_h, out_w, in_plane (in_h * in_w),
//   extrapolation (float32 bits).
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint out_h;
  uint out_w;
  uint in_plane;
  uint extrapolation;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Out { sfp out_[]; };
layout(binding = 2) readonly buffer Taps { int taps[]; };
layout(binding = 3) readonly buffer Weights { float weights[]; };

// Interpolates along one row of the input at `row` (an offset).
afp along_row(uint row, uint wc, uint w0, uint w1, afp ww0, afp ww1) {
  afp r = ww0 * sfp2afp(x[row + w0]);
  if (wc == 2) r += ww1 * sfp2afp(x[row + w1]);
  return r;
}

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint ow = e % params.out_w;
  const uint t = e / params.out_w;
  const uint oh = t % params.out_h;
  const uint plane = t / params.out_h;
  const uint h = oh, w = params.out_h + ow;  // entries
  const uint hc = uint(taps[3 * h]), wc = uint(taps[3 * w]);
  if (hc == 0 || wc == 0) {
    out_[e] = afp2sfp(afp(uintBitsToFloat(params.extrapolation)));
    return;
  }
  const uint base = plane * params.in_plane;
  const uint w0 = uint(taps[3 * w + 1]), w1 = uint(taps[3 * w + 2]);
  const afp ww0 = afp(weights[2 * w]), ww1 = afp(weights[2 * w + 1]);
  afp r = afp(weights[2 * h]) * along_row(base + uint(taps[3 * h + 1]), wc, w0, w1, ww0, ww1);
  if (hc == 2) r += afp(weights[2 * h + 1]) * along_row(base + uint(taps[3 * h + 2]), wc, w0, w1, ww0, ww1);
  out_[e] = afp2sfp(r);
}
