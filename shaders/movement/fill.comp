// vkgraphy-variants: f32 f16
// dst[i] = one constant for n elements (Dropout's all-true mask).
// Binding 0 = dst. Push constants: n, the element count; bits, the value.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kHalf              0: dst holds 32-bit elements (float32 or int32),
//                        written with `bits`; 1: dst holds float16 elements,
//                        written with the half whose bits are the low 16 of
//                        `bits` (f16 variant only).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kHalf = 0;

layout(push_constant) uniform Params {
  uint n;
  uint bits;
} params;

layout(binding = 0) writeonly buffer Dst32 { uint dst32[]; };
#if defined(VKG_PRECISION_F16)
layout(binding = 0) writeonly buffer Dst16 { float16_t dst16[]; };
#endif

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
#if defined(VKG_PRECISION_F16)
  if (kHalf == 1) {
    dst16[i] = float16_t(unpackHalf2x16(params.bits).x);
    return;
  }
#endif
  dst32[i] = params.bits;
}
