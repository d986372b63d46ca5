// vkgraphy-variants: f32 f16
// Attention's present key/value cache: one invocation per element (b, h, s, d) of the dense
// [batch, heads, past + seq, head] output copies past[b, h, s, d] for s < past, else this
// step's cur(b, h, s - past, d), which is 4-D or 3-D ([batch, seq, heads * head]) by strides.
// Bindings: 0 = past (unused when past is 0), 1 = cur, 2 = present.
// Push constants: total (elements), heads, seq (past + this step's), past, head,
// cur_sb, cur_sh, cur_ss (cur's strides of batch, head and sequence).
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint total;
  uint heads;
  uint seq;
  uint past;
  uint head;
  uint cur_sb;
  uint cur_sh;
  uint cur_ss;
} p;

layout(binding = 0) readonly buffer Past { sfp past[]; };
layout(binding = 1) readonly buffer Cur { sfp cur[]; };
layout(binding = 2) writeonly buffer Present { sfp present[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint d = e % p.head;
  const uint s = (e / p.head) % p.seq;
  const uint bh = e / p.head / p.seq;
  if (s < p.past) {
    present[e] = past[(bh * p.past + s) * p.head + d];
  } else {
    const uint b = bh / p.heads, h = bh % p.heads;
    present[e] = cur[b * p.cur_sb + h * p.cur_sh + (s - p.past) * p.cur_ss + d];
  }
}
