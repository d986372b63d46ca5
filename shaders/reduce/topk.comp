// vkgraphy-variants: f32 f16acc32
// TopK: one invocation per row along the axis (rows = outer * inner) selects the K largest
// (or smallest) elements by K passes over the row, each taking the best element not taken
// yet; ties go to the lower index (ONNX's order), NaN ranks above every number. Outputs are
// sorted (best first). Values are compared in fp32 (or int32 for integer data).
// Bindings: 0 = X, 1 = Values (float storage, or int32 with kInt), 2 = Indices (int32).
// Push constants: rows, len (the axis), inner (elements after the axis), k.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kInt               1: int32 data
//   2 kLargest           1: the largest elements; 0: the smallest
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kInt = 0;
layout(constant_id = 2) const uint kLargest = 1;

layout(push_constant) uniform Params {
  uint rows;
  uint len;
  uint inner;
  uint k;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer V { sfp v[]; };
layout(binding = 1) writeonly buffer VI { int vi[]; };
layout(binding = 2) buffer I { int idx[]; };

// Whether element a ranks before element b (values va, vb; a < b when equal).
bool better_f(float va, float vb) {
  if (isnan(va) || isnan(vb)) return isnan(va) && !isnan(vb);
  return kLargest != 0 ? va > vb : va < vb;
}
bool better_i(int va, int vb) { return kLargest != 0 ? va > vb : va < vb; }

void main() {
  const uint r = vkg_linear_index();
  if (r >= p.rows) return;
  const uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
  const uint obase = (r / p.inner) * p.k * p.inner + r % p.inner;
  // The output rank s holds the best element whose (value, index) ranks after rank s - 1's.
  int prev = -1;
  for (uint s = 0; s < p.k; ++s) {
    int best = -1;
    for (uint t = 0; t < p.len; ++t) {
      const uint off = base + t * p.inner;
      // Skip what earlier ranks took: elements ranking before or at `prev`.
      if (prev >= 0) {
        const uint poff = base + uint(prev) * p.inner;
        bool before;
        if (kInt != 0) {
          before = better_i(xi[off], xi[poff]) || (xi[off] == xi[poff] && int(t) <= prev);
        } else {
          const float a = float(x[off]), b = float(x[poff]);
          before = better_f(a, b) || ((a == b || (isnan(a) && isnan(b))) && int(t) <= prev);
        }
        if (before) continue;
      }
      if (best < 0) {
        best = int(t);
        continue;
      }
      const uint boff = base + uint(best) * p.inner;
      if (kInt != 0 ? better_i(xi[off], xi[boff]) : better_f(float(x[off]), float(x[boff]))) best = int(t);
    }
    const uint dst = obase + s * p.inner;
    if (kInt != 0) {
      vi[dst] = xi[base + uint(best) * p.inner];
    } else {
      v[dst] = x[base + uint(best) * p.inner];
    }
    idx[dst] = best;
    prev = best;
  }
}
