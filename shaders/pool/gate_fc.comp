// vkgraphy-variants: f32 f16acc32
// vkgraphy-texel-reads: V, W and B
// One of the two pointwise Convs of a squeeze-and-excitation gate on its own (global_pool.gate_fc,
// runtime/tactics/pool.cpp): y[image][row] = epilogue(W[row] . v[image] + b[row]), an invocation
// per output, the dot product summed in fp32. The first Conv's activation, scale and shift are
// its dispatch's epilogue constants; the second's are the layer's. Spread over as many invocations
// as there are outputs, where pool/squeeze_gate.comp computes a gate in one workgroup per image,
// reading its vectors from shared memory (lavapipe loads shared memory one invocation at a time).
// Bindings: 0 V [N][K] (the plane means, or the first Conv's outputs); 1 W [rows][K]; 2 B [rows];
//   3 Y [N][rows].
// Push constants: n, k, rows.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kVecK (K % 4 == 0: V and W
//   read as vec4); the epilogue's (20-24, common/epilogue.glsl).
// Dispatch N * rows invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVecK = 0;

layout(push_constant) uniform Params {
  uint n, k, rows;
} p;

VKG_INPUT(v_at, v4_at, 0, v, v4)
VKG_INPUT(w_at, w4_at, 1, w, w4)
VKG_INPUT(b_at, b4_at, 2, b, b4)
layout(binding = 3) writeonly buffer Y { sfp y[]; };

void main() {
  const uint i = vkg_linear_index();
  if (i >= p.n * p.rows) return;
  const uint image = i / p.rows, row = i % p.rows;
  vec4 acc = vec4(0);
  if (kVecK == 1) {
    for (uint q = 0; q < p.k / 4; ++q) acc += vec4(w4_at((row * p.k) / 4 + q)) * vec4(v4_at((image * p.k) / 4 + q));
  } else {
    for (uint q = 0; q < p.k; ++q) acc.x += float(w_at(row * p.k + q)) * float(v_at(image * p.k + q));
  }
  const float s = float(b_at(row)) + (acc.x + acc.y) + (acc.z + acc.w);
  y[i] = afp2sfp(vkg_epilogue(afp(s)));
}
