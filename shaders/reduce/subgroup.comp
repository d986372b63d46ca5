// vkgraphy-variants: f32 f16 f16acc32
// Reduce* and ArgMax/ArgMin, one subgroup per output row (reduce.subgroup):
// lane i takes the row's elements i, i + subgroup size, ...; the partial
// results are combined with subgroup arithmetic (floats in fp32), so no shared
// memory or barrier is needed.
// Bindings: 0 = X (input), 1 = Y (output; int32 for ArgMax/ArgMin and integer inputs).
// Push constants: the row geometry (reduce/rows.glsl), 18 words.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kOp                the reduction (reduce/reduce_ops.glsl)
//   2 kIntegerInput      1: X holds int32 (exact integer arithmetic)
//   3 kSelectLast        ArgMax/ArgMin: 1 picks the last of equal extremes
//   4 kRuns              reduced runs in use (1: element r is at r * red_strides.w)
//   5 kRowsPerGroup      rows of one workgroup (workgroup size / device subgroup size);
//                        its subgroups share them whatever their actual size
// Group counts: linear_groups(ceil(rows / kRowsPerGroup) * workgroup size, workgroup size).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
#include "common/precision.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kIntegerInput = 0;
layout(constant_id = 3) const uint kSelectLast = 0;
layout(constant_id = 4) const uint kRuns = 1;
layout(constant_id = 5) const uint kRowsPerGroup = 8;

#include "reduce/reduce_ops.glsl"

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };

const uint kNone = 0xffffffffu;  // an ArgMax/ArgMin partial that saw no element

uint element(uint base, uint r) {
  return base + (kRuns <= 1 ? r * p.red_strides.w : vkg_row_offset(r, p.red_dims, p.red_strides));
}

// The combination of every lane's v; Max and Min propagate NaN.
float subgroup_combine_f(uint op, afp v) {
  const float f = float(v);
  if (op == OP_PROD) return subgroupMul(f);
  if (op == OP_MAX || op == OP_MIN) {
    if (subgroupAny(isnan(f))) return vkg_nan();
    return op == OP_MAX ? subgroupMax(f) : subgroupMin(f);
  }
  return subgroupAdd(f);
}

int subgroup_combine_i(uint op, int v) {
  if (op == OP_PROD) return subgroupMul(v);
  if (op == OP_MAX || op == OP_LOG_SUM_EXP) return subgroupMax(v);
  if (op == OP_MIN) return subgroupMin(v);
  return subgroupAdd(v);
}

// This lane's elements of the row, accumulated in blocks (see kSumBlock).
afp partial_f(uint op, uint base) {
  const uint lane = gl_SubgroupInvocationID;
  const uint count = vkg_lane_count(p.reduced, lane, gl_SubgroupSize);
  afp total = reduce_init_f(op);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = reduce_init_f(op);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block = reduce_step_f(op, block, sfp2afp(x[element(base, lane + k * gl_SubgroupSize)]));
    total = reduce_combine_f(op, total, block);
  }
  return total;
}

float reduce_row_f(uint base) {
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish(kOp, subgroup_combine_f(kOp, partial_f(kOp, base)), p.reduced);
  const float m = subgroup_combine_f(OP_MAX, partial_f(OP_MAX, base));
  if (isinf(m) || isnan(m)) return m;
  const afp am = afp(m);
  const uint lane = gl_SubgroupInvocationID;
  const uint count = vkg_lane_count(p.reduced, lane, gl_SubgroupSize);
  afp total = afp(0);
  for (uint k0 = 0; k0 < count; k0 += kSumBlock) {
    afp block = afp(0);
    const uint k1 = vkg_block_end(k0, count);
    for (uint k = k0; k < k1; ++k) block += exp(sfp2afp(x[element(base, lane + k * gl_SubgroupSize)]) - am);
    total += block;
  }
  return m + vkg_log(subgroupAdd(float(total)));
}

int reduce_row_i(uint base) {
  int acc = reduce_init_i(kOp);
  for (uint r = gl_SubgroupInvocationID; r < p.reduced; r += gl_SubgroupSize)
    acc = reduce_step_i(kOp, acc, xi[element(base, r)]);
  acc = subgroup_combine_i(kOp, acc);
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish_i(kOp, acc, p.reduced);
  float sum = 0.0;
  for (uint r = gl_SubgroupInvocationID; r < p.reduced; r += gl_SubgroupSize) sum += exp(float(xi[element(base, r)]) - float(acc));
  sum = subgroupAdd(sum);
  return p.reduced == 0 ? kIntMin : saturate_to_int(float(acc) + log(sum));
}

// The extreme's index: each lane scans its elements in increasing order, then
// the lanes holding the extreme value agree on the first (or last) index.
uint arg_row(uint base) {
  const bool last = kSelectLast != 0;
  const bool is_max = kOp == OP_ARGMAX;
  uint best_index = kNone;
  bool equal;
  if (kIntegerInput != 0) {
    int best = 0;
    for (uint r = gl_SubgroupInvocationID; r < p.reduced; r += gl_SubgroupSize) {
      const int v = xi[element(base, r)];
      if (best_index == kNone || arg_better_i(kOp, last, v, best)) {
        best = v;
        best_index = r;
      }
    }
    const bool has = best_index != kNone;
    const int extreme = is_max ? subgroupMax(has ? best : kIntMin) : subgroupMin(has ? best : kIntMax);
    equal = has && best == extreme;
  } else {
    afp best = afp(0);
    for (uint r = gl_SubgroupInvocationID; r < p.reduced; r += gl_SubgroupSize) {
      const afp v = sfp2afp(x[element(base, r)]);
      if (best_index == kNone || arg_better_f(kOp, last, v, best)) {
        best = v;
        best_index = r;
      }
    }
    const bool has = best_index != kNone;
    const float extreme = is_max ? subgroupMax(has ? float(best) : -vkg_inf()) : subgroupMin(has ? float(best) : vkg_inf());
    equal = has && float(best) == extreme;
  }
  return last ? subgroupMax(equal ? best_index : 0u) : subgroupMin(equal ? best_index : kNone);
}

void main() {
  const uint first = vkg_workgroup_index() * kRowsPerGroup;
  const uint end = min(first + kRowsPerGroup, p.rows);
  for (uint row = first + gl_SubgroupID; row < end; row += gl_NumSubgroups) {
    const uint base = vkg_row_offset(row, p.kept_dims, p.kept_strides);
    if (kOp == OP_ARGMAX || kOp == OP_ARGMIN) {
      const uint index = arg_row(base);
      if (subgroupElect()) yi[row] = int(index);
    } else if (kIntegerInput != 0) {
      const int result = reduce_row_i(base);
      if (subgroupElect()) yi[row] = result;
    } else {
      const float result = reduce_row_f(base);
      if (subgroupElect()) y[row] = sfp(result);
    }
  }
}
