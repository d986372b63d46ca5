// vkgraphy-variants: f32 f16
// Range with runtime start/delta and a build-time output size n:
// out[i] = start + i * delta, as the reference computes it (float: i converted
// to float, times delta, plus start, each rounded, no fused multiply-add; the
// f16 variant computes in float32 and stores float16).
// Bindings: 0 = start (1 element), 1 = delta (1 element), 2 = out.
// Push constant: n, the output size.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kInteger
//   (1: int32 storage, f32 variant only).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const uint kInteger = 0;

layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) readonly buffer Start { sfp start; };
layout(binding = 1) readonly buffer Delta { sfp delta; };
layout(binding = 2) writeonly buffer Out { sfp out_[]; };
#if defined(VKG_PRECISION_F32)
layout(binding = 0) readonly buffer StartI { int start_i; };
layout(binding = 1) readonly buffer DeltaI { int delta_i; };
layout(binding = 2) writeonly buffer OutI { int out_i[]; };
#endif

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
#if defined(VKG_PRECISION_F32)
  if (kInteger == 1) {
    out_i[i] = start_i + int(i) * delta_i;
    return;
  }
#endif
  precise const float step = float(i) * float(delta);
  precise const float value = float(start) + step;
  out_[i] = sfp(value);
}
