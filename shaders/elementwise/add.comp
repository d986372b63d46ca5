// vkgraphy-variants: f32 f16
// C = A + B over n elements of equal shape (no broadcast).
// Bindings: 0 = A, 1 = B, 2 = C. Push constant: n, the element count.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVecWidth          1: one element per invocation; 4: one vec4 per invocation,
//                        the n % 4 tail elements by one invocation each after the
//                        n / 4 vector invocations. Dispatch n / 4 + n % 4 invocations.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params { uint n; } params;

// The vec4 views alias the scalar views of the same bindings.
layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 0) readonly buffer A4 { sfp4 a4[]; };
layout(binding = 1) readonly buffer B { sfp b[]; };
layout(binding = 1) readonly buffer B4 { sfp4 b4[]; };
layout(binding = 2) writeonly buffer C { sfp c[]; };
layout(binding = 2) writeonly buffer C4 { sfp4 c4[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (kVecWidth == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      c4[i] = afp2sfp4(sfp2afp4(a4[i]) + sfp2afp4(b4[i]));
      return;
    }
    const uint j = n4 * 4 + (i - n4);
    if (j < params.n) c[j] = afp2sfp(sfp2afp(a[j]) + sfp2afp(b[j]));
  } else {
    if (i < params.n) c[i] = afp2sfp(sfp2afp(a[i]) + sfp2afp(b[i]));
  }
}
