// vkgraphy-variants: f32 f16 f16acc32
// Softmax, LogSoftmax and Hardmax, one subgroup per row (softmax.subgroup):
// lane i takes elements i, i + subgroup size, ... of the row; the maximum and
// the sum of exp(x - max) are combined with subgroup arithmetic (in fp32), so
// no shared memory or barrier is needed.
// Bindings: 0 = X (input), 1 = Y (output, X's shape).
// Push constants: the row geometry (reduce/rows.glsl), 18 words; rows have one
// reduced run (element r of a row at r * red_strides.w).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kKind              0 Softmax, 1 LogSoftmax, 2 Hardmax (one-hot of the first maximum)
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
layout(constant_id = 1) const uint kKind = 0;
layout(constant_id = 5) const uint kRowsPerGroup = 8;

const uint kSoftmax = 0;
const uint kLogSoftmax = 1;
const uint kHardmax = 2;
const uint kNone = 0xffffffffu;

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

void hardmax_row(uint base, uint stride) {
  const uint lane = gl_SubgroupInvocationID;
  afp best = afp(0);
  uint best_r = kNone;
  for (uint r = lane; r < p.reduced; r += gl_SubgroupSize) {
    const afp v = sfp2afp(x[base + r * stride]);
    if (best_r == kNone || v > best) {
      best = v;
      best_r = r;
    }
  }
  const float m = subgroupMax(best_r == kNone ? -vkg_inf() : float(best));
  const uint first = subgroupMin(best_r != kNone && float(best) == m ? best_r : kNone);
  for (uint r = lane; r < p.reduced; r += gl_SubgroupSize) y[base + r * stride] = sfp(r == first ? 1.0 : 0.0);
}

void softmax_row(uint base, uint stride) {
  const uint lane = gl_SubgroupInvocationID;
  afp local_max = afp(-vkg_inf());
  for (uint r = lane; r < p.reduced; r += gl_SubgroupSize) {
    const afp v = sfp2afp(x[base + r * stride]);
    local_max = v > local_max ? v : local_max;
  }
  const afp m = afp(subgroupMax(float(local_max)));
  const uint count = vkg_lane_count(p.reduced, lane, gl_SubgroupSize);
  afp local_sum = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block += exp(sfp2afp(x[base + (lane + k * gl_SubgroupSize) * stride]) - m);
    local_sum += block;
  }
  const float sum = subgroupAdd(float(local_sum));
  if (kKind == kSoftmax) {
    const afp inv = afp(1.0 / sum);
    for (uint r = lane; r < p.reduced; r += gl_SubgroupSize) {
      const uint i = base + r * stride;
      y[i] = afp2sfp(exp(sfp2afp(x[i]) - m) * inv);
    }
  } else {
    const afp log_sum = afp(log(sum));
    for (uint r = lane; r < p.reduced; r += gl_SubgroupSize) {
      const uint i = base + r * stride;
      y[i] = afp2sfp((sfp2afp(x[i]) - m) - log_sum);
    }
  }
}

void main() {
  const uint first = vkg_workgroup_index() * kRowsPerGroup;
  const uint end = min(first + kRowsPerGroup, p.rows);
  for (uint row = first + gl_SubgroupID; row < end; row += gl_NumSubgroups) {
    const uint base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
    if (kKind == kHardmax) {
      hardmax_row(base, p.red_strides.w);
    } else {
      softmax_row(base, p.red_strides.w);
    }
  }
}
