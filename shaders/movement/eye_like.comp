// vkgraphy-variants: f32
// EyeLike: a rows x cols matrix with `one` where col - row == k and zeros elsewhere.
// Bindings: 0 = dst.
// Push constants: n (elements), cols, k (int), one (the bits of 1 in the output's
// storage: 1 for integers and bools, 0x3f800000 for float32).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint cols;
  int k;
  uint one;
} params;

layout(binding = 0) writeonly buffer Dst { elem_t dst[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const int col = int(e % params.cols), row = int(e / params.cols);
  dst[e] = col - row == params.k ? elem_t(params.one) : elem_t(0);
}
