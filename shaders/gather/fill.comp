// vkgraphy-variants: f32 f16
// ConstantOfShape with a build-time output size: every element set to one value.
// Binding 0 = out. Push constants: n (elements), value: its bits in out's
// storage for the f32 variant (float32 or int32), the float32 bits for f16.
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint value;
} params;

layout(binding = 0) writeonly buffer Out { melem out_[]; };

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
#if defined(VKG_PRECISION_F32)
  out_[i] = params.value;
#else
  out_[i] = melem(uintBitsToFloat(params.value));
#endif
}
