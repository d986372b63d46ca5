// vkgraphy-variants: f32 f16acc32
// LRN, one invocation per element: y = x / (bias + alpha / size * s)^beta, where s sums
// x^2 over the channels c - before .. c + after (clipped to the tensor) of the element's
// channel c, channels on axis 1 of [N, C, inner].
// Bindings: 0 = X, 1 = Y.
// Push constants: n (elements), channels, inner (elements per channel, at least 1),
// before, after (the window around c), alpha / size, beta, bias (float).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint channels;
  uint inner;
  uint before;
  uint after;
  float alpha_over_size;
  float beta;
  float bias;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint c = (e / params.inner) % params.channels;
  const uint first = c >= params.before ? c - params.before : 0u;
  const uint last = min(params.channels - 1u, c + params.after);
  const uint base = e - c * params.inner;
  float sum = 0.0;
  for (uint j = first; j <= last; ++j) {
    const float v = float(x[base + j * params.inner]);
    sum += v * v;
  }
  const float v = float(x[e]);
  y[e] = sfp(v / pow(params.bias + params.alpha_over_size * sum, params.beta));
}
