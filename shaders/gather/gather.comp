// vkgraphy-variants: f32 f16
// Gather: out[o, k, i] = data[o, wrap(indices[k]), i], with data viewed as
// [outer, dim, inner] and out as [outer, count, inner] (count = number of
// indices). One invocation per output element, or per 4 elements (kVecWidth 4,
// inner % 4 == 0: `inner` and `n` are then given in vec4 units).
// Bindings: 0 = data, 1 = indices (int32), 2 = out.
// Push constants: n (invocations), inner, count, dim (data size along the axis, >= 1).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVecWidth          1 or 4
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params {
  uint n;
  uint inner;
  uint count;
  uint dim;
} params;

layout(binding = 0) readonly buffer Data { melem data[]; };
layout(binding = 0) readonly buffer Data4 { melem4 data4[]; };
layout(binding = 1) readonly buffer Indices { int indices[]; };
layout(binding = 2) writeonly buffer Out { melem out_[]; };
layout(binding = 2) writeonly buffer Out4 { melem4 out4[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint i = e % params.inner;
  const uint row = e / params.inner;
  const uint k = row % params.count;
  const uint o = row / params.count;
  const uint src = (o * params.dim + vkg_wrap_index(indices[k], params.dim)) * params.inner + i;
  if (kVecWidth == 4) {
    out4[e] = data4[src];
  } else {
    out_[e] = data[src];
  }
}
