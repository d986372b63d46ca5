// vkgraphy-variants: f32 f16
// ScatterND, second dispatch: out already holds data. Index tuple t (depth
// coordinates) addresses a slice of `slice` elements; updates[t * slice + s]
// goes to out[sum_j wrap(indices[t * depth + j], dims[j]) * strides[j] + s].
// One invocation per slice element s applies the tuples in order, so duplicate
// tuples resolve exactly as in the reference (last one wins, or reduced in
// tuple order), without atomics. Parallelism is `slice` invocations.
// Bindings: 0 = out (read-write), 1 = indices (int32), 2 = updates,
//   3 = meta (int32): [depth] data sizes of the indexed axes (>= 1), then [depth] their strides.
// Push constants: slice, tuples, depth.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kReduction and
//   2 kKind as in gather/scatter.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint slice;
  uint tuples;
  uint depth;
} params;

layout(binding = 1) readonly buffer Indices { int indices[]; };
layout(binding = 3) readonly buffer Meta { int meta[]; };

#include "gather/scatter.glsl"

void main() {
  const uint s = vkg_linear_index();
  if (s >= params.slice) return;
  for (uint t = 0; t < params.tuples; ++t) {
    uint dst = s;
    for (uint j = 0; j < params.depth; ++j)
      dst += vkg_wrap_index(indices[t * params.depth + j], uint(meta[j])) * uint(meta[params.depth + j]);
    vkg_scatter(dst, t * params.slice + s);
  }
}
