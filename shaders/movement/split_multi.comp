// vkgraphy-variants: f32 f16
// Split into up to 8 outputs in one dispatch, one input element per invocation.
// The input is viewed as rows of `row` elements (the axis and everything after
// it); output k takes the columns [ends[k-1], ends[k]) of every row
// (ends[-1] = 0) and is itself rows of ends[k] - ends[k-1] elements.
// Bindings: 0 = src, 1 + k = output k for k < kParts (slots up to 8 may be
// bound to any buffer; they are never written).
// Push constants: n, the input element count; row > 0; ends[8] (entries from
// kParts on are ignored).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kParts, the
// number of outputs (1..8).
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

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 1) writeonly buffer Dst0 { elem_t dst0[]; };
layout(binding = 2) writeonly buffer Dst1 { elem_t dst1[]; };
layout(binding = 3) writeonly buffer Dst2 { elem_t dst2[]; };
layout(binding = 4) writeonly buffer Dst3 { elem_t dst3[]; };
layout(binding = 5) writeonly buffer Dst4 { elem_t dst4[]; };
layout(binding = 6) writeonly buffer Dst5 { elem_t dst5[]; };
layout(binding = 7) writeonly buffer Dst6 { elem_t dst6[]; };
layout(binding = 8) writeonly buffer Dst7 { elem_t dst7[]; };

void store(uint k, uint index, elem_t v) {
  switch (k) {
    case 0: dst0[index] = v; break;
    case 1: dst1[index] = v; break;
    case 2: dst2[index] = v; break;
    case 3: dst3[index] = v; break;
    case 4: dst4[index] = v; break;
    case 5: dst5[index] = v; break;
    case 6: dst6[index] = v; break;
    default: dst7[index] = v; break;
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
  store(k, o * (params.ends[k] - start) + (j - start), src[i]);
}
