// vkgraphy-variants: f32
// QuantizeLinear and DequantizeLinear over n elements, with one scale and zero point for
// the whole tensor, per index along an axis, or per block along it
// (runtime/core/quantization.h: x seen as [outer, axis_dim, inner]; element (o, a, i)
// uses parameter o * stride_outer + (a / block) * stride_axis + i * stride_inner).
//   quantize:   y = clamp(round_half_even(x / scale) + zero_point, lo, hi)
//   dequantize: y = (x - zero_point) * scale
// Bindings: 0 = x (float storage, or int32 when kXInt), 1 = scale (float storage),
// 2 = zero point (int32; any buffer when kHasZero is 0), 3 = y (int32 when quantizing,
// float storage when dequantizing).
// Push constants: n, axis_dim, inner, block, stride_outer, stride_axis, stride_inner, lo,
// hi (lo and hi: the quantized type's range, as int).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kMode     MODE_* below
//   2 kXInt     1: x holds int32 (an int32 x to quantize, or any x to dequantize)
//   3 kHasZero  1: binding 2 holds the zero points; 0: they are 0
//   4 kRound    ROUND_* below: the float type a dequantized value is rounded to
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "elementwise/math.glsl"

#define MODE_QUANTIZE 0
#define MODE_DEQUANTIZE 1

#define ROUND_NONE 0      // the storage type's own rounding
#define ROUND_FLOAT16 1   // a float16 value in float32 storage
#define ROUND_BFLOAT16 2  // a bfloat16 value in float32 storage

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = MODE_QUANTIZE;
layout(constant_id = 2) const uint kXInt = 0;
layout(constant_id = 3) const uint kHasZero = 0;
layout(constant_id = 4) const uint kRound = ROUND_NONE;

layout(push_constant) uniform Params {
  uint n;
  uint axis_dim;
  uint inner;
  uint block;
  uint stride_outer;
  uint stride_axis;
  uint stride_inner;
  int lo;
  int hi;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) readonly buffer Scale { sfp scale[]; };
layout(binding = 2) readonly buffer Zero { int zero[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer YI { int yi[]; };


float round_float(float v) {
  if (kRound == ROUND_FLOAT16) return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
  if (kRound == ROUND_BFLOAT16) {
    uint bits = floatBitsToUint(v);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return v;
    bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
    return uintBitsToFloat(bits);
  }
  return v;
}

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint i = e % params.inner;
  const uint a = (e / params.inner) % params.axis_dim;
  const uint o = e / (params.inner * params.axis_dim);
  const uint p = o * params.stride_outer + (a / params.block) * params.stride_axis + i * params.stride_inner;
  const int z = kHasZero != 0 ? zero[p] : 0;
  const float s = float(scale[p]);
  if (kMode == MODE_QUANTIZE) {
    const float v = kXInt != 0 ? float(xi[e]) : float(x[e]);
    float q = vkg_exact_div(v, s);
    if (isnan(q)) q = 0.0;
    const int r = int(clamp(roundEven(q), -1.0e9, 1.0e9));
    yi[e] = clamp(r + z, params.lo, params.hi);
  } else {
    y[e] = sfp(round_float(float(xi[e] - z) * s));
  }
}
