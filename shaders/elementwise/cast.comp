// vkgraphy-variants: f32 f16
// Y = cast(X) over n elements, between the device storage forms of float, int
// and bool tensors, with the rounding, truncation and wrapping of the target
// ONNX type (Cast, CastLike).
// Bindings: 0 = X, 1 = Y: float storage (sfp) or int32, as kFrom / kTo say.
// Push constant: n, the element count.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVec    1: one element per invocation; 4: one vec4 per invocation, the
//             n % 4 tail elements by one invocation each after the n / 4 vector
//             ones. Dispatch n / 4 + n % 4 invocations.
//   2 kFrom   FROM_* below: what X holds
//   3 kTo     TO_* below: what Y holds and how the value is rounded into it
//   4 kKind   the KIND_* (math.glsl) of an integer X (FROM_INT) or, for TO_INT,
//             of Y
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "elementwise/math.glsl"

#define FROM_FLOAT 0  // float storage
#define FROM_INT 1    // int32 storage of an integer or bool of kind kKind

#define TO_FLOAT 0     // float storage, no extra rounding (float32, or any float type in fp16 storage)
#define TO_FLOAT16 1   // float32 storage of a float16 value (rounded through fp16)
#define TO_BFLOAT16 2  // float storage of a bfloat16 value (rounded through bf16)
#define TO_INT 3       // int32 storage of an integer of kind kKind (truncating, saturating floats; wrapping ints)
#define TO_BOOL 4      // int32 storage of x != 0

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec = 1;
layout(constant_id = 2) const uint kFrom = 0;
layout(constant_id = 3) const uint kTo = 0;
layout(constant_id = 4) const uint kKind = 0;

layout(push_constant) uniform Params { uint n; } params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer X4 { sfp4 x4[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 0) readonly buffer XI4 { ivec4 xi4[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer Y4 { sfp4 y4[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };
layout(binding = 1) writeonly buffer YI4 { ivec4 yi4[]; };

const bool kToInt = kTo == TO_INT || kTo == TO_BOOL;

float round_to_bfloat16(float v) {
  uint bits = floatBitsToUint(v);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    bits = (bits | 0x00400000u) & 0xffff0000u;
  } else {
    bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  }
  return uintBitsToFloat(bits);
}

// A float value converted to the float output type.
sfp to_float(float v) {
  switch (kTo) {
    case TO_FLOAT16: return sfp(unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x);
    case TO_BFLOAT16: return sfp(round_to_bfloat16(v));
    default: return sfp(v);
  }
}

int convert_to_int(float f, int i) {
  if (kFrom == FROM_INT) return kTo == TO_BOOL ? (i != 0 ? 1 : 0) : vkg_wrap_int(i, kKind);
  return vkg_float_to_int(f, kTo == TO_BOOL ? KIND_BOOL : kKind);
}

float int_as_float(int i) { return vkg_int_to_float(i, kKind); }

void element(uint e) {
  if (kToInt) {
    yi[e] = convert_to_int(kFrom == FROM_INT ? 0.0 : float(x[e]), kFrom == FROM_INT ? xi[e] : 0);
  } else if (kFrom == FROM_FLOAT && kTo == TO_FLOAT) {
    y[e] = x[e];
  } else {
    y[e] = to_float(kFrom == FROM_INT ? int_as_float(xi[e]) : float(x[e]));
  }
}

void vector4(uint i) {
  if (kToInt) {
    const vec4 f = kFrom == FROM_INT ? vec4(0) : vec4(x4[i]);
    const ivec4 v = kFrom == FROM_INT ? xi4[i] : ivec4(0);
    yi4[i] = ivec4(convert_to_int(f.x, v.x), convert_to_int(f.y, v.y), convert_to_int(f.z, v.z),
                   convert_to_int(f.w, v.w));
  } else if (kFrom == FROM_FLOAT && kTo == TO_FLOAT) {
    y4[i] = x4[i];
  } else {
    vec4 f;
    if (kFrom == FROM_INT) {
      const ivec4 v = xi4[i];
      f = vec4(int_as_float(v.x), int_as_float(v.y), int_as_float(v.z), int_as_float(v.w));
    } else {
      f = vec4(x4[i]);
    }
    y4[i] = sfp4(to_float(f.x), to_float(f.y), to_float(f.z), to_float(f.w));
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
