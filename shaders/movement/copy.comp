// vkgraphy-variants: f32 f16
// dst = src over n elements: Identity, Dropout (inference), Reshape, Flatten,
// Squeeze, Unsqueeze.
// Bindings: 0 = src, 1 = dst. Push constant: n, the element count.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVecWidth          1: one element per invocation; 4: one vector per
//                        invocation, the n % 4 tail elements by one invocation
//                        each after the n / 4 vector invocations. Dispatch
//                        n / 4 + n % 4 invocations.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params { uint n; } params;

// The vec4 views alias the scalar views of the same bindings.
layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 0) readonly buffer Src4 { elem4_t src4[]; };
layout(binding = 1) writeonly buffer Dst { elem_t dst[]; };
layout(binding = 1) writeonly buffer Dst4 { elem4_t dst4[]; };

void main() {
  const uint i = vkg_linear_index();
  if (kVecWidth == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      dst4[i] = src4[i];
      return;
    }
    const uint j = n4 * 4 + (i - n4);
    if (i - n4 < 4 && j < params.n) dst[j] = src[j];
  } else {
    if (i < params.n) dst[i] = src[i];
  }
}
