// vkgraphy-variants: f32 f16
// Compress with a build-time condition: y[o, j, i] = x[o, kept[j], i] for the k kept
// indices of an axis of size dim. Values move bit-exactly.
// Bindings: 0 = src, 1 = kept (int32, k indices), 2 = dst.
// Push constants: n (output elements), k, dim, inner (at least 1).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint k;
  uint dim;
  uint inner;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 1) readonly buffer Kept { int kept[]; };
layout(binding = 2) writeonly buffer Dst { elem_t dst[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint i = e % params.inner, j = (e / params.inner) % params.k, o = e / (params.inner * params.k);
  dst[e] = src[(o * params.dim + uint(kept[j])) * params.inner + i];
}
