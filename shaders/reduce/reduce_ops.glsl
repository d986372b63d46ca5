// The reductions of reduce/row.comp and reduce/workgroup.comp: operation codes
// (ReduceOp in runtime/tactics/reduce.cpp) and their accumulators. A float row
// accumulates in afp with init/step, partial results merge with combine and
// finish turns the total into the output value (computed in float). Integer
// rows accumulate exactly in int32 (wrapping like the output type would).
// The including shader declares the specialization constant kOp.
#ifndef VKG_REDUCE_OPS_GLSL
#define VKG_REDUCE_OPS_GLSL

const uint OP_SUM = 0;
const uint OP_MEAN = 1;
const uint OP_SUM_SQUARE = 2;
const uint OP_L1 = 3;
const uint OP_L2 = 4;
const uint OP_LOG_SUM = 5;
const uint OP_LOG_SUM_EXP = 6;  // max, then a sum of exp(x - max) (callers handle the two passes)
const uint OP_PROD = 7;
const uint OP_MAX = 8;
const uint OP_MIN = 9;
const uint OP_ARGMAX = 10;
const uint OP_ARGMIN = 11;

const int kIntMin = int(0x80000000u);
const int kIntMax = 0x7fffffff;

afp reduce_init_f(uint op) {
  if (op == OP_PROD) return afp(1);
  if (op == OP_MAX || op == OP_ARGMAX) return afp(-vkg_inf());
  if (op == OP_MIN || op == OP_ARGMIN) return afp(vkg_inf());
  return afp(0);
}

// Max and Min propagate NaN.
afp reduce_step_f(uint op, afp s, afp v) {
  if (op == OP_SUM_SQUARE || op == OP_L2) return s + v * v;
  if (op == OP_L1) return s + abs(v);
  if (op == OP_PROD) return s * v;
  if (op == OP_MAX) return (v > s || isnan(v)) ? v : s;
  if (op == OP_MIN) return (v < s || isnan(v)) ? v : s;
  return s + v;
}

afp reduce_combine_f(uint op, afp a, afp b) {
  if (op == OP_PROD) return a * b;
  if (op == OP_MAX || op == OP_MIN) return reduce_step_f(op, a, b);
  return a + b;
}

// The output value from the accumulated total s (in fp32) of n elements.
float reduce_finish(uint op, float s, uint n) {
  if (op == OP_MEAN) return s / float(n);
  if (op == OP_L2) return sqrt(s);
  if (op == OP_LOG_SUM) return vkg_log(s);
  return s;
}

int reduce_init_i(uint op) {
  if (op == OP_PROD) return 1;
  if (op == OP_MAX || op == OP_LOG_SUM_EXP) return kIntMin;
  if (op == OP_MIN) return kIntMax;
  return 0;
}

int reduce_step_i(uint op, int s, int v) {
  if (op == OP_SUM_SQUARE || op == OP_L2) return s + v * v;
  if (op == OP_L1) return s + abs(v);
  if (op == OP_PROD) return s * v;
  if (op == OP_MAX || op == OP_LOG_SUM_EXP) return max(s, v);
  if (op == OP_MIN) return min(s, v);
  return s + v;
}

int reduce_combine_i(uint op, int a, int b) {
  if (op == OP_PROD) return a * b;
  if (op == OP_MAX || op == OP_MIN || op == OP_LOG_SUM_EXP) return reduce_step_i(op, a, b);
  return a + b;
}

// A float result stored into an integer output: truncated, saturated, NaN -> 0.
int saturate_to_int(float v) {
  if (isnan(v)) return 0;
  if (v >= 2147483647.0) return kIntMax;
  if (v <= -2147483648.0) return kIntMin;
  return int(v);
}

// floor(sqrt(s)), exactly.
int exact_isqrt(int s) {
  if (s <= 0) return 0;
  const uint u = uint(s);
  uint r = uint(sqrt(float(u)));
  while (r * r > u) r -= 1;
  while ((r + 1) * (r + 1) <= u) r += 1;
  return int(r);
}

int reduce_finish_i(uint op, int acc, uint n) {
  if (op == OP_MEAN) return n == 0 ? 0 : acc / int(n);
  if (op == OP_L2) return exact_isqrt(acc);
  if (op == OP_LOG_SUM) return saturate_to_int(vkg_log(float(acc)));
  return acc;
}

// Whether candidate (v, i) replaces the best (b, j) of an ArgMax/ArgMin scan
// that visits indices in increasing order: ties go to the first index, or the
// last one with select_last_index.
bool arg_better_f(uint op, bool select_last, afp v, afp b) {
  return op == OP_ARGMAX ? (v > b || (select_last && v == b)) : (v < b || (select_last && v == b));
}
bool arg_better_i(uint op, bool select_last, int v, int b) {
  return op == OP_ARGMAX ? (v > b || (select_last && v == b)) : (v < b || (select_last && v == b));
}

#endif  // VKG_REDUCE_OPS_GLSL
