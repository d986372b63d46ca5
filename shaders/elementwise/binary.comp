// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: A, B, D and E (float inputs only)
// C = op(A, B) with numpy broadcasting: arithmetic, comparison, logic, shifts, bitwise ops,
// PRelu, and the steps of the variadic Sum/Mean/Max/Min.
// Bindings: 0 = A, 1 = B, 2 = C. Each is float storage (sfp) or int32 (ints
// and bools), as kAInt / kBInt / kOutInt say.
// Push constants (27 words):
//   n         output elements
//   rank      merged broadcast dimensions (1..8; the shader reads it as kRank)
//   count     Mean: the number of inputs its last step divides by
//   dims[8]   merged output dimensions, outermost first
//   stride_a[8], stride_b[8]  element strides of A and B per merged dimension;
//             the last one is 0 (broadcast along rows) or 1 (contiguous rows)
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVec       1: one element per invocation; 4: four contiguous output
//                elements per invocation (needs dims[rank-1] % 4 == 0, or rank 1,
//                where the n % 4 tail elements take one invocation each after
//                the n / 4 vector ones). Dispatch n / 4 + n % 4 invocations.
//                8 (float output, n and dims[rank-1] multiples of 8): eight
//                elements per invocation, stored at once in "_texel" builds; n / 8
//                invocations.
//   2 kOp        OP_* below (runtime/tactics/elementwise.cpp: BinaryOp)
//   3 kAInt, 4 kBInt, 5 kOutInt  1: that binding holds int32
//   6 kIntMath   1: integer arithmetic (A and B int), 0: afp arithmetic
//   7 kIntKind   KIND_* (math.glsl) of the integer operands: wrapping of integer
//                results, unsigned comparisons; of the output when float
//                arithmetic produces an integer (Pow of an int base)
//   8 kALayout, 9 kBLayout  LAYOUT_* below: how A / B are indexed (the strided
//                form is general; the others let lavapipe load contiguously, or
//                once per row)
//   10 kChain    an elementwise chain (float arithmetic only): 0 none; 1 the
//                result v becomes chain_op(v, D); 2 it becomes chain_op(D, v)
//   11 kChainOp  OP_ADD, OP_SUB, OP_MUL or OP_DIV
//   12 kDLayout  LAYOUT_IDENTITY, LAYOUT_SINGLE, LAYOUT_UPSAMPLE, LAYOUT_AS_A or LAYOUT_AS_B:
//                how D is indexed (the last two: D is A, or B, and is not read again)
//   13 kRank     params.rank as a constant (the index loop unrolled)
//   14 kUpH, 15 kUpW  with LAYOUT_UPSAMPLE: the factors by which that operand's last two
//                axes are upsampled (nearest, input o / factor for output o); one operand
//                of A, B, D and E at most. With an upsampled D or E the last two dims are
//                the output's H and W (the others merged before them, at least one), and the
//                operand is read at [outer, h / kUpH, w / kUpW] of its own contiguous
//                [outer, H / kUpH, W / kUpW], outer the linear index over the dims before
//   16 kChain2, 17 kChain2Op, 18 kELayout  a second chained op, as 10-12 with E for D
//   39 vkg_small_indices  1: n < 2^21, indices divided without integer division (index.glsl)
//   40 kF32Bindings  (f16 variants) bit b: binding b holds fp32, a fused reformat
//                (common/f32_bindings.glsl)
// Binding 3 = D, the chained operand, and binding 4 = E, the second one (float
// storage; bound to any buffer when unused).
// In the "_texel" builds (common/texel_reads.glsl), A, B, D and E are uniform
// texel buffers and must hold floats: kAInt and kBInt are 0.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/f32_bindings.glsl"
#include "common/texel_reads.glsl"
#include "common/index.glsl"
#include "elementwise/math.glsl"
#include "common/epilogue.glsl"

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_DIV 3
#define OP_POW 4
#define OP_MOD 5    // integers: the sign of the divisor (Python)
#define OP_FMOD 6   // the sign of the dividend (C)
#define OP_MAX 7
#define OP_MIN 8
#define OP_MEAN 9   // (A + B) / count: the last step of Mean
#define OP_FIRST 10 // A: Sum/Mean/Max/Min of one input
#define OP_PRELU 11
#define OP_SHL 12
#define OP_SHR 13
#define OP_EQUAL 14
#define OP_LESS 15
#define OP_LESS_EQUAL 16
#define OP_GREATER 17
#define OP_GREATER_EQUAL 18
#define OP_AND 19
#define OP_OR 20
#define OP_XOR 21
#define OP_BITWISE_AND 22  // integers only
#define OP_BITWISE_OR 23
#define OP_BITWISE_XOR 24

#define LAYOUT_STRIDED 0   // through dims and strides
#define LAYOUT_IDENTITY 1  // the output's shape: element e is at e
#define LAYOUT_SINGLE 2    // one element, at 0
#define LAYOUT_ROWS 3      // strided, with contiguous rows (last merged stride 1): vec4 loads
#define LAYOUT_ROW_CONST 4 // strided, one value per row (last merged stride 0): one load per vec4
#define LAYOUT_UPSAMPLE 5  // dims [outer, H, W] of the output read at [outer, h / kUpH, w / kUpW]
#define LAYOUT_AS_A 6      // a chained operand that is A, of layout LAYOUT_IDENTITY: its element, not read again
#define LAYOUT_AS_B 7      // the same for B
                           // (the strides are the operand's own): a fused nearest Resize

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec = 1;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const uint kAInt = 0;
layout(constant_id = 4) const uint kBInt = 0;
layout(constant_id = 5) const uint kOutInt = 0;
layout(constant_id = 6) const uint kIntMath = 0;
layout(constant_id = 7) const uint kIntKind = 0;
layout(constant_id = 8) const uint kALayout = LAYOUT_STRIDED;
layout(constant_id = 9) const uint kBLayout = LAYOUT_STRIDED;
layout(constant_id = 10) const uint kChain = 0;
layout(constant_id = 11) const uint kChainOp = OP_ADD;
layout(constant_id = 12) const uint kDLayout = LAYOUT_IDENTITY;
layout(constant_id = 13) const uint kRank = 1;  // params.rank
layout(constant_id = 14) const uint kUpH = 1;
layout(constant_id = 15) const uint kUpW = 1;
layout(constant_id = 16) const uint kChain2 = 0;
layout(constant_id = 17) const uint kChain2Op = OP_ADD;
layout(constant_id = 18) const uint kELayout = LAYOUT_IDENTITY;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint count;
  uint dims[8];
  uint stride_a[8];
  uint stride_b[8];
} params;

VKG_FLOAT_INPUT(a_at, a4_at, 0, a, a4, a32, a32_4)
VKG_FLOAT_INPUT(b_at, b4_at, 1, b, b4, b32, b32_4)
VKG_FLOAT_INPUT(d_at, d4_at, 3, d, d4, d32, d32_4)
VKG_FLOAT_INPUT(e_at, e4_at, 4, e, e4, e32, e32_4)
#ifdef VKG_TEXEL_READS
int a_int_at(uint i) { return 0; }
ivec4 a_int4_at(uint i) { return ivec4(0); }
int b_int_at(uint i) { return 0; }
ivec4 b_int4_at(uint i) { return ivec4(0); }
#else
layout(binding = 0) readonly buffer AI { int ai[]; };
layout(binding = 0) readonly buffer AI4 { ivec4 ai4[]; };
layout(binding = 1) readonly buffer BI { int bi[]; };
layout(binding = 1) readonly buffer BI4 { ivec4 bi4[]; };
int a_int_at(uint i) { return ai[i]; }
ivec4 a_int4_at(uint i) { return ai4[i]; }
int b_int_at(uint i) { return bi[i]; }
ivec4 b_int4_at(uint i) { return bi4[i]; }
#endif
layout(binding = 2) writeonly buffer C { sfp c[]; };
layout(binding = 2) writeonly buffer C4 { sfp4 c4[]; };
layout(binding = 2) writeonly buffer CI { int ci[]; };
layout(binding = 2) writeonly buffer CI4 { ivec4 ci4[]; };
layout(binding = 2) writeonly buffer C32 { float c32[]; };
layout(binding = 2) writeonly buffer C32_4 { vec4 c32_4[]; };
VKG_F32_WRITERS(c_put, c4_put, 2, c, c4, c32, c32_4)
#ifdef VKG_TEXEL_READS
VKG_OUTPUT8(c8_put, 2, c8)
#endif

const bool kCompare = kOp >= OP_EQUAL && kOp <= OP_GREATER_EQUAL;
const bool kUnsigned32 = kIntKind == KIND_U32;

bool strided_layout(uint l) {
  return l == LAYOUT_STRIDED || l == LAYOUT_ROWS || l == LAYOUT_ROW_CONST || l == LAYOUT_UPSAMPLE;
}

// Index `idx` of output dimension d as an operand of layout l reads it (constant divisors).
uint operand_index(uint l, int d, uint idx) {
  if (l != LAYOUT_UPSAMPLE) return idx;
  return d == int(kRank) - 1 ? idx / kUpW : d == int(kRank) - 2 ? idx / kUpH : idx;
}

// Offsets into A and B of output element e.
void offsets(uint e, out uint oa, out uint ob) {
  const bool strided = strided_layout(kALayout) || strided_layout(kBLayout);
  uint sa = 0, sb = 0;
  uint rest = e;
  if (strided) {  // unrolled: the dims and strides at constant offsets
    [[unroll]] for (int d = int(kRank) - 1; d > 0; --d) {
      const uint dim = params.dims[d];
      const uint next = vkg_div(rest, dim);
      const uint idx = rest - next * dim;
      rest = next;
      sa += operand_index(kALayout, d, idx) * params.stride_a[d];
      sb += operand_index(kBLayout, d, idx) * params.stride_b[d];
    }
    sa += rest * params.stride_a[0];
    sb += rest * params.stride_b[0];
  }
  oa = kALayout == LAYOUT_IDENTITY ? e : kALayout == LAYOUT_SINGLE ? 0 : sa;
  ob = kBLayout == LAYOUT_IDENTITY ? e : kBLayout == LAYOUT_SINGLE ? 0 : sb;
}

bool int_less(int x, int y) { return kUnsigned32 ? uint(x) < uint(y) : x < y; }

int int_div(int x, int y) {
  if (y == 0) return 0;
  if (kUnsigned32) return int(uint(x) / uint(y));
  if (y == -1) return -x;  // wraps for the lowest value, like the reference
  return x / y;
}

// Remainder with the sign of the dividend (C), or of the divisor when `python`.
int int_mod(int x, int y, bool python) {
  if (y == 0) return 0;
  if (kUnsigned32) return int(uint(x) % uint(y));
  if (y == -1) return 0;
  int r = x - (x / y) * y;
  if (python && r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

int int_pow(int base, int e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1 && !vkg_is_unsigned_kind(kIntKind)) return (e & 1) == 0 ? 1 : -1;
    return 0;
  }
  uint r = 1u, f = uint(base), ue = uint(e);
  while (ue != 0u) {
    if ((ue & 1u) != 0u) r *= f;
    f *= f;
    ue >>= 1;
  }
  return int(r);
}

int int_shift(int x, int s, bool left) {
  const uint bits = kIntKind == KIND_U8 ? 8u : kIntKind == KIND_U16 ? 16u : 32u;
  if (uint(s) >= bits) return 0;
  return left ? int(uint(x) << uint(s)) : int(uint(x) >> uint(s));
}

// Integer arithmetic, comparison and logic; comparisons and logic give 0 or 1.
int int_op(int x, int y) {
  switch (kOp) {
    case OP_ADD: return vkg_wrap_int(x + y, kIntKind);
    case OP_SUB: return vkg_wrap_int(x - y, kIntKind);
    case OP_MUL: return vkg_wrap_int(x * y, kIntKind);
    case OP_DIV: return vkg_wrap_int(int_div(x, y), kIntKind);
    case OP_POW: return vkg_wrap_int(int_pow(x, y), kIntKind);
    case OP_MOD: return int_mod(x, y, true);
    case OP_FMOD: return int_mod(x, y, false);
    case OP_MAX: return int_less(x, y) ? y : x;
    case OP_MIN: return int_less(y, x) ? y : x;
    case OP_MEAN: return vkg_wrap_int(int_div(vkg_wrap_int(x + y, kIntKind), int(params.count)), kIntKind);
    case OP_FIRST: return x;
    case OP_PRELU: return (!kUnsigned32 && x < 0) ? vkg_wrap_int(y * x, kIntKind) : x;
    case OP_SHL: return vkg_wrap_int(int_shift(x, y, true), kIntKind);
    case OP_SHR: return int_shift(x, y, false);
    case OP_EQUAL: return x == y ? 1 : 0;
    case OP_LESS: return int_less(x, y) ? 1 : 0;
    case OP_LESS_EQUAL: return int_less(y, x) ? 0 : 1;
    case OP_GREATER: return int_less(y, x) ? 1 : 0;
    case OP_GREATER_EQUAL: return int_less(x, y) ? 0 : 1;
    case OP_AND: return (x != 0 && y != 0) ? 1 : 0;
    case OP_OR: return (x != 0 || y != 0) ? 1 : 0;
    case OP_XOR: return ((x != 0) != (y != 0)) ? 1 : 0;
    case OP_BITWISE_AND: return x & y;
    case OP_BITWISE_OR: return x | y;
    case OP_BITWISE_XOR: return x ^ y;
    default: return 0;
  }
}

bool float_compare(afp x, afp y) {
  switch (kOp) {
    case OP_EQUAL: return x == y;
    case OP_LESS: return x < y;
    case OP_LESS_EQUAL: return x <= y;
    case OP_GREATER: return x > y;
    case OP_GREATER_EQUAL: return x >= y;
    default: return false;
  }
}

afp float_op(afp x, afp y) {
  switch (kOp) {
    case OP_ADD: return x + y;
    case OP_SUB: return x - y;
    case OP_MUL: return x * y;
    case OP_DIV: return vkg_quotient(x, y);
    case OP_POW: return vkg_pow(x, y);
    case OP_MOD:
    case OP_FMOD: return vkg_fmod(x, y);
    case OP_MAX: return isnan(x) ? x : isnan(y) ? y : (x < y ? y : x);
    case OP_MIN: return isnan(x) ? x : isnan(y) ? y : (y < x ? y : x);
    case OP_MEAN: return (x + y) / afp(params.count);
    case OP_FIRST: return x;
    case OP_PRELU: return x < afp(0) ? y * x : x;
    default: return afp(0);
  }
}

// A chained op (mode kChain or kChain2, op kChainOp or kChain2Op) applied to the result v of an
// element (dv: the operand's element).
afp chain_step(uint mode, uint op, afp v, afp dv) {
  if (mode == 0) return v;
  const afp x = mode == 1 ? v : dv, y = mode == 1 ? dv : v;
  switch (op) {
    case OP_ADD: return x + y;
    case OP_SUB: return x - y;
    case OP_MUL: return x * y;
    case OP_DIV: return vkg_quotient(x, y);
    default: return v;
  }
}

afp chained(afp v, afp dv, afp ev) {
  return chain_step(kChain2, kChain2Op, chain_step(kChain, kChainOp, v, dv), ev);
}

// The offset in an upsampled chained operand (dims [outer..., H, W]) of output element e.
uint upsampled_offset(uint e) {
  const uint w_count = params.dims[kRank - 1], h_count = params.dims[kRank - 2];
  const uint rest = vkg_div(e, w_count), w = e - rest * w_count;
  const uint outer = vkg_div(rest, h_count), h = rest - outer * h_count;
  return (outer * (h_count / kUpH) + h / kUpH) * (w_count / kUpW) + w / kUpW;
}

// The offset of output element e in a chained operand of layout l.
uint chained_offset(uint l, uint e) {
  return l == LAYOUT_SINGLE ? 0 : l == LAYOUT_UPSAMPLE ? upsampled_offset(e) : e;
}

// Chained operand D or E of output element e (af and bf: A's and B's element there).
afp d_float(uint e, afp af, afp bf) {
  if (kChain == 0) return afp(0);
  if (kDLayout == LAYOUT_AS_A || kDLayout == LAYOUT_AS_B) return kDLayout == LAYOUT_AS_A ? af : bf;
  return d_at(chained_offset(kDLayout, e));
}
afp e_float(uint e, afp af, afp bf) {
  if (kChain2 == 0) return afp(0);
  if (kELayout == LAYOUT_AS_A || kELayout == LAYOUT_AS_B) return kELayout == LAYOUT_AS_A ? af : bf;
  return e_at(chained_offset(kELayout, e));
}

// The output element of one pair of operands, as an int (int output) or afp.
int result_int(afp xf, afp yf, int xi, int yi) {
  if (kIntMath != 0) return int_op(xi, yi);
  if (kCompare) return float_compare(xf, yf) ? 1 : 0;
  return vkg_float_to_int(float(float_op(xf, yf)), kIntKind);
}

afp a_float(uint o) { return kAInt != 0 ? afp(vkg_int_to_float(a_int_at(o), kIntKind)) : a_at(o); }
afp b_float(uint o) { return kBInt != 0 ? afp(float(b_int_at(o))) : b_at(o); }
int a_int(uint o) { return kAInt != 0 ? a_int_at(o) : 0; }
int b_int(uint o) { return kBInt != 0 ? b_int_at(o) : 0; }

void element(uint e) {
  uint oa, ob;
  offsets(e, oa, ob);
  if (kOutInt != 0) {
    ci[e] = result_int(kIntMath != 0 ? afp(0) : a_float(oa), kIntMath != 0 ? afp(0) : b_float(ob), a_int(oa),
                       b_int(ob));
  } else {
    const afp af = a_float(oa), bf = b_float(ob);
    c_put(e, vkg_epilogue(chained(float_op(af, bf), d_float(e, af, bf), e_float(e, af, bf))));
  }
}

// Four consecutive elements of a row of an upsampled operand (float) from its offset o of the
// first (its w a multiple of 4): with kUpW 1, 2 or a multiple of 4, one or two loads.
#define VKG_UPSAMPLED4(name, at, at4)                                                      \
  afp4 name(uint o, uint e) {                                                              \
    if (kUpW == 1) return at4(o / 4);                                                      \
    if (kUpW == 2) {                                                                       \
      const afp v0 = at(o), v1 = at(o + 1);                                                \
      return afp4(v0, v0, v1, v1);                                                         \
    }                                                                                      \
    if (kUpW % 4 == 0) return afp4(at(o));                                                 \
    afp4 r;                                                                                \
    const uint w = e % params.dims[kRank - 1];                                             \
    for (uint k = 0; k < 4; ++k) r[k] = at(o + (w + k) / kUpW - w / kUpW);                 \
    return r;                                                                              \
  }
VKG_UPSAMPLED4(a_up4, a_at, a4_at)
VKG_UPSAMPLED4(b_up4, b_at, b4_at)
VKG_UPSAMPLED4(d_up4, d_at, d4_at)
VKG_UPSAMPLED4(e_up4, e_at, e4_at)

// The chained operands of output elements e .. e + 3 (e % 4 == 0, all in one row); xf and yf: A's
// and B's.
afp4 d_float4(uint e, afp4 xf, afp4 yf) {
  if (kChain == 0) return afp4(0);
  if (kDLayout == LAYOUT_AS_A || kDLayout == LAYOUT_AS_B) return kDLayout == LAYOUT_AS_A ? xf : yf;
  if (kDLayout == LAYOUT_SINGLE) return afp4(d_at(0));
  if (kDLayout == LAYOUT_UPSAMPLE) return d_up4(upsampled_offset(e), e);
  return d4_at(e / 4);
}
afp4 e_float4(uint e, afp4 xf, afp4 yf) {
  if (kChain2 == 0) return afp4(0);
  if (kELayout == LAYOUT_AS_A || kELayout == LAYOUT_AS_B) return kELayout == LAYOUT_AS_A ? xf : yf;
  if (kELayout == LAYOUT_SINGLE) return afp4(e_at(0));
  if (kELayout == LAYOUT_UPSAMPLE) return e_up4(upsampled_offset(e), e);
  return e4_at(e / 4);
}

// The operands of output elements e .. e + 3 (e % 4 == 0, all in one row), as ints (integer
// inputs) and as afp.
void operands4(uint e, out ivec4 xi, out ivec4 yi, out afp4 xf, out afp4 yf) {
  uint oa, ob;
  offsets(e, oa, ob);
  // Known rows take one kind of load: lavapipe runs both sides of a runtime choice.
  const bool a_row = kALayout == LAYOUT_IDENTITY || kALayout == LAYOUT_ROWS ||
                     (kALayout == LAYOUT_STRIDED && params.stride_a[kRank - 1] == 1);
  const bool b_row = kBLayout == LAYOUT_IDENTITY || kBLayout == LAYOUT_ROWS ||
                     (kBLayout == LAYOUT_STRIDED && params.stride_b[kRank - 1] == 1);
  xi = ivec4(0), yi = ivec4(0);
  xf = afp4(0), yf = afp4(0);
  if (kAInt != 0) {
    xi = a_row ? a_int4_at(oa / 4) : ivec4(a_int_at(oa));
    if (kIntMath == 0) {
      for (int k = 0; k < 4; ++k) xf[k] = afp(vkg_int_to_float(xi[k], kIntKind));
    }
  } else if (kALayout == LAYOUT_UPSAMPLE) {
    xf = a_up4(oa, e);
  } else {
    xf = a_row ? a4_at(oa / 4) : afp4(a_at(oa));
  }
  if (kBInt != 0) {
    yi = b_row ? b_int4_at(ob / 4) : ivec4(b_int_at(ob));
    if (kIntMath == 0) yf = afp4(yi);
  } else if (kBLayout == LAYOUT_UPSAMPLE) {
    yf = b_up4(ob, e);
  } else {
    yf = b_row ? b4_at(ob / 4) : afp4(b_at(ob));
  }
}

// The float results of output elements e .. e + 3 (kOutInt == 0).
afp4 float4(uint e) {
  ivec4 xi, yi;
  afp4 xf, yf;
  operands4(e, xi, yi, xf, yf);
  const afp4 dv = d_float4(e, xf, yf), ev = e_float4(e, xf, yf);
  afp4 r;
  for (int k = 0; k < 4; ++k) r[k] = vkg_epilogue(chained(float_op(xf[k], yf[k]), dv[k], ev[k]));
  return r;
}

// Output elements e .. e + 3 (e % 4 == 0, all in one row).
void vector4(uint e) {
  if (kOutInt != 0) {
    ivec4 xi, yi;
    afp4 xf, yf;
    operands4(e, xi, yi, xf, yf);
    ivec4 r;
    for (int k = 0; k < 4; ++k) r[k] = result_int(xf[k], yf[k], xi[k], yi[k]);
    ci4[e / 4] = r;
  } else {
    c4_put(e / 4, float4(e));
  }
}

void main() {
  const uint i = vkg_linear_index();
  if (kVec == 8) {  // float output, n % 8 == 0 in rows of 8
    if (i >= params.n / 8) return;
#ifdef VKG_TEXEL_READS
    c8_put(i, float4(8 * i), float4(8 * i + 4));  // one store of eight
#else
    vector4(8 * i);  // the storage-buffer build a fused reformat switches to: two vec4 stores
    vector4(8 * i + 4);
#endif
    return;
  }
  if (kVec == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      vector4(i * 4);
      return;
    }
    const uint e = n4 * 4 + (i - n4);
    if (e < params.n) element(e);
  } else if (i < params.n) {
    element(i);
  }
}
