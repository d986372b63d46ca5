// Helpers shared by the elementwise shaders: integer kinds (how an int32
// device value stands for an ONNX integer type), float -> integer conversion,
// and float functions GLSL lacks or leaves undefined where ONNX is not (NaN,
// infinities, log1p/expm1 accuracy near zero). Include after precision.glsl.
#ifndef VKG_ELEMENTWISE_MATH_GLSL
#define VKG_ELEMENTWISE_MATH_GLSL

// Integer kinds (runtime/tactics/elementwise.cpp: IntKind). Every integer and
// bool tensor is int32 on the device; the kind says how results wrap.
#define KIND_I32 0   // int32 and int64 (no wrap: the device holds 32 bits)
#define KIND_I8 1
#define KIND_I16 2
#define KIND_U8 3
#define KIND_U16 4
#define KIND_U32 5   // uint32 held as the int32 of the same bits
#define KIND_BOOL 6  // 0 or 1

// v wrapped into the range of `kind`, like a C++ conversion to that type.
int vkg_wrap_int(int v, uint kind) {
  switch (kind) {
    case KIND_I8: return (v << 24) >> 24;
    case KIND_I16: return (v << 16) >> 16;
    case KIND_U8: return v & 0xff;
    case KIND_U16: return v & 0xffff;
    case KIND_BOOL: return v != 0 ? 1 : 0;
    default: return v;
  }
}

bool vkg_is_unsigned_kind(uint kind) { return kind == KIND_U8 || kind == KIND_U16 || kind == KIND_U32; }

// Float -> integer of `kind`: truncation toward zero, saturating at the type's
// range, NaN -> 0 (the reference's float_to_int); bool: v != 0.
int vkg_float_to_int(float v, uint kind) {
  if (kind == KIND_BOOL) return v != 0.0 ? 1 : 0;
  if (isnan(v)) return 0;
  float lo = -2147483648.0, hi = 2147483647.0;
  int ilo = int(0x80000000u), ihi = 0x7fffffff;
  switch (kind) {
    case KIND_I8: lo = -128.0; hi = 127.0; ilo = -128; ihi = 127; break;
    case KIND_I16: lo = -32768.0; hi = 32767.0; ilo = -32768; ihi = 32767; break;
    case KIND_U8: lo = 0.0; hi = 255.0; ilo = 0; ihi = 255; break;
    case KIND_U16: lo = 0.0; hi = 65535.0; ilo = 0; ihi = 65535; break;
    case KIND_U32: lo = 0.0; hi = 4294967295.0; ilo = 0; ihi = -1; break;
    default: break;
  }
  if (v >= hi) return ihi;
  if (v <= lo) return ilo;
  return kind == KIND_U32 ? int(uint(v)) : int(v);
}

// The int32 device value of an integer of `kind` as a float.
float vkg_int_to_float(int v, uint kind) { return kind == KIND_U32 ? float(uint(v)) : float(v); }

afp vkg_nan() { return afp(uintBitsToFloat(0x7fc00000u)); }
afp vkg_inf() { return afp(uintBitsToFloat(0x7f800000u)); }

// log(1 + x), accurate near 0.
afp vkg_log1p(afp x) {
  const afp u = afp(1) + x;
  if (u == afp(1)) return x;
  return log(u) * (x / (u - afp(1)));
}

// exp(x) - 1, accurate near 0 (Kahan).
afp vkg_expm1(afp x) {
  const afp u = exp(x);
  if (u == afp(1)) return x;
  const afp um1 = u - afp(1);
  if (um1 == afp(-1)) return afp(-1);
  if (isinf(u)) return u;
  return um1 * (x / log(u));
}

afp vkg_tanh(afp x) {
  if (isnan(x)) return x;
  const afp t = vkg_expm1(afp(-2) * abs(x));
  const afp r = -t / (afp(2) + t);
  return x < afp(0) ? -r : r;
}

afp vkg_sinh(afp x) {
  const afp ax = abs(x);
  const afp u = vkg_expm1(ax);
  afp r = afp(0.5) * (u + u / (u + afp(1)));
  if (isinf(u)) r = u;
  return x < afp(0) ? -r : r;
}

afp vkg_cosh(afp x) {
  const afp e = exp(abs(x));
  if (isinf(e)) return e;
  return afp(0.5) * (e + afp(1) / e);
}

afp vkg_asinh(afp x) {
  const afp ax = abs(x);
  afp r;
  if (ax > afp(4096)) {
    r = log(ax) + afp(0.69314718055994530942);
  } else {
    r = vkg_log1p(ax + ax * ax / (afp(1) + sqrt(afp(1) + ax * ax)));
  }
  return x < afp(0) ? -r : r;
}

afp vkg_acosh(afp x) {
  if (x < afp(1)) return vkg_nan();
  if (x > afp(4096)) return log(x) + afp(0.69314718055994530942);
  const afp t = x - afp(1);
  return vkg_log1p(t + sqrt(afp(2) * t + t * t));
}

afp vkg_atanh(afp x) {
  const afp ax = abs(x);
  if (ax > afp(1)) return vkg_nan();
  if (ax == afp(1)) return x < afp(0) ? -vkg_inf() : vkg_inf();
  const afp r = afp(0.5) * vkg_log1p(afp(2) * ax / (afp(1) - ax));
  return x < afp(0) ? -r : r;
}

// asin and acos through atan (more accurate than lavapipe's asin).
afp vkg_asin(afp x) {
  if (abs(x) > afp(1)) return vkg_nan();
  return atan(x, sqrt((afp(1) - x) * (afp(1) + x)));
}

afp vkg_acos(afp x) {
  if (abs(x) > afp(1)) return vkg_nan();
  return atan(sqrt((afp(1) - x) * (afp(1) + x)), x);
}

afp vkg_log(afp x) {
  if (x < afp(0)) return vkg_nan();
  if (x == afp(0)) return -vkg_inf();
  return log(x);
}

afp vkg_sqrt(afp x) {
  if (x < afp(0)) return vkg_nan();
  return sqrt(x);
}

// erf: a Taylor series near 0, else 1 - erfc with Numerical Recipes' erfc
// (fractional error below 1.2e-7).
afp vkg_erf(afp x) {
  if (isnan(x)) return x;
  const afp z = abs(x);
  if (z < afp(0.5)) {
    const afp z2 = x * x;
    return x * (afp(1.1283791670955126) +
                z2 * (afp(-0.37612638903183754) +
                      z2 * (afp(0.11283791670955126) +
                            z2 * (afp(-0.026866170645131252) +
                                  z2 * (afp(0.0052239776254421878) + z2 * afp(-0.00085483270234508384))))));
  }
  if (z > afp(6)) return x < afp(0) ? afp(-1) : afp(1);
  const afp t = afp(1) / (afp(1) + afp(0.5) * z);
  const afp poly =
      afp(-1.26551223) +
      t * (afp(1.00002368) +
           t * (afp(0.37409196) +
                t * (afp(0.09678418) +
                     t * (afp(-0.18628806) +
                          t * (afp(0.27886807) +
                               t * (afp(-1.13520398) +
                                    t * (afp(1.48851587) + t * (afp(-0.82215223) + t * afp(0.17087277)))))))));
  const afp erfc = t * exp(-z * z + poly);
  return x < afp(0) ? erfc - afp(1) : afp(1) - erfc;
}

// x^y with C's pow semantics: pow(x, 0) = 1, pow(1, y) = 1, a negative base
// needs an integer exponent (else NaN), pow(0, y < 0) = inf. Small integer
// exponents by repeated squaring (exact as multiplication).
afp vkg_pow(afp x, afp y) {
  if (y == afp(0) || x == afp(1)) return afp(1);
  if (isnan(x) || isnan(y)) return vkg_nan();
  const bool y_int = y == trunc(y);
  const bool y_odd = y_int && abs(y) < afp(16777216) && (int(abs(y)) & 1) == 1;
  if (x < afp(0) && !y_int && !isinf(x)) return vkg_nan();
  const afp ax = abs(x);
  afp r;
  if (ax == afp(0)) {
    r = y > afp(0) ? afp(0) : vkg_inf();
  } else if (isinf(ax)) {
    r = y > afp(0) ? vkg_inf() : afp(0);
  } else if (y_int && abs(y) <= afp(64)) {
    uint e = uint(abs(y));
    afp f = ax;
    r = afp(1);
    while (e != 0u) {
      if ((e & 1u) != 0u) r *= f;
      f *= f;
      e >>= 1;
    }
    if (y < afp(0)) r = afp(1) / r;
  } else {
    r = pow(ax, y);
  }
  return (x < afp(0) && y_odd) ? -r : r;
}

// C's fmod: the remainder of x / y with the sign of x.
afp vkg_fmod(afp x, afp y) {
  if (isinf(y) && !isinf(x) && !isnan(x)) return x;
  const afp ay = abs(y);
  const afp ax = abs(x);
  afp r = ax - trunc(ax / ay) * ay;
  if (r < afp(0)) r += ay;
  if (r >= ay) r -= ay;
  return x < afp(0) ? -r : r;
}

// a / b rounded as an IEEE division: the driver's quotient q (Vulkan allows it 2.5 ulp), corrected
// once by its residual a - q * b, which Dekker's product computes exactly from correctly rounded
// products and sums alone (GLSL's fma() need not be fused in Vulkan: NVIDIA's was not, and a
// halfway quotient rounded the wrong way in DynamicQuantizeLinear).
float vkg_exact_div(float a, float b) {
  precise float q = a / b;
  if (isinf(q) || isnan(q) || b == 0.0 || abs(q) > 1.0e30 || abs(b) > 1.0e30) return q;
  precise float p = q * b;
  precise float qc = 4097.0 * q;
  precise float qh = qc - (qc - q);
  precise float ql = q - qh;
  precise float bc = 4097.0 * b;
  precise float bh = bc - (bc - b);
  precise float bl = b - bh;
  precise float e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;  // q * b == p + e exactly
  precise float r = (a - p) - e;
  return q + r / b;
}

// Div as ONNX's reference computes it, correctly rounded (in fp16 arithmetic: the fp32 quotient,
// rounded once more), rather than within the 2.5 ulp Vulkan allows a driver's division: a quotient
// that Round or Cast follows (DynamicQuantizeLinear's expanded form) must not land a step away.
afp vkg_quotient(afp x, afp y) { return afp(vkg_exact_div(float(x), float(y))); }

#endif  // VKG_ELEMENTWISE_MATH_GLSL
