// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: X
// Global pooling (GlobalMaxPool, GlobalAveragePool, GlobalLpPool), one
// invocation per plane (n, c) scanning the plane. Dispatch linear_groups(planes).
// Bindings: 0 = X (N x C x spatial), 1 = Y (N x C x 1 ...).
// Push constants: see pool/global_common.glsl.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kMode              0 max, 1 average, 2 Lp norm
//   2 kP                 Lp norm order (kMode 2)
//   3 kVec4              1: plane_size % 4 == 0, X is read as vec4
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = 0;
layout(constant_id = 2) const uint kP = 2;
layout(constant_id = 3) const uint kVec4 = 0;

#include "pool/global_common.glsl"

VKG_INPUT(x_at, x4_at, 0, x, x4)
layout(binding = 1) writeonly buffer Y { sfp y[]; };

void main() {
  const uint plane = vkg_linear_index();
  if (plane >= params.planes) return;
  const uint base = plane * params.plane_size;
  // Max starts from the plane's first element: a NaN there stays the result,
  // later NaNs are skipped, as the reference's sequential scan does.
  afp4 acc = kMode == kModeMax ? afp4(x_at(base)) : afp4(0);
  if (kVec4 == 1) {
    const uint base4 = base / 4;
    for (uint i = 0; i < params.plane_size / 4; ++i) {
      const afp4 v = x4_at(base4 + i);
      acc = kMode == kModeMax ? max_keep(acc, v) : acc + lp_term4(v);
    }
  } else {
    for (uint i = 0; i < params.plane_size; ++i) {
      const afp4 v = afp4(x_at(base + i), afp(0), afp(0), afp(0));
      if (kMode == kModeMax) {
        acc.x = v.x > acc.x ? v.x : acc.x;
      } else {
        acc.x += lp_term4(v).x;
      }
    }
  }
  if (kMode == kModeMax) {
    // Lane order does not matter for the value of a maximum (NaNs aside, kept in lane x).
    afp m = acc.x;
    m = acc.y > m ? acc.y : m;
    m = acc.z > m ? acc.z : m;
    m = acc.w > m ? acc.w : m;
    y[plane] = afp2sfp(m);
  } else {
    y[plane] = afp2sfp(finish_mean_or_norm(acc.x + acc.y + acc.z + acc.w));
  }
}
