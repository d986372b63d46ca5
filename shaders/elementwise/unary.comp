// vkgraphy-variants: f32 f16 f16acc32
// Y = op(X) over n elements: activations, rounding, exponentials and
// trigonometry, Clip, IsNaN/IsInf and Not.
// Bindings: 0 = X, 1 = Y. Each is float storage (sfp) or int32 (ints and
// bools), as kInInt / kOutInt say.
// Push constants (5 words):
//   n                 elements
//   p0, p1, p2, p3    op parameters as 32-bit floats (alpha, beta, gamma,
//                     lambd, bias...), or for integer Clip the int32 bounds;
//                     IsInf: p0 = detect_negative, p1 = detect_positive
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVec       1: one element per invocation; 4: one vec4 per invocation,
//                the n % 4 tail elements by one invocation each after the n / 4
//                vector ones. Dispatch n / 4 + n % 4 invocations.
//   2 kOp        OP_* below (runtime/tactics/elementwise.cpp: UnaryOp)
//   3 kInInt, 4 kOutInt  1: that binding holds int32
//   5 kIntMath   1: integer arithmetic (int input and output)
//   6 kIntKind   KIND_* (math.glsl) of the integer input/output
//   40 kF32Bindings  (f16 variants) bit b: binding b holds fp32, a fused reformat
//                (common/f32_bindings.glsl)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/f32_bindings.glsl"
#include "common/index.glsl"
#include "elementwise/math.glsl"

#define OP_ABS 0
#define OP_ACOS 1
#define OP_ACOSH 2
#define OP_ASIN 3
#define OP_ASINH 4
#define OP_ATAN 5
#define OP_ATANH 6
#define OP_CEIL 7
#define OP_COS 8
#define OP_COSH 9
#define OP_ERF 10
#define OP_EXP 11
#define OP_FLOOR 12
#define OP_LOG 13
#define OP_NEG 14
#define OP_RECIPROCAL 15
#define OP_ROUND 16
#define OP_SIGN 17
#define OP_SIN 18
#define OP_SINH 19
#define OP_SQRT 20
#define OP_TAN 21
#define OP_TANH 22
#define OP_RELU 23
#define OP_SIGMOID 24
#define OP_SOFTPLUS 25
#define OP_SOFTSIGN 26
#define OP_ELU 27           // p0 alpha
#define OP_CELU 28          // p0 alpha
#define OP_SELU 29          // p0 alpha, p1 gamma
#define OP_LEAKY_RELU 30    // p0 alpha
#define OP_HARD_SIGMOID 31  // p0 alpha, p1 beta
#define OP_HARD_SWISH 32
#define OP_THRESHOLDED_RELU 33  // p0 alpha
#define OP_SHRINK 34        // p0 lambd, p1 bias
#define OP_CLIP 35          // p0 min, p1 max
#define OP_IS_NAN 36
#define OP_IS_INF 37        // p0 detect_negative, p1 detect_positive (0 or 1)
#define OP_NOT 38
#define OP_MISH 39
#define OP_GELU 40           // p0: 1 for the tanh approximation
#define OP_BITWISE_NOT 41    // integers only

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec = 1;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const uint kInInt = 0;
layout(constant_id = 4) const uint kOutInt = 0;
layout(constant_id = 5) const uint kIntMath = 0;
layout(constant_id = 6) const uint kIntKind = 0;

layout(push_constant) uniform Params {
  uint n;
  uint p0;
  uint p1;
  uint p2;
  uint p3;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer X4 { sfp4 x4[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 0) readonly buffer XI4 { ivec4 xi4[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer Y4 { sfp4 y4[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };
layout(binding = 1) writeonly buffer YI4 { ivec4 yi4[]; };
layout(binding = 0) readonly buffer X32 { float x32[]; };
layout(binding = 0) readonly buffer X32_4 { vec4 x32_4[]; };
layout(binding = 1) writeonly buffer Y32 { float y32[]; };
layout(binding = 1) writeonly buffer Y32_4 { vec4 y32_4[]; };

// The float input and output, through the fp32 views where a reformat is fused in (f32_bindings.glsl).
VKG_F32_READERS(x_at, x4_at, 0, x, x4, x32, x32_4)
VKG_F32_WRITERS(y_put, y4_put, 1, y, y4, y32, y32_4)

afp param(uint bits) { return afp(uintBitsToFloat(bits)); }

int int_op(int v) {
  switch (kOp) {
    case OP_ABS: return vkg_wrap_int(v < 0 && kIntKind != KIND_U32 ? -v : v, kIntKind);
    case OP_NEG: return vkg_wrap_int(-v, kIntKind);
    case OP_SIGN: return kIntKind == KIND_U32 ? (v != 0 ? 1 : 0) : sign(v);
    case OP_RELU: return (v < 0 && kIntKind != KIND_U32) ? 0 : v;
    case OP_CLIP: {
      const int lo = int(params.p0), hi = int(params.p1);
      if (kIntKind == KIND_U32) {
        const uint at_least_lo = uint(v) < uint(lo) ? uint(lo) : uint(v);
        return int(at_least_lo > uint(hi) ? uint(hi) : at_least_lo);
      }
      const int at_least_lo = v < lo ? lo : v;
      return at_least_lo > hi ? hi : at_least_lo;
    }
    case OP_NOT: return v != 0 ? 0 : 1;
    case OP_BITWISE_NOT: return vkg_wrap_int(~v, kIntKind);
    default: return 0;
  }
}

afp float_op(afp v) {
  switch (kOp) {
    case OP_ABS: return abs(v);
    case OP_ACOS: return vkg_acos(v);
    case OP_ACOSH: return vkg_acosh(v);
    case OP_ASIN: return vkg_asin(v);
    case OP_ASINH: return vkg_asinh(v);
    case OP_ATAN: return atan(v);
    case OP_ATANH: return vkg_atanh(v);
    case OP_CEIL: return ceil(v);
    case OP_COS: return cos(v);
    case OP_COSH: return vkg_cosh(v);
    case OP_ERF: return vkg_erf(v);
    case OP_EXP: return exp(v);
    case OP_FLOOR: return floor(v);
    case OP_LOG: return vkg_log(v);
    case OP_NEG: return -v;
    case OP_RECIPROCAL: return afp(1) / v;
    case OP_ROUND: return roundEven(v);
    case OP_SIGN: return v < afp(0) ? afp(-1) : v > afp(0) ? afp(1) : v;
    case OP_SIN: return sin(v);
    case OP_SINH: return vkg_sinh(v);
    case OP_SQRT: return vkg_sqrt(v);
    case OP_TAN: return tan(v);
    case OP_TANH: return vkg_tanh(v);
    case OP_RELU: return v < afp(0) ? afp(0) : v;
    case OP_SIGMOID: {
      const afp e = exp(-abs(v));
      return v >= afp(0) ? afp(1) / (afp(1) + e) : e / (afp(1) + e);
    }
    case OP_SOFTPLUS: return v > afp(0) ? v + vkg_log1p(exp(-v)) : vkg_log1p(exp(v));
    case OP_SOFTSIGN: return v / (afp(1) + abs(v));
    case OP_ELU: return v < afp(0) ? param(params.p0) * vkg_expm1(v) : v;
    case OP_CELU: {
      const afp alpha = param(params.p0);
      return v > afp(0) ? v : alpha * vkg_expm1(v / alpha);
    }
    case OP_SELU: {
      const afp alpha = param(params.p0), gamma = param(params.p1);
      return v > afp(0) ? gamma * v : gamma * alpha * vkg_expm1(v);
    }
    case OP_LEAKY_RELU: return v < afp(0) ? param(params.p0) * v : v;
    case OP_HARD_SIGMOID: {
      const afp h = param(params.p0) * v + param(params.p1);
      const afp at_most_1 = afp(1) < h ? afp(1) : h;
      return afp(0) < at_most_1 ? at_most_1 : afp(0);
    }
    case OP_HARD_SWISH: {
      const afp h = v / afp(6) + afp(0.5);
      const afp at_most_1 = afp(1) < h ? afp(1) : h;
      return v * (afp(0) < at_most_1 ? at_most_1 : afp(0));
    }
    case OP_THRESHOLDED_RELU: return v > param(params.p0) ? v : afp(0);
    case OP_SHRINK: {
      const afp lambd = param(params.p0), bias = param(params.p1);
      return v < -lambd ? v + bias : v > lambd ? v - bias : afp(0);
    }
    case OP_MISH: {
      const afp softplus = v > afp(0) ? v + vkg_log1p(exp(-v)) : vkg_log1p(exp(v));
      return v * vkg_tanh(softplus);
    }
    case OP_GELU: {
      if (params.p0 == 0) return afp(0.5) * v * (afp(1) + vkg_erf(v * afp(0.70710678118654752)));
      const afp inner = afp(0.79788456080286536) * (v + afp(0.044715) * v * v * v);
      return afp(0.5) * v * (afp(1) + vkg_tanh(inner));
    }
    case OP_CLIP: {
      const afp lo = param(params.p0), hi = param(params.p1);
      const afp at_least_lo = v < lo ? lo : v;
      return at_least_lo > hi ? hi : at_least_lo;
    }
    default: return afp(0);
  }
}

// Float-input predicates (IsNaN, IsInf): 0 or 1.
int float_predicate(afp v) {
  if (kOp == OP_IS_NAN) return isnan(v) ? 1 : 0;
  if (!isinf(v)) return 0;
  return (v > afp(0) ? params.p1 : params.p0) != 0u ? 1 : 0;
}

// The output of one input value; `f` is the value as afp (unused in integer math).
int result_int(afp f, int v) {
  if (kIntMath != 0) return int_op(v);
  if (kOp == OP_IS_NAN || kOp == OP_IS_INF) return float_predicate(f);
  return vkg_float_to_int(float(float_op(f)), kIntKind);  // Shrink of integers
}

afp as_float(int v) { return afp(vkg_int_to_float(v, kIntKind)); }

void element(uint e) {
  if (kOutInt != 0) {
    const int v = kInInt != 0 ? xi[e] : 0;
    const afp f = kInInt != 0 ? (kIntMath != 0 ? afp(0) : as_float(v)) : x_at(e);
    yi[e] = result_int(f, v);
  } else {
    y_put(e, float_op(x_at(e)));
  }
}

void vector4(uint i) {
  if (kOutInt != 0) {
    const ivec4 v = kInInt != 0 ? xi4[i] : ivec4(0);
    afp4 f = afp4(0);
    if (kInInt == 0) {
      f = x4_at(i);
    } else if (kIntMath == 0) {
      for (int k = 0; k < 4; ++k) f[k] = as_float(v[k]);
    }
    ivec4 r;
    for (int k = 0; k < 4; ++k) r[k] = result_int(f[k], v[k]);
    yi4[i] = r;
  } else {
    const afp4 v = x4_at(i);
    afp4 r;
    for (int k = 0; k < 4; ++k) r[k] = float_op(v[k]);
    y4_put(i, r);
  }
}

void main() {
  const uint i = vkg_linear_index();
  if (kVec == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      vector4(i);
      return;
    }
    const uint e = n4 * 4 + (i - n4);
    if (e < params.n) element(e);
  } else if (i < params.n) {
    element(i);
  }
}
