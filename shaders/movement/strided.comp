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
//   2 kRank              0: dims and strides from meta; 1..8: the rank, and dims and
//                        strides are the constants 10..17 and 20..27 (the meta binding
//                        unread): the index arithmetic divides by constants, which
//                        lavapipe does with vector multiplies (by a loaded value, one SIMD
//                        lane at a time; PP-OCRv4 rec's [1, 40, 360] -> [3, 1, 8, 40, 15],
//                        0.52 -> 0.18 ms).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecWidth = 1;
layout(constant_id = 2) const uint kRank = 0;
layout(constant_id = 10) const uint kDim0 = 1;
layout(constant_id = 11) const uint kDim1 = 1;
layout(constant_id = 12) const uint kDim2 = 1;
layout(constant_id = 13) const uint kDim3 = 1;
layout(constant_id = 14) const uint kDim4 = 1;
layout(constant_id = 15) const uint kDim5 = 1;
layout(constant_id = 16) const uint kDim6 = 1;
layout(constant_id = 17) const uint kDim7 = 1;
layout(constant_id = 20) const int kStride0 = 0;
layout(constant_id = 21) const int kStride1 = 0;
layout(constant_id = 22) const int kStride2 = 0;
layout(constant_id = 23) const int kStride3 = 0;
layout(constant_id = 24) const int kStride4 = 0;
layout(constant_id = 25) const int kStride5 = 0;
layout(constant_id = 26) const int kStride6 = 0;
layout(constant_id = 27) const int kStride7 = 0;
const uint kMaxConstRank = 8;

// Dim and stride d of the constant geometry (d a constant once the loop below is unrolled).
uint const_dim(uint d) {
  return d == 0   ? kDim0
         : d == 1 ? kDim1
         : d == 2 ? kDim2
         : d == 3 ? kDim3
         : d == 4 ? kDim4
         : d == 5 ? kDim5
         : d == 6 ? kDim6
                  : kDim7;
}
int const_stride(uint d) {
  return d == 0   ? kStride0
         : d == 1 ? kStride1
         : d == 2 ? kStride2
         : d == 3 ? kStride3
         : d == 4 ? kStride4
         : d == 5 ? kStride5
         : d == 6 ? kStride6
                  : kStride7;
}

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
  if (kRank > 0) {
    [[unroll]] for (uint k = 0; k < kMaxConstRank; ++k) {
      if (k < kRank) {
        const uint d = kRank - 1 - k;
        s += int(rest % const_dim(d)) * const_stride(d);
        rest /= const_dim(d);
      }
    }
  } else {
    for (int d = int(params.rank) - 1; d >= 0; --d) {
      const uint dim = uint(meta[d]);
      s += int(rest % dim) * meta[int(params.rank) + d];
      rest /= dim;
    }
  }
  if (kVecWidth == 4) {
    dst4[i] = src4[uint(s) / 4];
  } else {
    dst[e] = src[uint(s)];
  }
}
