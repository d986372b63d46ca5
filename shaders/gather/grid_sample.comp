// vkgraphy-variants: f32 f16 f16acc32
// GridSample: one invocation per element of Y [N, C, O...] reads its grid point, turns each
// of the kRank normalized coordinates into taps along its axis (1 nearest, 2 linear, 4
// cubic; out-of-range coordinates clamped or reflected first, taps outside X read zero, the
// border or the reflection: runtime/reference/ops/grid_sample.cpp states the rules), and
// sums the tensor product of the taps. Coordinates and weights are fp32; the sum is afp.
// Bindings: 0 = X, 1 = grid, 2 = Y.
// Push constants: total (Y elements), channels, out_size (grid points per batch), plane (X
// elements per channel), dims[3] (X's spatial sizes, axis 0 first), strides[3] (their strides).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kRank              spatial axes, 1 to 3
//   2 kMode              0 nearest, 1 linear, 2 cubic
//   3 kPadding           0 zeros, 1 border, 2 reflection
//   4 kAlign             1: align_corners
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kRank = 2;
layout(constant_id = 2) const uint kMode = 1;
layout(constant_id = 3) const uint kPadding = 0;
layout(constant_id = 4) const uint kAlign = 0;

const uint kTaps = kMode == 0 ? 1 : (kMode == 1 ? 2 : 4);

layout(push_constant) uniform Params {
  uint total;
  uint channels;
  uint out_size;
  uint plane;
  uint dims[3];
  uint strides[3];
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer G { sfp grid[]; };
layout(binding = 2) writeonly buffer Y { sfp y[]; };

// Reflects v into [lo, hi] by the nearer border, as often as needed.
float reflect_coord(float v, float lo, float hi) {
  const float range = hi - lo;
  if (range <= 0.0) return lo;
  if (v < lo) {
    const float dx = lo - v;
    const int n = int(dx / range);
    const float r = dx - float(n) * range;
    return (n & 1) == 0 ? lo + r : hi - r;
  }
  if (v > hi) {
    const float dx = v - hi;
    const int n = int(dx / range);
    const float r = dx - float(n) * range;
    return (n & 1) == 0 ? hi - r : lo + r;
  }
  return v;
}

// Keys' cubic kernel with a = -0.75 at distance t.
float cubic(float t) {
  const float a = -0.75;
  t = abs(t);
  if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
  return 0.0;
}

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint o = e % p.out_size;
  const uint nc = e / p.out_size;
  const uint n = nc / p.channels;
  int idx[3][4];
  float w[3][4];
  for (uint a = 0; a < kRank; ++a) {
    const uint dim = p.dims[a];
    const float g = float(grid[(n * p.out_size + o) * kRank + (kRank - 1 - a)]);
    const float lo = kAlign != 0 ? 0.0 : -0.5;
    const float hi = kAlign != 0 ? float(dim) - 1.0 : float(dim) - 0.5;
    float c = kAlign != 0 ? (g + 1.0) * 0.5 * float(dim - 1) : ((g + 1.0) * float(dim) - 1.0) * 0.5;
    if (kMode == 0) c = roundEven(c);
    if (c < lo || c > hi) {
      if (kPadding == 1) c = clamp(c, 0.0, float(dim) - 1.0);
      if (kPadding == 2) c = reflect_coord(c, lo, hi);
    }
    const float c0 = floor(c), t = c - c0;
    for (uint k = 0; k < kTaps; ++k) {
      int i;
      float wk;
      if (kMode == 0) {
        i = int(c);
        wk = 1.0;
      } else if (kMode == 1) {
        i = int(c0) + int(k);
        wk = k == 0 ? 1.0 - t : t;
      } else {
        i = int(c0) + int(k) - 1;
        wk = cubic(t - (float(k) - 1.0));
      }
      if (kPadding == 0 && (i < 0 || i >= int(dim))) i = -1;
      if (kPadding == 1) i = clamp(i, 0, int(dim) - 1);
      if (kPadding == 2) i = int(reflect_coord(float(i), lo, hi));
      idx[a][k] = i;
      w[a][k] = wk;
    }
  }
  uint combos = 1;
  for (uint a = 0; a < kRank; ++a) combos *= kTaps;
  const uint base = nc * p.plane;
  afp acc = afp(0);
  for (uint s = 0; s < combos; ++s) {
    uint rest = s;
    int off = 0;
    float weight = 1.0;
    bool inside = true;
    for (uint a = 0; a < kRank; ++a) {
      const uint k = rest % kTaps;
      rest /= kTaps;
      inside = inside && idx[a][k] >= 0;
      off += idx[a][k] * int(p.strides[a]);
      weight *= w[a][k];
    }
    if (inside) acc += afp(weight) * sfp2afp(x[base + uint(off)]);
  }
  y[e] = afp2sfp(acc);
}
