// vkgraphy-variants: f32 f16
// ReverseSequence: along the time axis, the first lens[b] elements of every batch entry b
// reversed and the rest copied. x is [steps, batch, inner] (kTimeFirst) or
// [batch, steps, inner]. Values move bit-exactly.
// Bindings: 0 = src, 1 = lens (int32, one per batch entry), 2 = dst.
// Push constants: n (elements), steps, batch, inner (at least 1).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kTimeFirst         1: time is axis 0 and batch axis 1; 0: the other way round
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kTimeFirst = 1;

layout(push_constant) uniform Params {
  uint n;
  uint steps;
  uint batch;
  uint inner;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 1) readonly buffer Lens { int lens[]; };
layout(binding = 2) writeonly buffer Dst { elem_t dst[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint outer = e / params.inner, i = e % params.inner;
  const uint t = kTimeFirst != 0 ? outer / params.batch : outer % params.steps;
  const uint b = kTimeFirst != 0 ? outer % params.batch : outer / params.steps;
  const int len = clamp(lens[b], 0, int(params.steps));
  const uint st = int(t) < len ? uint(len) - 1u - t : t;
  const uint s = (kTimeFirst != 0 ? st * params.batch + b : b * params.steps + st) * params.inner + i;
  dst[e] = src[s];
}
