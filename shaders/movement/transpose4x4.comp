// vkgraphy-variants: f32 f16
// Transpose in 4x4 register blocks. The output's last axis `a` and the axis
// `b` that is contiguous in the source differ; both sizes are divisible by 4.
// Each invocation reads four source vectors (4 consecutive b at a..a+3) and
// writes four output vectors (4 consecutive a at b..b+3).
// Bindings: 0 = src, 1 = dst, 2 = meta (int32: grid dims[rank], source strides
// [rank], output strides[rank], in elements per grid step; the grid is the
// output shape with axes a and b divided by 4).
// Push constants: blocks, the grid's element count; rank; src_row, the source
// stride of axis a; dst_row, the output stride of axis b (both in elements).
// Specialization constant 0 (local_size_x_id): workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint blocks;
  uint rank;
  uint src_row;
  uint dst_row;
} params;

layout(binding = 0) readonly buffer Src4 { elem4_t src4[]; };
layout(binding = 1) writeonly buffer Dst4 { elem4_t dst4[]; };
layout(binding = 2) readonly buffer Meta { int meta[]; };

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.blocks) return;
  const uint rank = params.rank;
  uint rest = i;
  uint s = 0, t = 0;
  for (int d = int(rank) - 1; d >= 0; --d) {
    const uint dim = uint(meta[d]);
    const uint x = rest % dim;
    rest /= dim;
    s += x * uint(meta[rank + d]);
    t += x * uint(meta[2 * rank + d]);
  }
  s /= 4;
  t /= 4;
  const uint sr = params.src_row / 4, dr = params.dst_row / 4;
  const elem4_t r0 = src4[s];
  const elem4_t r1 = src4[s + sr];
  const elem4_t r2 = src4[s + 2 * sr];
  const elem4_t r3 = src4[s + 3 * sr];
  dst4[t] = elem4_t(r0.x, r1.x, r2.x, r3.x);
  dst4[t + dr] = elem4_t(r0.y, r1.y, r2.y, r3.y);
  dst4[t + 2 * dr] = elem4_t(r0.z, r1.z, r2.z, r3.z);
  dst4[t + 3 * dr] = elem4_t(r0.w, r1.w, r2.w, r3.w);
}
