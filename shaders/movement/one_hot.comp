// vkgraphy-variants: f32
// OneHot: y has a new axis of length depth; y[o, k, i] = values[1] where index[o, i]
// (truncated; negative ones wrapped by depth when kWrap) equals k, values[0] elsewhere.
// Values move bit-exactly.
// Bindings: 0 = indices (int32, or float32 when kFloatIndex), 1 = values (two elements),
// 2 = y.
// Push constants: n (output elements), depth, inner (elements of the index axes after
// the new axis; at least 1).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kFloatIndex  1: the indices are float32
//   2 kWrap        1: negative indices count from the end (opset 11)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kFloatIndex = 0;
layout(constant_id = 2) const uint kWrap = 1;

layout(push_constant) uniform Params {
  uint n;
  uint depth;
  uint inner;
} params;

layout(binding = 0) readonly buffer Indices { int indices[]; };
layout(binding = 0) readonly buffer FloatIndices { float float_indices[]; };
layout(binding = 1) readonly buffer Values { elem_t values[]; };
layout(binding = 2) writeonly buffer Dst { elem_t dst[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint i = e % params.inner;
  const int k = int((e / params.inner) % params.depth);
  const uint src = (e / (params.inner * params.depth)) * params.inner + i;
  int target = -1 - int(params.depth);  // matches no k, even wrapped
  if (kFloatIndex != 0) {
    const float v = float_indices[src];
    if (abs(v) < 2.0e9) target = int(trunc(v));
  } else {
    target = indices[src];
  }
  if (kWrap != 0 && target < 0) target += int(params.depth);
  dst[e] = values[target == k ? 1 : 0];
}
