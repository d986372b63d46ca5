// vkgraphy-variants: f32 f16
// Row copy between two row-major views: for o < n / inner, j < inner,
//   dst[dst_off + o * dst_row + j] = src[src_off + o * src_row + j].
// One dispatch per Concat input (writing its slab of every output row) or per
// Split output (reading its slab of every input row).
// Bindings: 0 = src, 1 = dst.
// Push constants: n (rows times inner), inner, src_row, src_off, dst_row,
// dst_off, all counted in units of kVecWidth elements; inner > 0.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVecWidth          1: elements; 4: vectors of 4 elements (the planner
//                        guarantees every size and offset divides by 4).
//   39 vkg_small_indices  (common/index.glsl)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecWidth = 1;

layout(push_constant) uniform Params {
  uint n;
  uint inner;
  uint src_row;
  uint src_off;
  uint dst_row;
  uint dst_off;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 0) readonly buffer Src4 { elem4_t src4[]; };
layout(binding = 1) writeonly buffer Dst { elem_t dst[]; };
layout(binding = 1) writeonly buffer Dst4 { elem4_t dst4[]; };

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  const uint o = vkg_div(i, params.inner);
  const uint j = i - o * params.inner;
  const uint s = params.src_off + o * params.src_row + j;
  const uint d = params.dst_off + o * params.dst_row + j;
  if (kVecWidth == 4) {
    dst4[d] = src4[s];
  } else {
    dst[d] = src[s];
  }
}
