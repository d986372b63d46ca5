// vkgraphy-variants: f32 f16
// out = in over n elements, bit-exact (the first dispatch of the scatters).
// kVecWidth 4: one vec4 per invocation, the n % 4 tail elements by one
// invocation each after the n / 4 vector invocations; dispatch n / 4 + n % 4.
// Bindings: 0 = in, 1 = out. Push constant: n, the element count.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kVecWidth (1 or 4).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) readonly buffer In { melem in_[]; };
layout(binding = 0) readonly buffer In4 { melem4 in4[]; };
layout(binding = 1) writeonly buffer Out { melem out_[]; };
layout(binding = 1) writeonly buffer Out4 { melem4 out4[]; };

void main() {
  const uint i = vkg_linear_index();
  if (kVecWidth == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      out4[i] = in4[i];
      return;
    }
    const uint j = n4 * 4 + (i - n4);
    if (j < params.n) out_[j] = in_[j];
  } else {
    if (i < params.n) out_[i] = in_[i];
  }
}
