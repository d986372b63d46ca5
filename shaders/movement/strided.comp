// vkgraphy-variants: f32 f16
// Strided gather into a contiguous output: for every multi-index x of the
// output view `dims` (row-major), dst[flat(x)] = src[offset + dot(x, strides)].
// Serves Transpose, Slice (negative steps: negative strides), Expand (zero
// strides) and Tile (the view [r0, d0, r1, d1, ...] with zero repeat strides).
// Bindings: 0 = src, 1 = dst, 2 = meta (int32: dims[rank], then strides[rank],
// in elements; at least one element even for rank 0).
// Push constants: n, the output element count; rank; offset (int), the source
// element of the multi-index 0.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVecWidth          1: one element per invocation, n invocations;
//                        4: one vector per invocation, n / 4 invocations. The
//                        planner guarantees: last stride 1, last dim, offset and
//                        every other stride divisible by 4.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  int offset;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 0) readonly buffer Src4 { elem4_t src4[]; };
layout(binding = 1) writeonly buffer Dst { elem_t dst[]; };
layout(binding = 1) writeonly buffer Dst4 { elem4_t dst4[]; };
layout(binding = 2) readonly buffer Meta { int meta[]; };

void main() {
  const uint i = vkg_linear_index();
  const uint e = i * kVecWidth;
  if (e >= params.n) return;
  uint rest = e;
  int s = params.offset;
  for (int d = int(params.rank) - 1; d >= 0; --d) {
    const uint dim = uint(meta[d]);
    s += int(rest % dim) * meta[int(params.rank) + d];
    rest /= dim;
  }
  if (kVecWidth == 4) {
    dst4[i] = src4[uint(s) / 4];
  } else {
    dst[e] = src[uint(s)];
  }
}
