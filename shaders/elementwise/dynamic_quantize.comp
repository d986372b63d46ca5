// vkgraphy-variants: f32
// DynamicQuantizeLinear in two dispatches. MODE_STATS (one workgroup): the scale
// (max(x, 0) - min(x, 0)) / 255 (1 when they are equal) and the zero point
// round_half_even(clamp(-min(x, 0) / scale, 0, 255)). MODE_APPLY (one invocation per
// element): y = clamp(round_half_even(x / scale) + zero_point, 0, 255).
// Bindings: 0 = x (float storage), 1 = y (int32), 2 = the scale (float storage, one
// value), 3 = the zero point (int32, one value).
// Push constant: n, the element count.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size (a power of two, at most 256)
//   1 kMode  MODE_* below
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "elementwise/math.glsl"

#define MODE_STATS 0
#define MODE_APPLY 1

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = MODE_STATS;

layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { int y[]; };
layout(binding = 2) buffer Scale { sfp scale[]; };
layout(binding = 3) buffer Zero { int zero[]; };

shared float lows[256];
shared float highs[256];


void stats() {
  const uint t = gl_LocalInvocationID.x;
  float lo = 0.0, hi = 0.0;
  for (uint e = t; e < params.n; e += vkg_workgroup_size_x) {
    const float v = float(x[e]);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  lows[t] = lo;
  highs[t] = hi;
  barrier();
  for (uint half_size = vkg_workgroup_size_x / 2; half_size > 0; half_size /= 2) {
    if (t < half_size) {
      lows[t] = min(lows[t], lows[t + half_size]);
      highs[t] = max(highs[t], highs[t + half_size]);
    }
    barrier();
  }
  if (t == 0) {
    precise float range = highs[0] == lows[0] ? 1.0 : highs[0] - lows[0];
    const float s = vkg_exact_div(range, 255.0);
    scale[0] = sfp(s);
    zero[0] = int(roundEven(clamp(0.0 - vkg_exact_div(lows[0], s), 0.0, 255.0)));
  }
}

void main() {
  if (kMode == MODE_STATS) {
    stats();
    return;
  }
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  float q = vkg_exact_div(float(x[e]), float(scale[0]));
  if (isnan(q)) q = 0.0;
  y[e] = clamp(int(clamp(roundEven(q), -1.0e9, 1.0e9)) + zero[0], 0, 255);
}
