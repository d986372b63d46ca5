// Linear invocation index for dispatches whose group counts come from
// linear_groups() (runtime/engine/tactic.h): groups spread over x and y so that
// large tensors stay within the device's per-dimension group limits.
//
// Shaders including this declare `layout(local_size_x_id = 0) in;` (the
// workgroup size is specialization constant 0). The size is read through a
// plain specialization constant with the same id rather than gl_WorkGroupSize:
// glslang gives gl_WorkGroupSize its default (1, 1, 1) in code that precedes the
// local_size_x_id declaration, so an include placed above it silently computed
// wrong indices beyond the first workgroup.
#ifndef VKG_COMMON_INDEX_GLSL
#define VKG_COMMON_INDEX_GLSL

layout(constant_id = 0) const uint vkg_workgroup_size_x = 1;

uint vkg_linear_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * vkg_workgroup_size_x + gl_LocalInvocationID.x;
}

// Index division without integer division, which lavapipe runs one lane at a time (a
// Mul by a per-channel scale spent half its time dividing): through a float quotient,
// then corrected by one. Exact when x < 2^21, as the tactic declares with specialization
// constant 39 (vkg_small_indices = 1); otherwise (and by default) the integer division.
// Below 2^21 the quotient's error (float division is within 2.5 ULP in Vulkan) stays
// under one, so one correction either way suffices.
layout(constant_id = 39) const uint vkg_small_indices = 0;

uint vkg_div(uint x, uint d) {
  if (vkg_small_indices == 0) return x / d;
  uint q = uint(float(x) / float(d));
  const int r = int(x) - int(q * d);
  if (r < 0) {
    q -= 1u;
  } else if (r >= int(d)) {
    q += 1u;
  }
  return q;
}

// a mod m (in [0, m)) and floor(a / m) for m > 0 and any a, through % and / of non-negative
// operands only: GLSL leaves % of a negative operand undefined, and NVIDIA's driver (580, H200)
// computed OpSMod of a negative dividend by a divisor that is not a power of two wrongly
// (conv.transpose_gather at stride 3 failed there, 2026-11-26).
int vkg_floor_mod(int a, int m) { return a >= 0 ? a % m : m - 1 - ((-a - 1) % m); }
int vkg_floor_div(int a, int m) { return a >= 0 ? a / m : -1 - ((-a - 1) / m); }

#endif  // VKG_COMMON_INDEX_GLSL
