// vkgraphy-variants: f32 f16acc32
// vkgraphy-texel-reads: X and the weights
// A squeeze-and-excitation gate in one dispatch (runtime/engine/graph_optimizer.h fuses
// GlobalAveragePool -> 1x1 Conv -> 1x1 Conv, with their folds and activations, into one layer):
//   g = mean of each plane of X, h = act1(W1 g + b1), y = act2(W2 h + b2)
// One workgroup per image: its invocations average the planes (one plane each at a time), then
// compute h, then y, with g and h in shared memory between the steps. Sums in fp32: the variants
// are f32 and f16acc32 (fp16 storage).
// Bindings: 0 X [N][C][plane]; 1 W1 [C1][C]; 2 B1 [C1]; 3 W2 [C2][C1]; 4 B2 [C2]; 5 Y [N][C2].
// Push constants: n, c, plane (elements per plane, >= 1), c1, c2.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kVec4 (plane % 4 == 0: X read
//   as vec4); 2 kHidden, 3 kHiddenAlpha, 4 kHiddenBeta (act1: an Activation kind and its
//   parameters), 5 kHiddenScale, 6 kHiddenShift (after act1: v * scale + shift); 7 kVecK; act2 is
//   the epilogue's (20-24, common/epilogue.glsl).
// Dispatch N workgroups (x, then y past the x limit). The tactic checks C <= kMaxChannels and
// C1 <= kMaxHidden.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/index.glsl"
#include "common/epilogue.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec4 = 0;
layout(constant_id = 2) const uint kHidden = 0;
layout(constant_id = 3) const float kHiddenAlpha = 0.0;
layout(constant_id = 4) const float kHiddenBeta = 0.0;
layout(constant_id = 5) const float kHiddenScale = 1.0;
layout(constant_id = 6) const float kHiddenShift = 0.0;

layout(constant_id = 7) const uint kVecK = 0;  // C % 4 == 0 and C1 % 4 == 0: W1, W2 rows read as vec4

layout(push_constant) uniform Params {
  uint n, c, plane, c1, c2;
} p;

VKG_INPUT(x_at, x4_at, 0, x, x4)
VKG_INPUT(w1_at, w1_4_at, 1, w1, w1_4)
VKG_INPUT(b1_at, b1_4_at, 2, b1, b1_4)
VKG_INPUT(w2_at, w2_4_at, 3, w2, w2_4)
VKG_INPUT(b2_at, b2_4_at, 4, b2, b2_4)
layout(binding = 5) writeonly buffer Y { sfp y[]; };

const uint kMaxChannels = 2048;
const uint kMaxHidden = 1024;
shared vec4 g[kMaxChannels / 4];  // the plane means, four channels per vec4
shared vec4 h[kMaxHidden / 4];

// Row `row` of a [rows][k] matrix times v (k values in vec4s of shared memory).
#define VKG_ROW_DOT(name, at, at4, v)                                                 \
  float name(uint row, uint k) {                                                      \
    vec4 acc = vec4(0);                                                               \
    if (kVecK == 1) {                                                                 \
      for (uint i = 0; i < k / 4; ++i) acc += vec4(at4(row * k / 4 + i)) * v[i];      \
    } else {                                                                          \
      for (uint i = 0; i < k; ++i) acc.x += float(at(row * k + i)) * v[i / 4][i % 4]; \
    }                                                                                 \
    return acc.x + acc.y + acc.z + acc.w;                                             \
  }
VKG_ROW_DOT(hidden_dot, w1_at, w1_4_at, g)
VKG_ROW_DOT(gate_dot, w2_at, w2_4_at, h)

void main() {
  const uint image = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (image >= p.n) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  for (uint c = lid; c < p.c; c += vkg_workgroup_size_x) {
    const uint base = (image * p.c + c) * p.plane;
    afp4 acc = afp4(0);
    if (kVec4 == 1) {
      for (uint i = 0; i < p.plane / 4; ++i) acc += x4_at(base / 4 + i);
    } else {
      for (uint i = 0; i < p.plane; ++i) acc.x += x_at(base + i);
    }
    g[c / 4][c % 4] = float(acc.x + acc.y + acc.z + acc.w) / float(p.plane);
  }
  barrier();
  for (uint j = lid; j < p.c1; j += vkg_workgroup_size_x) {
    const float v = float(b1_at(j)) + hidden_dot(j, p.c);
    const afp a = vkg_activation(kHidden, afp(kHiddenAlpha), afp(kHiddenBeta), afp(v));
    h[j / 4][j % 4] = float(a) * kHiddenScale + kHiddenShift;
  }
  barrier();
  for (uint k = lid; k < p.c2; k += vkg_workgroup_size_x) {
    const float v = float(b2_at(k)) + gate_dot(k, p.c1);
    y[image * p.c2 + k] = afp2sfp(vkg_epilogue(afp(v)));
  }
}
