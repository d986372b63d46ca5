// vkgraphy-variants: f32 f16
// GatherElements: out has the shape of indices; out[p] = data[p with its
// `axis` coordinate replaced by wrap(indices[p])]. One invocation per element.
// Bindings: 0 = data, 1 = indices (int32), 2 = out,
//   3 = meta (int32): [rank] indices (= out) shape, then [rank] data strides.
// Push constants: n (elements), rank, axis, dim (data size along the axis, >= 1).
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint axis;
  uint dim;
} params;

layout(binding = 0) readonly buffer Data { melem data[]; };
layout(binding = 1) readonly buffer Indices { int indices[]; };
layout(binding = 2) writeonly buffer Out { melem out_[]; };
layout(binding = 3) readonly buffer Meta { int meta[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  uint rem = e;
  uint src = 0;
  for (uint d = params.rank; d-- > 0;) {
    const uint size = uint(meta[d]);
    uint c = rem % size;
    rem /= size;
    if (d == params.axis) c = vkg_wrap_index(indices[e], params.dim);
    src += c * uint(meta[params.rank + d]);
  }
  out_[e] = data[src];
}
