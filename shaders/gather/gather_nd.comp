// vkgraphy-variants: f32 f16
// GatherND: index tuples of `depth` coordinates (the last axis of indices)
// select slices of `slice` elements. Output element e is slice element
// e % slice of tuple k = e / slice, in batch b = k / tuples:
//   out[e] = data[b * batch_size + sum_j wrap(indices[k * depth + j], dims[j]) * strides[j] + e % slice]
// One invocation per output element.
// Bindings: 0 = data, 1 = indices (int32), 2 = out,
//   3 = meta (int32): [depth] data sizes of the indexed axes (>= 1), then [depth] their strides.
// Push constants: n (elements), slice, tuples (tuples per batch), batch_size (data elements per batch), depth.
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint slice;
  uint tuples;
  uint batch_size;
  uint depth;
} params;

layout(binding = 0) readonly buffer Data { melem data[]; };
layout(binding = 1) readonly buffer Indices { int indices[]; };
layout(binding = 2) writeonly buffer Out { melem out_[]; };
layout(binding = 3) readonly buffer Meta { int meta[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint k = e / params.slice;
  uint src = (k / params.tuples) * params.batch_size + e % params.slice;
  for (uint j = 0; j < params.depth; ++j)
    src += vkg_wrap_index(indices[k * params.depth + j], uint(meta[j])) * uint(meta[params.depth + j]);
  out_[e] = data[src];
}
