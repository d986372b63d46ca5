// vkgraphy-variants: f32 f16
// The vector units' peak (vkgraphy_tactic_bench --peak): every invocation runs kIters steps of
// kChains independent four-wide multiply-adds, acc = acc * m + c, with m and c read from X so that
// nothing folds at compile time (m below 1: the values settle, no overflow or denormals), and
// writes the sum of its accumulators to Y. kChains * 4 * 2 floating-point operations per
// invocation and step; nothing else in the loop. Eight chains hide a GPU's latency; on a CPU
// driver, where each value of an invocation is a SIMD register of its own, eight vec4s are 32
// registers and spill (AVX2 has 16): there three are the ceiling.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kIters (a multiple of 4);
// 2 kChains (1 to 8).
// Bindings: 0 X (at least two values), 1 Y (one value per invocation).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kIters = 1024;
layout(constant_id = 2) const uint kChains = 8;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

void main() {
  const uint id = gl_GlobalInvocationID.x;
  const afp m = afp(0.5) + afp(0.25) * clamp(sfp2afp(x[0]), afp(0), afp(1));
  const afp c = sfp2afp(x[1]);
  afp4 acc[8];
  [[unroll]] for (uint i = 0; i < kChains; ++i) acc[i] = afp4(afp(id % 7u), afp(i), afp(1), afp(2));
  [[dont_unroll]] for (uint it = 0; it < kIters; it += 4) {  // four steps a pass: the loop's own work is noise
    [[unroll]] for (uint u = 0; u < 4; ++u) {
      [[unroll]] for (uint i = 0; i < kChains; ++i) acc[i] = fma(acc[i], afp4(m), afp4(c));
    }
  }
  afp4 sum = afp4(0);
  [[unroll]] for (uint i = 0; i < kChains; ++i) sum += acc[i];
  y[id] = afp2sfp(sum.x + sum.y + sum.z + sum.w);
}
