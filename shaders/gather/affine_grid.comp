// vkgraphy-variants: f32 f16acc32
// AffineGrid: one invocation per grid point of [N, (D,) H, W, kRank] computes theta[n] times
// the homogeneous point (x, y, (z,) 1) of its normalized pixel coordinates (pixel centers,
// or corners with kAlign). Arithmetic is fp32.
// Bindings: 0 = theta [N, kRank, kRank + 1], 1 = grid.
// Push constants: total (grid points, N included), points (per batch), dims[3] (D, H, W;
// D is 1 for 2-D grids).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kRank              2 or 3 spatial axes
//   2 kAlign             1: align_corners
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kRank = 2;
layout(constant_id = 2) const uint kAlign = 0;

layout(push_constant) uniform Params {
  uint total;
  uint points;
  uint dims[3];
} p;

layout(binding = 0) readonly buffer Theta { sfp theta[]; };
layout(binding = 1) writeonly buffer Grid { sfp grid[]; };

float coordinate(uint i, uint n) {
  if (kAlign != 0) return n > 1 ? -1.0 + 2.0 * float(i) / float(n - 1) : -1.0;
  return -1.0 + (2.0 * float(i) + 1.0) / float(n);
}

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint n = e / p.points, q = e % p.points;
  // The homogeneous point, x (the innermost axis) first.
  float point[4] = float[4](coordinate(q % p.dims[2], p.dims[2]), coordinate((q / p.dims[2]) % p.dims[1], p.dims[1]),
                                  kRank == 3 ? coordinate(q / (p.dims[2] * p.dims[1]), p.dims[0]) : 1.0, 1.0);
  for (uint row = 0; row < kRank; ++row) {
    float v = 0.0;
    for (uint col = 0; col <= kRank; ++col) v += float(sfp2afp(theta[(n * kRank + row) * (kRank + 1) + col])) * point[col];
    grid[e * kRank + row] = afp2sfp(afp(v));
  }
}
