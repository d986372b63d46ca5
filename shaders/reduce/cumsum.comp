// vkgraphy-variants: f32 f16acc32
// CumSum: one invocation per row along the summed axis (rows = outer * inner), a running
// sum in fp32 (or int32 for integer data, f32 variant only), inclusive or exclusive,
// forwards or from the end.
// Bindings: 0 = X, 1 = Y (float storage, or int32 with kInt).
// Push constants: rows, len (the axis), inner (the elements after the axis).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kInt               1: int32 data
//   2 kExclusive         1: element t holds the sum of the elements before it
//   3 kReverse           1: sum from the end of the axis
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kInt = 0;
layout(constant_id = 2) const uint kExclusive = 0;
layout(constant_id = 3) const uint kReverse = 0;

layout(push_constant) uniform Params {
  uint rows;
  uint len;
  uint inner;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };

void main() {
  const uint r = vkg_linear_index();
  if (r >= p.rows) return;
  const uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
  float acc = 0.0;
  int iacc = 0;
  for (uint s = 0; s < p.len; ++s) {
    const uint off = base + (kReverse != 0 ? p.len - 1 - s : s) * p.inner;
    if (kInt != 0) {
      const int v = xi[off];
      if (kExclusive == 0) iacc += v;
      yi[off] = iacc;
      if (kExclusive != 0) iacc += v;
    } else {
      const float v = float(x[off]);
      if (kExclusive == 0) acc += v;
      y[off] = afp2sfp(afp(acc));
      if (kExclusive != 0) acc += v;
    }
  }
}
