// vkgraphy-variants: f32 f16 f16acc32
// Windowed pooling (MaxPool, AveragePool, LpPool), one invocation per output.
// X is N x C x D0 x D1 x D2 (inputs of fewer spatial dims are given leading
// dims of size 1), one "plane" per (n, c). Dispatch with linear_groups(total).
// Bindings:
//   0 = X (sfp, or int32 when kInteger)
//   1 = Y (same element type as X), total elements
//   2 = Indices (int32, MaxPool's second output), written only when kIndices;
//       bind Y again when the layer has no Indices output.
// Push constants (23 words, see pool/pool_common.glsl): total outputs,
//   the value of an empty max window, and per spatial dim: input size, output
//   size, kernel, stride, dilation, begin and end padding.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kMode              0 max, 1 average, 2 Lp norm
//   2 kP                 Lp norm order (kMode 2)
//   3 kInteger           1: X and Y are int32 (max only)
//   4 kIndices           1: write the argmax's flat index to binding 2
//   5 kColumnMajor       1: Indices count the spatial offset column-major (storage_order 1)
//   6 kCountIncludePad   1: averages divide by the window size inside the padded input
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

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

void main() {
  const uint o = vkg_linear_index();
  if (o >= params.total) return;
  int rest = int(o);
  const int ox = rest % params.out_dims[2];
  rest /= params.out_dims[2];
  const int oy = rest % params.out_dims[1];
  rest /= params.out_dims[1];
  const int oz = rest % params.out_dims[0];
  const int plane = rest / params.out_dims[0];
  const TapRange rz = tap_range(0, oz), ry = tap_range(1, oy), rx = tap_range(2, ox);

  if (kMode == kModeMax) {
    bool any = false;
    afp best = afp(0);
    int best_i = 0;
    ivec3 at = ivec3(0);
    for (int kz = rz.kmin; kz < rz.kmax; ++kz) {
      const int pz = rz.start + kz * params.dilations[0];
      for (int ky = ry.kmin; ky < ry.kmax; ++ky) {
        const int py = ry.start + ky * params.dilations[1];
        const int row = ((plane * params.in_dims[0] + pz) * params.in_dims[1] + py) * params.in_dims[2];
        for (int kx = rx.kmin; kx < rx.kmax; ++kx) {
          const int px = rx.start + kx * params.dilations[2];
          if (kInteger == 1) {
            const int v = xi[row + px];
            if (!any || v > best_i) {
              best_i = v;
              at = ivec3(pz, py, px);
            }
          } else {
            const afp v = sfp2afp(x[row + px]);
            if (!any || v > best) {
              best = v;
              at = ivec3(pz, py, px);
            }
          }
          any = true;
        }
      }
    }
    if (kInteger == 1) {
      yi[o] = any ? best_i : int(params.empty_bits);
    } else {
      y[o] = any ? afp2sfp(best) : empty_float_value();
    }
    if (kIndices == 1) indices[o] = argmax_index(plane, at);
  } else {
    afp acc = afp(0);
    for (int kz = rz.kmin; kz < rz.kmax; ++kz) {
      const int pz = rz.start + kz * params.dilations[0];
      for (int ky = ry.kmin; ky < ry.kmax; ++ky) {
        const int py = ry.start + ky * params.dilations[1];
        const int row = ((plane * params.in_dims[0] + pz) * params.in_dims[1] + py) * params.in_dims[2];
        for (int kx = rx.kmin; kx < rx.kmax; ++kx) {
          acc += lp_term(sfp2afp(x[row + rx.start + kx * params.dilations[2]]));
        }
      }
    }
    y[o] = afp2sfp(finish_mean_or_norm(acc, rz, ry, rx));
  }
}
