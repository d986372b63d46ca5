// vkgraphy-variants: f32 f16
// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of every matrix of the last
// two axes; other elements are zero. Values move bit-exactly (any storage).
// Bindings: 0 = src, 1 = dst.
// Push constants: n (elements), rows, cols (the last two axes), k (int).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kUpper             1: keep the upper triangle; 0: the lower one
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kUpper = 1;

layout(push_constant) uniform Params {
  uint n;
  uint rows;
  uint cols;
  int k;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 1) writeonly buffer Dst { elem_t dst[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const int j = int(e % params.cols);
  const int i = int((e / params.cols) % params.rows);
  const bool keep = kUpper != 0 ? j - i >= params.k : j - i <= params.k;
  dst[e] = keep ? src[e] : elem_t(0);
}
