// vkgraphy-variants: f32 f16acc32
// The first dispatch of recurrent.steps (runtime/tactics/recurrent.cpp): every step's input
// projection at once, XW[d][t][n][row] = W[d, row, :] . X[t, n, :] + Wb[d, row], in fp32, so
// that each step dispatch (recurrent/step.comp) adds only R h. One invocation per (row, d, t, n).
// Bindings: 0 X, 1 W [dirs, G*H, I], 2 B [dirs, 2*G*H] (a dummy without B), 3 XW (fp32 scratch).
// Specialization constant 0 (local_size_x_id): workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint seq;
  uint batch;
  uint input_size;
  uint rows;         // G * H
  uint directions;
  uint batch_first;  // layout 1: X [batch, seq, I]
  uint has_bias;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 2) readonly buffer B { sfp b[]; };
layout(binding = 3) writeonly buffer XW { float xw[]; };

void main() {
  const uint row = gl_GlobalInvocationID.x;
  if (row >= p.rows) return;
  const uint dtn = gl_WorkGroupID.y;  // (d * seq + t) * batch + n
  const uint n = dtn % p.batch, t = (dtn / p.batch) % p.seq, d = dtn / (p.batch * p.seq);
  const uint xoff = (p.batch_first != 0 ? n * p.seq + t : t * p.batch + n) * p.input_size;
  const uint woff = (d * p.rows + row) * p.input_size;
  float s = p.has_bias != 0 ? float(b[d * 2 * p.rows + row]) : 0.0;
  for (uint i = 0; i < p.input_size; ++i) s += float(w[woff + i]) * float(x[xoff + i]);
  xw[dtn * p.rows + row] = s;
}
