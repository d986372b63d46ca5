// vkgraphy-variants: f32 f16 f16acc32
// Softmax, LogSoftmax and Hardmax, one workgroup per row (softmax.workgroup):
// invocation i takes elements i, i + size, ... of the row; the maximum and the
// sum of exp(x - max) are combined by trees in shared memory.
// Bindings: 0 = X (input), 1 = Y (output, X's shape).
// Push constants: the row geometry (reduce/rows.glsl), 18 words; rows have one
// reduced run (element r of a row at r * red_strides.w).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size, a power of two
//   1 kKind              0 Softmax, 1 LogSoftmax, 2 Hardmax (one-hot of the first maximum)
// Group counts: linear_groups(rows * workgroup size, workgroup size), one group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kWorkgroupSize = 64;
layout(constant_id = 1) const uint kKind = 0;

const uint kSoftmax = 0;
const uint kLogSoftmax = 1;
const uint kHardmax = 2;
const uint kNone = 0xffffffffu;

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

shared float sh_f[kWorkgroupSize];
shared uint sh_index[kWorkgroupSize];

#include "softmax/combine.glsl"

// The index of the row's first maximum.
uint first_max_index(uint base, uint stride) {
  const uint lid = gl_LocalInvocationID.x;
  afp best = afp(0);
  uint best_r = kNone;
  for (uint r = lid; r < p.reduced; r += kWorkgroupSize) {
    const afp v = sfp2afp(x[base + r * stride]);
    if (best_r == kNone || v > best) {
      best = v;
      best_r = r;
    }
  }
  sh_f[lid] = float(best);
  sh_index[lid] = best_r;
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const uint ia = sh_index[lid], ib = sh_index[lid + s];
      const float a = sh_f[lid], b = sh_f[lid + s];
      if (ib != kNone && (ia == kNone || b > a || (b == a && ib < ia))) {
        sh_f[lid] = b;
        sh_index[lid] = ib;
      }
    }
    sync();
  }
  return sh_index[0];
}

void main() {
  const uint row = vkg_workgroup_index();
  if (row >= p.rows || p.reduced == 0) return;  // the same for the whole workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
  const uint stride = p.red_strides.w;
  const uint n = p.reduced;

  if (kKind == kHardmax) {
    const uint best_r = first_max_index(base, stride);
    for (uint r = lid; r < n; r += kWorkgroupSize) y[base + r * stride] = sfp(r == best_r ? 1.0 : 0.0);
    return;
  }

  afp local_max = afp(-vkg_inf());
  for (uint r = lid; r < n; r += kWorkgroupSize) {
    const afp v = sfp2afp(x[base + r * stride]);
    local_max = v > local_max ? v : local_max;
  }
  const afp m = afp(workgroup_combine(true, float(local_max)));
  const uint count = vkg_lane_count(n, lid, kWorkgroupSize);
  afp local_sum = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block += exp(sfp2afp(x[base + (lid + k * kWorkgroupSize) * stride]) - m);
    local_sum += block;
  }
  const float sum = workgroup_combine(false, float(local_sum));
  if (kKind == kSoftmax) {
    const afp inv = afp(1.0 / sum);
    for (uint r = lid; r < n; r += kWorkgroupSize) {
      const uint i = base + r * stride;
      y[i] = afp2sfp(exp(sfp2afp(x[i]) - m) * inv);
    }
  } else {
    const afp log_sum = afp(log(sum));
    for (uint r = lid; r < n; r += kWorkgroupSize) {
      const uint i = base + r * stride;
      y[i] = afp2sfp((sfp2afp(x[i]) - m) - log_sum);
    }
  }
}
