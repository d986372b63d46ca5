// vkgraphy-variants: f32 f16 f16acc32
// Windowed pooling (MaxPool, AveragePool, LpPool), one workgroup per output:
// the invocations split the window's taps inside the input, then invocation 0
// combines their partial results from shared memory. For large windows.
// Dispatch linear_groups(total * local size, local size): workgroup w
// (linear over x and y) computes output w.
// Bindings, push constants and specialization constants 1-6: as pool/window.comp.
// Specialization constant 0 (local_size_x_id): the workgroup size, at most 64.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"  // vkg_workgroup_size_x

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = 0;
layout(constant_id = 2) const uint kP = 2;
layout(constant_id = 3) const uint kInteger = 0;
layout(constant_id = 4) const uint kIndices = 0;
layout(constant_id = 5) const uint kColumnMajor = 0;
layout(constant_id = 6) const uint kCountIncludePad = 0;

#include "pool/pool_common.glsl"

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };
layout(binding = 2) writeonly buffer Ind { int indices[]; };

const uint kMaxLocalSize = 64;
shared float partial[kMaxLocalSize];      // float partials (exact for fp16 values)
shared int partial_i[kMaxLocalSize];      // int32 partials (kInteger)
shared int partial_tap[kMaxLocalSize];    // max: the tap of the partial maximum

void main() {
  const uint o = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (o >= params.total) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  int rest = int(o);
  const int ox = rest % params.out_dims[2];
  rest /= params.out_dims[2];
  const int oy = rest % params.out_dims[1];
  rest /= params.out_dims[1];
  const int oz = rest % params.out_dims[0];
  const int plane = rest / params.out_dims[0];
  const TapRange rz = tap_range(0, oz), ry = tap_range(1, oy), rx = tap_range(2, ox);
  // The taps inside the input form a box; tap t of the box in row-major order.
  const int nz = rz.kmax - rz.kmin, ny = ry.kmax - ry.kmin, nx = rx.kmax - rx.kmin;
  const int taps = nz * ny * nx;
  const int plane_base = plane * params.in_dims[0] * params.in_dims[1] * params.in_dims[2];

  // Every invocation scans tap 0 (the window's first tap) before its own taps,
  // with a strict comparison: ties then resolve to the first tap, and a NaN
  // first tap stays the result, as the sequential scan of the reference does.
  afp best = afp(0);
  int best_i = 0;
  int best_tap = 0;
  afp acc = afp(0);
  if (kMode == kModeMax && taps > 0) {
    const int at0 = plane_base + ((rz.start + rz.kmin * params.dilations[0]) * params.in_dims[1] +
                                  ry.start + ry.kmin * params.dilations[1]) * params.in_dims[2] +
                    rx.start + rx.kmin * params.dilations[2];
    if (kInteger == 1) {
      best_i = xi[at0];
    } else {
      best = sfp2afp(x[at0]);
    }
  }
  for (int t = int(lid); t < taps; t += int(vkg_workgroup_size_x)) {
    const int kx = rx.kmin + t % nx;
    const int ky = ry.kmin + (t / nx) % ny;
    const int kz = rz.kmin + t / (nx * ny);
    const int pz = rz.start + kz * params.dilations[0];
    const int py = ry.start + ky * params.dilations[1];
    const int px = rx.start + kx * params.dilations[2];
    const int at = plane_base + (pz * params.in_dims[1] + py) * params.in_dims[2] + px;
    if (kMode == kModeMax) {
      if (kInteger == 1) {
        const int v = xi[at];
        if (v > best_i) {
          best_i = v;
          best_tap = t;
        }
      } else {
        const afp v = sfp2afp(x[at]);
        if (v > best) {
          best = v;
          best_tap = t;
        }
      }
    } else {
      acc += lp_term(sfp2afp(x[at]));
    }
  }
  partial[lid] = kMode == kModeMax ? float(best) : float(acc);
  partial_i[lid] = best_i;
  partial_tap[lid] = best_tap;
  barrier();
  if (lid != 0) return;

  if (kMode == kModeMax) {
    int tap = partial_tap[0];
    if (kInteger == 1) {
      int m = partial_i[0];
      for (uint i = 1; i < vkg_workgroup_size_x; ++i) {
        const int v = partial_i[i];
        if (v > m || (v == m && partial_tap[i] < tap)) {
          m = v;
          tap = partial_tap[i];
        }
      }
      yi[o] = taps > 0 ? m : int(params.empty_bits);
    } else {
      afp m = afp(partial[0]);
      for (uint i = 1; i < vkg_workgroup_size_x; ++i) {
        const afp v = afp(partial[i]);
        if (v > m || (v == m && partial_tap[i] < tap)) {
          m = v;
          tap = partial_tap[i];
        }
      }
      y[o] = taps > 0 ? afp2sfp(m) : empty_float_value();
    }
    if (kIndices == 1) {
      // An empty window (taps == 0) reports input position 0 of the plane.
      const int kx = rx.kmin + tap % max(nx, 1);
      const int ky = ry.kmin + (tap / max(nx, 1)) % max(ny, 1);
      const int kz = rz.kmin + tap / max(nx * ny, 1);
      const ivec3 at = taps > 0 ? ivec3(rz.start + kz * params.dilations[0], ry.start + ky * params.dilations[1],
                                        rx.start + kx * params.dilations[2])
                                : ivec3(0);
      indices[o] = argmax_index(plane, at);
    }
  } else {
    afp sum = afp(0);
    for (uint i = 0; i < vkg_workgroup_size_x; ++i) sum += afp(partial[i]);
    y[o] = afp2sfp(finish_mean_or_norm(sum, rz, ry, rx));
  }
}
