// vkgraphy-variants: f32 f16 f16acc32
// Reduce* and ArgMax/ArgMin, one workgroup per output row (reduce.workgroup):
// invocation i takes the row's elements i, i + size, ...; the partial results
// are combined by a tree in shared memory.
// Bindings: 0 = X (input), 1 = Y (output; int32 for ArgMax/ArgMin and integer inputs).
// Push constants: the row geometry (reduce/rows.glsl), 18 words.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size, a power of two
//   1 kOp                the reduction (reduce/reduce_ops.glsl)
//   2 kIntegerInput      1: X holds int32 (exact integer arithmetic)
//   3 kSelectLast        ArgMax/ArgMin: 1 picks the last of equal extremes
//   4 kRuns              reduced runs in use (1: element r is at r * red_strides.w)
// Group counts: linear_groups(rows * workgroup size, workgroup size), one group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kWorkgroupSize = 64;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kIntegerInput = 0;
layout(constant_id = 3) const uint kSelectLast = 0;
layout(constant_id = 4) const uint kRuns = 1;

#include "reduce/reduce_ops.glsl"

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };

shared float sh_f[kWorkgroupSize];
shared int sh_i[kWorkgroupSize];
shared uint sh_index[kWorkgroupSize];

const uint kNone = 0xffffffffu;  // an ArgMax/ArgMin partial that saw no element

uint row_base;

uint element(uint r) {
  return row_base + (kRuns <= 1 ? r * p.red_strides.w : vkg_row_offset(r, p.red_dims, p.red_strides));
}

// barrier() also makes shared memory writes visible (WorkgroupMemory semantics).
void sync() { barrier(); }

// The combination of every invocation's v (every invocation must call it).
afp workgroup_combine_f(uint op, afp v) {
  const uint lid = gl_LocalInvocationID.x;
  sh_f[lid] = float(v);
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) sh_f[lid] = float(reduce_combine_f(op, afp(sh_f[lid]), afp(sh_f[lid + s])));
    sync();
  }
  const afp result = afp(sh_f[0]);
  sync();
  return result;
}

int workgroup_combine_i(uint op, int v) {
  const uint lid = gl_LocalInvocationID.x;
  sh_i[lid] = v;
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) sh_i[lid] = reduce_combine_i(op, sh_i[lid], sh_i[lid + s]);
    sync();
  }
  const int result = sh_i[0];
  sync();
  return result;
}

// This invocation's elements, accumulated in blocks (see kSumBlock).
afp partial_f(uint op) {
  const uint lid = gl_LocalInvocationID.x;
  const uint count = vkg_lane_count(p.reduced, lid, kWorkgroupSize);
  afp total = reduce_init_f(op);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = reduce_init_f(op);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block = reduce_step_f(op, block, sfp2afp(x[element(lid + k * kWorkgroupSize)]));
    total = reduce_combine_f(op, total, block);
  }
  return total;
}

float reduce_row_f() {
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish(kOp, float(workgroup_combine_f(kOp, partial_f(kOp))), p.reduced);
  const afp m = workgroup_combine_f(OP_MAX, partial_f(OP_MAX));
  if (isinf(m) || isnan(m)) return float(m);
  const uint lid = gl_LocalInvocationID.x;
  const uint count = vkg_lane_count(p.reduced, lid, kWorkgroupSize);
  afp total = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block += exp(sfp2afp(x[element(lid + k * kWorkgroupSize)]) - m);
    total += block;
  }
  return float(m) + vkg_log(float(workgroup_combine_f(OP_SUM, total)));
}

int reduce_row_i() {
  int acc = reduce_init_i(kOp);
  for (uint r = gl_LocalInvocationID.x; r < p.reduced; r += kWorkgroupSize)
    acc = reduce_step_i(kOp, acc, xi[element(r)]);
  acc = workgroup_combine_i(kOp, acc);
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish_i(kOp, acc, p.reduced);
  float sum = 0.0;
  for (uint r = gl_LocalInvocationID.x; r < p.reduced; r += kWorkgroupSize) sum += exp(float(xi[element(r)]) - float(acc));
  sum = float(workgroup_combine_f(OP_SUM, afp(sum)));
  return p.reduced == 0 ? kIntMin : saturate_to_int(float(acc) + log(sum));
}

// Merging two ArgMax/ArgMin partials (value, index): whether b replaces a.
bool arg_merge(bool b_equal, bool b_better, uint ib, uint ia) {
  if (ib == kNone) return false;
  if (ia == kNone) return true;
  if (b_equal) return kSelectLast != 0 ? ib > ia : ib < ia;
  return b_better;
}

uint arg_row() {
  const uint lid = gl_LocalInvocationID.x;
  const bool last = kSelectLast != 0;
  uint best_index = kNone;
  if (kIntegerInput != 0) {
    int best = 0;
    for (uint r = lid; r < p.reduced; r += kWorkgroupSize) {
      const int v = xi[element(r)];
      if (best_index == kNone || arg_better_i(kOp, last, v, best)) {
        best = v;
        best_index = r;
      }
    }
    sh_i[lid] = best;
  } else {
    afp best = afp(0);
    for (uint r = lid; r < p.reduced; r += kWorkgroupSize) {
      const afp v = sfp2afp(x[element(r)]);
      if (best_index == kNone || arg_better_f(kOp, last, v, best)) {
        best = v;
        best_index = r;
      }
    }
    sh_f[lid] = float(best);
  }
  sh_index[lid] = best_index;
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const uint ia = sh_index[lid], ib = sh_index[lid + s];
      if (kIntegerInput != 0) {
        const int a = sh_i[lid], b = sh_i[lid + s];
        if (arg_merge(b == a, kOp == OP_ARGMAX ? b > a : b < a, ib, ia)) {
          sh_i[lid] = b;
          sh_index[lid] = ib;
        }
      } else {
        const afp a = afp(sh_f[lid]), b = afp(sh_f[lid + s]);
        if (arg_merge(b == a, kOp == OP_ARGMAX ? b > a : b < a, ib, ia)) {
          sh_f[lid] = float(b);
          sh_index[lid] = ib;
        }
      }
    }
    sync();
  }
  return sh_index[0];
}

void main() {
  const uint row = vkg_workgroup_index();
  if (row >= p.rows) return;  // the same for the whole workgroup
  row_base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
  if (kOp == OP_ARGMAX || kOp == OP_ARGMIN) {
    const uint index = arg_row();
    if (gl_LocalInvocationID.x == 0) yi[row] = int(index);
  } else if (kIntegerInput != 0) {
    const int result = reduce_row_i();
    if (gl_LocalInvocationID.x == 0) yi[row] = result;
  } else {
    const float result = reduce_row_f();
    if (gl_LocalInvocationID.x == 0) y[row] = sfp(result);
  }
}
