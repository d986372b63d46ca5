// vkgraphy-variants: f32 f16
// Concat of up to 8 inputs in one dispatch, one output element per invocation.
// The output is viewed as rows of `row` elements (the axis and everything
// after it); input k owns the columns [ends[k-1], ends[k]) of every row
// (ends[-1] = 0) and is itself rows of ends[k] - ends[k-1] elements.
// Bindings: 0 = dst, 1 + k = input k for k < kParts (slots up to 8 may be
// bound to any buffer; they are never read).
// Push constants: n, the output element count; row > 0; ends[8] (entries from
// kParts on are ignored).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kParts, the
// number of inputs (1..8).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kParts = 1;

layout(push_constant) uniform Params {
  uint n;
  uint row;
  uint ends[8];
} params;

layout(binding = 0) writeonly buffer Dst { elem_t dst[]; };
layout(binding = 1) readonly buffer Src0 { elem_t src0[]; };
layout(binding = 2) readonly buffer Src1 { elem_t src1[]; };
layout(binding = 3) readonly buffer Src2 { elem_t src2[]; };
layout(binding = 4) readonly buffer Src3 { elem_t src3[]; };
layout(binding = 5) readonly buffer Src4 { elem_t src4[]; };
layout(binding = 6) readonly buffer Src5 { elem_t src5[]; };
layout(binding = 7) readonly buffer Src6 { elem_t src6[]; };
layout(binding = 8) readonly buffer Src7 { elem_t src7[]; };

elem_t load(uint k, uint index) {
  switch (k) {
    case 0: return src0[index];
    case 1: return src1[index];
    case 2: return src2[index];
    case 3: return src3[index];
    case 4: return src4[index];
    case 5: return src5[index];
    case 6: return src6[index];
    default: return src7[index];
  }
}

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  const uint o = i / params.row;
  const uint j = i - o * params.row;
  uint k = 0;
  while (k + 1 < kParts && j >= params.ends[k]) ++k;
  const uint start = k == 0 ? 0 : params.ends[k - 1];
  dst[i] = load(k, o * (params.ends[k] - start) + (j - start));
}
