// vkgraphy-variants: f32 f16 f16acc32
// LayerNormalization, InstanceNormalization, MeanVarianceNormalization and
// LpNormalization, one subgroup per row (layernorm.subgroup, norm.subgroup):
// lane i takes elements i, i + subgroup size, ... of the row; the sums (mean or
// Lp norm, then the squared deviations) are combined with subgroupAdd in fp32.
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
//   5 kRowsPerGroup      rows of one workgroup (workgroup size / device subgroup size);
//                        its subgroups share them whatever their actual size
// Group counts: linear_groups(ceil(rows / kRowsPerGroup) * workgroup size, workgroup size).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common/precision.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kHasBias = 0;
layout(constant_id = 3) const uint kStats = 0;
layout(constant_id = 4) const uint kRuns = 1;
layout(constant_id = 5) const uint kRowsPerGroup = 8;

#include "norm/norm_ops.glsl"

uint element(uint base, uint r) {
  return base + (kRuns <= 1 ? r * p.red_strides.w : vkg_row_offset(r, p.red_dims, p.red_strides));
}

// The row's sum of term(x); `deviation` subtracts `center` and squares first.
float row_sum(uint base, bool deviation, afp center) {
  const uint lane = gl_SubgroupInvocationID;
  const uint count = vkg_lane_count(p.reduced, lane, gl_SubgroupSize);
  afp total = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) {
      const afp v = sfp2afp(x[element(base, lane + k * gl_SubgroupSize)]);
      block += deviation ? (v - center) * (v - center) : first_pass_term(v);
    }
    total += block;
  }
  return subgroupAdd(float(total));
}

void main() {
  const uint first_row = vkg_workgroup_index() * kRowsPerGroup;
  const uint end = min(first_row + kRowsPerGroup, p.rows);
  for (uint row = first_row + gl_SubgroupID; row < end; row += gl_NumSubgroups) {
    const uint base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
    const float first = row_sum(base, false, afp(0));
    RowNorm rn;
    if (is_lp()) {
      rn = lp_row_norm(first);
    } else {
      const float mean = first / float(p.reduced);
      const float var = kOp == OP_MEAN_ONLY ? 0.0 : row_sum(base, true, afp(mean)) / float(p.reduced);
      rn = mean_row_norm(row, mean, var, subgroupElect());
    }
    for (uint r = gl_SubgroupInvocationID; r < p.reduced; r += gl_SubgroupSize) {
      const uint i = element(base, r);
      y[i] = afp2sfp(normalize_element(rn, sfp2afp(x[i]), r));
    }
  }
}
