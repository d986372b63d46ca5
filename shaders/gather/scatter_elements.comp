// vkgraphy-variants: f32 f16
// ScatterElements (and Scatter), second dispatch: out already holds data.
// Updates at indices position p go to out[p with its `axis` coordinate
// replaced by wrap(indices[p])]. Two updates can only meet when they differ in
// the axis coordinate alone, so one invocation per line of indices along the
// axis applies that line's updates in order: duplicates resolve exactly as in
// the reference (last one wins, or reduced in index order), without atomics.
// Bindings: 0 = out (read-write), 1 = indices (int32), 2 = updates (shape of indices),
//   3 = meta (int32): [rank] indices shape, then [rank] data strides.
// Push constants: lines (indices elements / indices size along the axis), rank, axis,
//   dim (data size along the axis, >= 1).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kReduction and
//   2 kKind as in gather/scatter.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint lines;
  uint rank;
  uint axis;
  uint dim;
} params;

layout(binding = 1) readonly buffer Indices { int indices[]; };
layout(binding = 3) readonly buffer Meta { int meta[]; };

#include "gather/scatter.glsl"

void main() {
  const uint line = vkg_linear_index();
  if (line >= params.lines) return;
  uint rem = line;
  uint index_offset = 0, out_offset = 0, index_stride = 1, index_axis_stride = 1;
  for (uint d = params.rank; d-- > 0;) {
    const uint size = uint(meta[d]);
    if (d == params.axis) {
      index_axis_stride = index_stride;
    } else {
      const uint c = rem % size;
      rem /= size;
      index_offset += c * index_stride;
      out_offset += c * uint(meta[params.rank + d]);
    }
    index_stride *= size;
  }
  const uint count = uint(meta[params.axis]);
  const uint out_axis_stride = uint(meta[params.rank + params.axis]);
  for (uint k = 0; k < count; ++k) {
    const uint q = index_offset + k * index_axis_stride;
    vkg_scatter(out_offset + vkg_wrap_index(indices[q], params.dim) * out_axis_stride, q);
  }
}
