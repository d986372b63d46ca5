// vkgraphy-variants: f32 f16
// Fault injection (VKGRAPHY_FAULTY_TACTICS, a testing switch): overwrites a
// layer output with plainly wrong values: x -> 1 - 2x for floats, x -> x + 1
// for integers.
// Binding 0: the tensor. Push constant: n, its element count.
// Specialization constants: 0 workgroup size; 1 kInteger (1: int32 storage).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kInteger = 0;
layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) buffer F { sfp f[]; };
layout(binding = 0) buffer I { int v[]; };

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  if (kInteger == 1) {
    v[i] = v[i] + 1;
  } else {
    f[i] = afp2sfp(afp(1) - afp(2) * sfp2afp(f[i]));
  }
}
