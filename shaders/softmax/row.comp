// vkgraphy-variants: f32 f16 f16acc32
// Softmax, LogSoftmax and Hardmax, one invocation per row (softmax.row):
// a pass for the maximum, one for the sum of exp(x - max), one writing.
// Bindings: 0 = X (input), 1 = Y (output, X's shape).
// Push constants: the row geometry (reduce/rows.glsl), 18 words; rows have one
// reduced run (element r of a row at r * red_strides.w).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kKind              0 Softmax, 1 LogSoftmax, 2 Hardmax (one-hot of the first maximum)
// Group counts: linear_groups(rows, workgroup size).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kKind = 0;

const uint kSoftmax = 0;
const uint kLogSoftmax = 1;
const uint kHardmax = 2;

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

void main() {
  const uint o = vkg_linear_index();
  if (o >= p.rows || p.reduced == 0) return;
  const uint base = vkg_row_offset(o, p.kept_dims, p.kept_strides);
  const uint stride = p.red_strides.w;
  const uint n = p.reduced;

  if (kKind == kHardmax) {
    afp best = sfp2afp(x[base]);
    uint best_r = 0;
    for (uint r = 1; r < n; ++r) {
      const afp v = sfp2afp(x[base + r * stride]);
      if (v > best) {
        best = v;
        best_r = r;
      }
    }
    for (uint r = 0; r < n; ++r) y[base + r * stride] = sfp(r == best_r ? 1.0 : 0.0);
    return;
  }

  afp m = afp(-vkg_inf());
  for (uint r = 0; r < n; ++r) {
    const afp v = sfp2afp(x[base + r * stride]);
    m = v > m ? v : m;
  }
  afp total = afp(0);
  for (uint r0 = 0; r0 < n; r0 += kSumBlock) {
    afp block = afp(0);
    const uint r1 = vkg_block_end(r0, n);
    for (uint r = r0; r < r1; ++r) block += exp(sfp2afp(x[base + r * stride]) - m);
    total += block;
  }
  const float sum = float(total);
  if (kKind == kSoftmax) {
    const afp inv = afp(1.0 / sum);
    for (uint r = 0; r < n; ++r) {
      const uint i = base + r * stride;
      y[i] = afp2sfp(exp(sfp2afp(x[i]) - m) * inv);
    }
  } else {
    const afp log_sum = afp(log(sum));
    for (uint r = 0; r < n; ++r) {
      const uint i = base + r * stride;
      y[i] = afp2sfp((sfp2afp(x[i]) - m) - log_sum);
    }
  }
}
