// vkgraphy-variants: f32 f16 f16acc32
// Global pooling (GlobalMaxPool, GlobalAveragePool, GlobalLpPool), one
// workgroup per plane (n, c): neighbouring invocations read neighbouring
// elements, then invocation 0 combines the partials from shared memory.
// Dispatch linear_groups(planes * local size, local size): workgroup w (linear
// over x and y) reduces plane w.
// Bindings, push constants and specialization constants 1-3: as pool/global_row.comp.
// Specialization constant 0 (local_size_x_id): the workgroup size, at most 64.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"  // vkg_workgroup_size_x

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = 0;
layout(constant_id = 2) const uint kP = 2;
layout(constant_id = 3) const uint kVec4 = 0;

#include "pool/global_common.glsl"

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer X4 { sfp4 x4[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };

const uint kMaxLocalSize = 64;
shared float partial[kMaxLocalSize];  // float partials (exact for fp16 values)

void main() {
  const uint plane = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (plane >= params.planes) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint base = plane * params.plane_size;
  // Max starts from the plane's first element in every invocation: a NaN there
  // stays the result, later NaNs are skipped, as a sequential scan does.
  afp4 acc = kMode == kModeMax ? afp4(sfp2afp(x[base])) : afp4(0);
  if (kVec4 == 1) {
    const uint base4 = base / 4;
    for (uint i = lid; i < params.plane_size / 4; i += vkg_workgroup_size_x) {
      const afp4 v = sfp2afp4(x4[base4 + i]);
      acc = kMode == kModeMax ? max_keep(acc, v) : acc + lp_term4(v);
    }
  } else {
    for (uint i = lid; i < params.plane_size; i += vkg_workgroup_size_x) {
      const afp v = sfp2afp(x[base + i]);
      if (kMode == kModeMax) {
        acc.x = v > acc.x ? v : acc.x;
      } else {
        acc.x += lp_term4(afp4(v)).x;
      }
    }
  }
  if (kMode == kModeMax) {
    afp m = acc.x;
    m = acc.y > m ? acc.y : m;
    m = acc.z > m ? acc.z : m;
    m = acc.w > m ? acc.w : m;
    partial[lid] = float(m);
  } else {
    partial[lid] = float(acc.x + acc.y + acc.z + acc.w);
  }
  barrier();
  if (lid != 0) return;
  if (kMode == kModeMax) {
    afp m = afp(partial[0]);
    for (uint i = 1; i < vkg_workgroup_size_x; ++i) m = afp(partial[i]) > m ? afp(partial[i]) : m;
    y[plane] = afp2sfp(m);
  } else {
    afp sum = afp(0);
    for (uint i = 0; i < vkg_workgroup_size_x; ++i) sum += afp(partial[i]);
    y[plane] = afp2sfp(finish_mean_or_norm(sum));
  }
}
