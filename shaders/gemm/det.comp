// vkgraphy-variants: f32
// Det: the determinant of each of `count` m x m matrices, one invocation per matrix, by
// Gaussian elimination with partial pivoting on a copy in `work`.
// Bindings: 0 = X (count * m * m), 1 = work (float32 scratch of X's size), 2 = Y (count).
// Push constants: count, m.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint count;
  uint m;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) buffer Work { float a[]; };
layout(binding = 2) writeonly buffer Y { sfp y[]; };

void main() {
  const uint b = vkg_linear_index();
  if (b >= params.count) return;
  const uint m = params.m, base = b * m * m;
  for (uint k = 0; k < m * m; ++k) a[base + k] = float(x[base + k]);
  float d = 1.0;
  for (uint c = 0; c < m && d != 0.0; ++c) {
    uint pivot = c;
    for (uint r = c + 1; r < m; ++r)
      if (abs(a[base + r * m + c]) > abs(a[base + pivot * m + c])) pivot = r;
    const float p = a[base + pivot * m + c];
    if (p == 0.0) {
      d = 0.0;
      break;
    }
    if (pivot != c) {
      for (uint k = 0; k < m; ++k) {
        const float t = a[base + c * m + k];
        a[base + c * m + k] = a[base + pivot * m + k];
        a[base + pivot * m + k] = t;
      }
      d = -d;
    }
    d *= p;
    for (uint r = c + 1; r < m; ++r) {
      const float f = a[base + r * m + c] / p;
      for (uint k = c; k < m; ++k) a[base + r * m + k] -= f * a[base + c * m + k];
    }
  }
  y[b] = sfp(d);
}
