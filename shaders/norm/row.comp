// vkgraphy-variants: f32 f16 f16acc32
// LayerNormalization, InstanceNormalization, MeanVarianceNormalization and
// LpNormalization, one invocation per row (layernorm.row, norm.row): a pass
// for the mean (or the Lp norm), one for the variance around it, one writing.
// Bindings (norm/norm_ops.glsl): 0 = X, 1 = Y (X's shape), 2 = scale, 3 = bias,
// 4 = Mean, 5 = InvStdDev (one per row); unused ones may be any buffer.
// Push constants: the row geometry (reduce/rows.glsl), then epsilon (float),
// scale_period, bias_period, channels: 22 words.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kOp                the normalization (norm/norm_ops.glsl)
//   2 kHasBias           1: bias is bound
//   3 kStats             bit 0: write Mean, bit 1: write InvStdDev (OP_LAYER, OP_INSTANCE)
//   4 kRuns              reduced runs in use (1: element r is at r * red_strides.w)
// Group counts: linear_groups(rows, workgroup size).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kHasBias = 0;
layout(constant_id = 3) const uint kStats = 0;
layout(constant_id = 4) const uint kRuns = 1;

#include "norm/norm_ops.glsl"

// The row's sum of term(x) in blocks (see kSumBlock); `deviation` subtracts
// `center` and squares first.
float row_sum(uint base, bool deviation, afp center) {
  VkgCursor cursor = vkg_cursor(base);
  afp total = afp(0);
  for (uint r0 = 0; r0 < p.reduced; r0 += kSumBlock) {
    afp block = afp(0);
    const uint r1 = vkg_block_end(r0, p.reduced);
    for (uint r = r0; r < r1; ++r) {
      const afp v = sfp2afp(x[vkg_element(kRuns <= 1, base, r, cursor, p.red_dims, p.red_strides)]);
      block += deviation ? (v - center) * (v - center) : first_pass_term(v);
    }
    total += block;
  }
  return float(total);
}

void main() {
  const uint o = vkg_linear_index();
  if (o >= p.rows) return;
  const uint base = vkg_row_offset(o, p.kept_dims, p.kept_strides);
  const float first = row_sum(base, false, afp(0));
  RowNorm rn;
  if (is_lp()) {
    rn = lp_row_norm(first);
  } else {
    const float mean = first / float(p.reduced);
    const float var = kOp == OP_MEAN_ONLY ? 0.0 : row_sum(base, true, afp(mean)) / float(p.reduced);
    rn = mean_row_norm(o, mean, var, true);
  }
  VkgCursor cursor = vkg_cursor(base);
  for (uint r = 0; r < p.reduced; ++r) {
    const uint i = vkg_element(kRuns <= 1, base, r, cursor, p.red_dims, p.red_strides);
    y[i] = afp2sfp(normalize_element(rn, sfp2afp(x[i]), r));
  }
}
