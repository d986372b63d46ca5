// vkgraphy-variants: f32 f16acc32
// Attention: one invocation per query row (b, h, i) runs an online softmax over the keys
// j < total of its K/V head (h / kGroup): score s = scale * q.k_j + bias, softcap, then a
// running maximum, a running sum of exp(s - max) and the weighted sum of V rows in fp32
// registers (q and the accumulator are arrays sized by the head sizes). The bias is the
// attention mask (float, added; or bool, -inf where false), broadcast by strides, and -inf
// above the diagonal when causal. A row whose keys are all masked out gives NaN, as the
// reference does. The optional qk output takes the score before the bias (kQkMode 0), with
// it (1), after softcap (2), or the softmax (3, a second pass); kQkMode 4: not written.
// Bindings: 0 = Q, 1 = K, 2 = V (dense [batch, kv_heads, total, head]), 3 = attn_mask
// (float storage, or int32 for bool; unused without a mask), 4 = Y, 5 = qk output
// ([batch, heads, q_seq, total]; unused with kQkMode 4).
// Push constants: rows (batch * heads * q_seq), heads, q_seq, total, kv_heads, q_sb, q_sh,
// q_ss (Q's strides of batch, head and sequence; 3-D or 4-D), y_sb, y_sh, y_ss (Y's),
// m_sb, m_sh, m_sq, m_sk (the mask's strides, 0 where it broadcasts), scale and softcap
// (float bits; softcap 0: none).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kHeadQK            head size of Q and K
//   2 kHeadV             head size of V
//   3 kGroup             query heads per K/V head
//   4 kCausal            1: is_causal
//   5 kMask              0 none, 1 float, 2 bool
//   6 kQkMode            see above
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kHeadQK = 8;
layout(constant_id = 2) const uint kHeadV = 8;
layout(constant_id = 3) const uint kGroup = 1;
layout(constant_id = 4) const uint kCausal = 0;
layout(constant_id = 5) const uint kMask = 0;
layout(constant_id = 6) const uint kQkMode = 4;

layout(push_constant) uniform Params {
  uint rows;
  uint heads;
  uint q_seq;
  uint total;
  uint kv_heads;
  uint q_sb, q_sh, q_ss;
  uint y_sb, y_sh, y_ss;
  uint m_sb, m_sh, m_sq, m_sk;
  uint scale_bits;
  uint softcap_bits;
} p;

layout(binding = 0) readonly buffer Q { sfp q[]; };
layout(binding = 1) readonly buffer K { sfp k[]; };
layout(binding = 2) readonly buffer V { sfp v[]; };
layout(binding = 3) readonly buffer M { sfp mask[]; };
layout(binding = 3) readonly buffer MI { int mask_bool[]; };
layout(binding = 4) writeonly buffer Y { sfp y[]; };
layout(binding = 5) writeonly buffer QK { sfp qk[]; };

#define kInf uintBitsToFloat(0x7f800000u)
#define kNaN uintBitsToFloat(0x7fc00000u)

float qrow[kHeadQK];

// The score of key j after the bias and softcap; `raw` and `biased` before them.
float score(uint b, uint h, uint i, uint kbase, uint j, out float raw, out float biased) {
  float dot = 0.0;
  const uint kj = kbase + j * kHeadQK;
  for (uint d = 0; d < kHeadQK; ++d) dot += qrow[d] * float(k[kj + d]);
  raw = uintBitsToFloat(p.scale_bits) * dot;
  float s = raw;
  if (kMask != 0) {
    const uint m = b * p.m_sb + h * p.m_sh + i * p.m_sq + j * p.m_sk;
    s += kMask == 1 ? float(mask[m]) : (mask_bool[m] != 0 ? 0.0 : -kInf);
  }
  if (kCausal != 0 && j > i) s = -kInf;
  biased = s;
  const float cap = uintBitsToFloat(p.softcap_bits);
  if (cap > 0.0) s = tanh(s / cap) * cap;
  return s;
}

void main() {
  const uint r = vkg_linear_index();
  if (r >= p.rows) return;
  const uint i = r % p.q_seq;
  const uint h = (r / p.q_seq) % p.heads;
  const uint b = r / p.q_seq / p.heads;
  const uint kvh = h / kGroup;
  const uint kbase = (b * p.kv_heads + kvh) * p.total * kHeadQK;
  const uint vbase = (b * p.kv_heads + kvh) * p.total * kHeadV;
  const uint qbase = b * p.q_sb + h * p.q_sh + i * p.q_ss;
  for (uint d = 0; d < kHeadQK; ++d) qrow[d] = float(q[qbase + d]);
  float acc[kHeadV];
  for (uint d = 0; d < kHeadV; ++d) acc[d] = 0.0;
  float run_max = -kInf, run_sum = 0.0;
  for (uint j = 0; j < p.total; ++j) {
    float raw, biased;
    const float s = score(b, h, i, kbase, j, raw, biased);
    if (kQkMode <= 2) qk[r * p.total + j] = afp2sfp(afp(kQkMode == 0 ? raw : (kQkMode == 1 ? biased : s)));
    if (s == -kInf) continue;
    const float new_max = max(run_max, s);
    const float correction = exp(run_max - new_max);
    const float w = exp(s - new_max);
    run_sum = run_sum * correction + w;
    const uint vj = vbase + j * kHeadV;
    for (uint d = 0; d < kHeadV; ++d) acc[d] = acc[d] * correction + w * float(v[vj + d]);
    run_max = new_max;
  }
  const float inv = 1.0 / run_sum;  // NaN below when every key is masked out
  const uint ybase = b * p.y_sb + h * p.y_sh + i * p.y_ss;
  for (uint d = 0; d < kHeadV; ++d) y[ybase + d] = afp2sfp(afp(run_sum > 0.0 ? acc[d] * inv : kNaN));
  if (kQkMode == 3) {
    for (uint j = 0; j < p.total; ++j) {
      float raw, biased;
      const float s = score(b, h, i, kbase, j, raw, biased);
      qk[r * p.total + j] = afp2sfp(afp(run_sum > 0.0 ? exp(s - run_max) * inv : kNaN));
    }
  }
}
