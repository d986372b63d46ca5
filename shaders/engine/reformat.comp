// vkgraphy-variants: f32 f16
// Converts a tensor between device storage forms (a precision boundary between
// layers), or copies a constant into an engine output.
// Bindings: 0 = source, 1 = destination. Push constant: n, the element count.
// Specialization constants: 0 workgroup size; 1 kFrom, 2 kTo: storage types
// (0 f32, 1 f16, 2 i32; runtime/engine/tactic.h StorageType). The f32 variant
// handles f32 and i32 only; the f16 variant also f16.
#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKG_PRECISION_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kFrom = 0;
layout(constant_id = 2) const uint kTo = 0;
layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) readonly buffer SrcF { float src_f[]; };
layout(binding = 0) readonly buffer SrcI { int src_i[]; };
layout(binding = 1) writeonly buffer DstF { float dst_f[]; };
layout(binding = 1) writeonly buffer DstI { int dst_i[]; };
#if defined(VKG_PRECISION_F16)
layout(binding = 0) readonly buffer SrcH { float16_t src_h[]; };
layout(binding = 1) writeonly buffer DstH { float16_t dst_h[]; };
#endif

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  if (kFrom == 2 && kTo == 2) {
    dst_i[i] = src_i[i];
    return;
  }
  float v = 0.0;
  if (kFrom == 0) v = src_f[i];
  if (kFrom == 2) v = float(src_i[i]);
#if defined(VKG_PRECISION_F16)
  if (kFrom == 1) v = float(src_h[i]);
  if (kTo == 1) dst_h[i] = float16_t(v);
#endif
  if (kTo == 0) dst_f[i] = v;
  if (kTo == 2) dst_i[i] = int(v);
}
