// vkgraphy-variants: f32 f16 f16acc32
// BatchNormalization at inference, folded at build time into Y = X * a + b
// with one (a, b) per parameter index p = (e / inner) % count of element e:
// per channel (inner = spatial size, count = channels) or per channel and
// spatial position (inner = 1, count = channels * spatial).
// Bindings: 0 = X, 1 = the folded parameters (float32: a[0..count), then
// b[0..count)), 2 = Y.
// Push constants (3 words): n (elements), inner, count.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVec  1: one element per invocation; 4: four elements per invocation,
//           which needs inner % 4 == 0 (one parameter per vec4) or inner == 1
//           and count % 4 == 0 (four consecutive parameters). Dispatch n / 4
//           invocations (n % 4 == 0 then).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec = 1;

layout(push_constant) uniform Params {
  uint n;
  uint inner;
  uint count;
} params;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer X4 { sfp4 x4[]; };
layout(binding = 1) readonly buffer P { float p[]; };
layout(binding = 1) readonly buffer P4 { vec4 p4[]; };
layout(binding = 2) writeonly buffer Y { sfp y[]; };
layout(binding = 2) writeonly buffer Y4 { sfp4 y4[]; };

void main() {
  const uint i = vkg_linear_index();
  if (kVec == 4) {
    const uint e = i * 4;
    if (e >= params.n) return;
    const uint c = (e / params.inner) % params.count;
    afp4 a, b;
    if (params.inner == 1) {
      a = afp4(p4[c / 4]);
      b = afp4(p4[(params.count + c) / 4]);
    } else {
      a = afp4(afp(p[c]));
      b = afp4(afp(p[params.count + c]));
    }
    y4[i] = afp2sfp4(sfp2afp4(x4[i]) * a + b);
  } else {
    if (i >= params.n) return;
    const uint c = (i / params.inner) % params.count;
    y[i] = afp2sfp(sfp2afp(x[i]) * afp(p[c]) + afp(p[params.count + c]));
  }
}
