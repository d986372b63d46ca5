// vkgraphy-variants: f32 f16 f16acc32
// Reduce* and ArgMax/ArgMin, one invocation per output row (reduce.row).
// Bindings: 0 = X (input), 1 = Y (output; int32 for ArgMax/ArgMin and integer inputs).
// Push constants: the row geometry (reduce/rows.glsl), 18 words.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kOp                the reduction (reduce/reduce_ops.glsl)
//   2 kIntegerInput      1: X holds int32 (exact integer arithmetic)
//   3 kSelectLast        ArgMax/ArgMin: 1 picks the last of equal extremes
//   4 kRuns              reduced runs in use (1: element r is at r * red_strides.w)
// Group counts: linear_groups(rows, workgroup size).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
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

// The offset of element r, walking the row at `base` in order.
#define ELEMENT(r) vkg_element(kRuns <= 1, base, r, cursor, p.red_dims, p.red_strides)

// op over the row, in blocks (see kSumBlock).
afp accumulate_f(uint op, uint base) {
  VkgCursor cursor = vkg_cursor(base);
  afp total = reduce_init_f(op);
  for (uint r0 = 0; r0 < p.reduced; r0 += kSumBlock) {
    afp block = reduce_init_f(op);
    const uint r1 = vkg_block_end(r0, p.reduced);
    for (uint r = r0; r < r1; ++r) block = reduce_step_f(op, block, sfp2afp(x[ELEMENT(r)]));
    total = reduce_combine_f(op, total, block);
  }
  return total;
}

float reduce_row_f(uint base) {
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish(kOp, float(accumulate_f(kOp, base)), p.reduced);
  const afp m = accumulate_f(OP_MAX, base);
  if (isinf(m) || isnan(m)) return float(m);  // an empty row (-inf), all -inf, or +inf / NaN present
  VkgCursor cursor = vkg_cursor(base);
  afp total = afp(0);
  for (uint r0 = 0; r0 < p.reduced; r0 += kSumBlock) {
    afp block = afp(0);
    const uint r1 = vkg_block_end(r0, p.reduced);
    for (uint r = r0; r < r1; ++r) block += exp(sfp2afp(x[ELEMENT(r)]) - m);
    total += block;
  }
  return float(m) + vkg_log(float(total));
}

int reduce_row_i(uint base) {
  VkgCursor cursor = vkg_cursor(base);
  int acc = reduce_init_i(kOp);
  for (uint r = 0; r < p.reduced; ++r) acc = reduce_step_i(kOp, acc, xi[ELEMENT(r)]);
  if (kOp != OP_LOG_SUM_EXP) return reduce_finish_i(kOp, acc, p.reduced);
  if (p.reduced == 0) return kIntMin;
  cursor = vkg_cursor(base);
  float sum = 0.0;
  for (uint r = 0; r < p.reduced; ++r) sum += exp(float(xi[ELEMENT(r)]) - float(acc));
  return saturate_to_int(float(acc) + log(sum));
}

int arg_row(uint base) {
  const bool last = kSelectLast != 0;
  VkgCursor cursor = vkg_cursor(base);
  int best_index = 0;
  if (kIntegerInput != 0) {
    int best = xi[base];
    for (uint r = 0; r < p.reduced; ++r) {
      const int v = xi[ELEMENT(r)];
      if (arg_better_i(kOp, last, v, best)) {
        best = v;
        best_index = int(r);
      }
    }
  } else {
    afp best = sfp2afp(x[base]);
    for (uint r = 0; r < p.reduced; ++r) {
      const afp v = sfp2afp(x[ELEMENT(r)]);
      if (arg_better_f(kOp, last, v, best)) {
        best = v;
        best_index = int(r);
      }
    }
  }
  return best_index;
}

void main() {
  const uint o = vkg_linear_index();
  if (o >= p.rows) return;
  const uint base = vkg_row_offset(o, p.kept_dims, p.kept_strides);
  if (kOp == OP_ARGMAX || kOp == OP_ARGMIN) {
    yi[o] = arg_row(base);
  } else if (kIntegerInput != 0) {
    yi[o] = reduce_row_i(base);
  } else {
    y[o] = sfp(reduce_row_f(base));
  }
}
