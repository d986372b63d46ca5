// vkgraphy-variants: f32 f16 f16acc32
// RotaryEmbedding: one invocation per element of X. Element (b, h, s, d) of a head with
// d < rotary_dim belongs to the pair i (d and d + half, or 2i and 2i + 1 when interleaved)
// and becomes cos * x1 - sin * x2 (the pair's first) or sin * x1 + cos * x2 (its second),
// with the cache row of position_ids[b, s] (or of b * seq + s without them); elements past
// rotary_dim are copied.
// Bindings: 0 = X, 1 = cos_cache, 2 = sin_cache, 3 = position_ids (int32; unused without
// them), 4 = Y.
// Push constants: total (elements), heads, seq, head_size, half (rotary_dim / 2),
// cache_row (the caches' last dimension), positions (the caches' rows with position_ids).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kFourD             1: X is [batch, heads, seq, head]; 0: [batch, seq, heads * head]
//   2 kInterleaved       1: pairs (2i, 2i + 1)
//   3 kPositions         1: position_ids pick the cache rows
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kFourD = 1;
layout(constant_id = 2) const uint kInterleaved = 0;
layout(constant_id = 3) const uint kPositions = 0;

layout(push_constant) uniform Params {
  uint total;
  uint heads;
  uint seq;
  uint head_size;
  uint half_dim;
  uint cache_row;
  uint positions;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer C { sfp cos_cache[]; };
layout(binding = 2) readonly buffer S { sfp sin_cache[]; };
layout(binding = 3) readonly buffer P { int pos[]; };
layout(binding = 4) writeonly buffer Y { sfp y[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint d = e % p.head_size;
  if (d >= 2 * p.half_dim) {
    y[e] = x[e];
    return;
  }
  uint rest = e / p.head_size, b, s;
  if (kFourD != 0) {
    s = rest % p.seq;
    b = rest / p.seq / p.heads;
  } else {
    s = (rest / p.heads) % p.seq;
    b = rest / p.heads / p.seq;
  }
  const uint base = e - d;
  uint i, d1, d2;
  if (kInterleaved != 0) {
    i = d / 2;
    d1 = 2 * i;
    d2 = d1 + 1;
  } else {
    i = d % p.half_dim;
    d1 = i;
    d2 = i + p.half_dim;
  }
  uint row = b * p.seq + s;
  if (kPositions != 0) row = uint(clamp(pos[row], 0, int(p.positions) - 1));
  const afp c = sfp2afp(cos_cache[row * p.cache_row + i]);
  const afp sn = sfp2afp(sin_cache[row * p.cache_row + i]);
  const afp x1 = sfp2afp(x[base + d1]), x2 = sfp2afp(x[base + d2]);
  y[e] = afp2sfp(d == d1 ? c * x1 - sn * x2 : sn * x1 + c * x2);
}
