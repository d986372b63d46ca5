// vkgraphy-variants: f32 f16 f16acc32
// LayerNormalization, InstanceNormalization, MeanVarianceNormalization and
// LpNormalization, one workgroup per row (layernorm.workgroup, norm.workgroup):
// invocation i takes elements i, i + size, ... of the row; the sums (mean or
// Lp norm, then the squared deviations) are combined by trees in shared memory.
// Bindings (norm/norm_ops.glsl): 0 = X, 1 = Y (X's shape), 2 = scale, 3 = bias,
// 4 = Mean, 5 = InvStdDev (one per row); unused ones may be any buffer.
// Push constants: the row geometry (reduce/rows.glsl), then epsilon (float),
// scale_period, bias_period, channels: 22 words.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size, a power of two
//   1 kOp                the normalization (norm/norm_ops.glsl)
//   2 kHasBias           1: bias is bound
//   3 kStats             bit 0: write Mean, bit 1: write InvStdDev (OP_LAYER, OP_INSTANCE)
//   4 kRuns              reduced runs in use (1: element r is at r * red_strides.w)
// Group counts: linear_groups(rows * workgroup size, workgroup size), one group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kWorkgroupSize = 64;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kHasBias = 0;
layout(constant_id = 3) const uint kStats = 0;
layout(constant_id = 4) const uint kRuns = 1;

#include "norm/norm_ops.glsl"

shared float sh_sum[kWorkgroupSize];

uint row_base;

uint element(uint r) {
  return row_base + (kRuns <= 1 ? r * p.red_strides.w : vkg_row_offset(r, p.red_dims, p.red_strides));
}

// barrier() also makes shared memory writes visible (WorkgroupMemory semantics).
void sync() { barrier(); }

// The row's sum of term(x) (every invocation must call it); `deviation`
// subtracts `center` and squares first.
float row_sum(bool deviation, afp center) {
  const uint lid = gl_LocalInvocationID.x;
  const uint count = vkg_lane_count(p.reduced, lid, kWorkgroupSize);
  afp total = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) {
      const afp v = sfp2afp(x[element(lid + k * kWorkgroupSize)]);
      block += deviation ? (v - center) * (v - center) : first_pass_term(v);
    }
    total += block;
  }
  sh_sum[lid] = float(total);
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) sh_sum[lid] += sh_sum[lid + s];
    sync();
  }
  const float result = sh_sum[0];
  sync();
  return result;
}

void main() {
  const uint row = vkg_workgroup_index();
  if (row >= p.rows) return;  // the same for the whole workgroup
  const uint lid = gl_LocalInvocationID.x;
  row_base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
  const float first = row_sum(false, afp(0));
  RowNorm rn;
  if (is_lp()) {
    rn = lp_row_norm(first);
  } else {
    const float mean = first / float(p.reduced);
    const float var = kOp == OP_MEAN_ONLY ? 0.0 : row_sum(true, afp(mean)) / float(p.reduced);
    rn = mean_row_norm(row, mean, var, lid == 0);
  }
  for (uint r = lid; r < p.reduced; r += kWorkgroupSize) {
    const uint i = element(r);
    y[i] = afp2sfp(normalize_element(rn, sfp2afp(x[i]), r));
  }
}
