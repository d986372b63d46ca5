// vkgraphy-variants: f32 f16 f16acc32
// Windowed pooling (MaxPool, AveragePool, LpPool) register-blocked along the
// innermost spatial dim: each invocation computes 4 neighbouring outputs of one
// row, loading the input row segment they share once per window row and
// folding each input into every output whose window holds it.
// Dispatch linear_groups(total / O2 * ceil(O2 / 4)).
// Bindings, push constants and specialization constants 0-6: as pool/window.comp.
// More specialization constants (the innermost dim's window, known at build time):
//   7 kKx        kernel size along the innermost dim
//   8 kSx        stride along the innermost dim
//   9 kDx        dilation along the innermost dim
//   10 kVecStore 1: O2 % 4 == 0, Y is written as vec4 (ivec4 for int32)
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = 0;
layout(constant_id = 2) const uint kP = 2;
layout(constant_id = 3) const uint kInteger = 0;
layout(constant_id = 4) const uint kIndices = 0;
layout(constant_id = 5) const uint kColumnMajor = 0;
layout(constant_id = 6) const uint kCountIncludePad = 0;
layout(constant_id = 7) const int kKx = 1;
layout(constant_id = 8) const int kSx = 1;
layout(constant_id = 9) const int kDx = 1;
layout(constant_id = 10) const uint kVecStore = 0;

// The input positions the 4 outputs read along the innermost dim.
const int kSegment = 3 * kSx + (kKx - 1) * kDx + 1;

#include "pool/pool_common.glsl"

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 0) readonly buffer XI { int xi[]; };
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer Y4 { sfp4 y4[]; };
layout(binding = 1) writeonly buffer YI { int yi[]; };
layout(binding = 1) writeonly buffer YI4 { ivec4 yi4[]; };
layout(binding = 2) writeonly buffer Ind { int indices[]; };

void main() {
  const int out_w = params.out_dims[2];
  const int quads = (out_w + 3) / 4;
  const uint q = vkg_linear_index();
  if (q >= params.total / uint(out_w) * uint(quads)) return;
  int rest = int(q);
  const int ox0 = (rest % quads) * 4;
  rest /= quads;
  const int oy = rest % params.out_dims[1];
  rest /= params.out_dims[1];
  const int oz = rest % params.out_dims[0];
  const int plane = rest / params.out_dims[0];
  const int o0 = ((plane * params.out_dims[0] + oz) * params.out_dims[1] + oy) * out_w + ox0;
  const TapRange rz = tap_range(0, oz), ry = tap_range(1, oy);
  const int in_w = params.in_dims[2];
  const int seg_start = ox0 * kSx - params.pads_begin[2];

  bool any[4] = bool[4](false, false, false, false);
  afp acc[4] = afp[4](afp(0), afp(0), afp(0), afp(0));
  int acc_i[4] = int[4](0, 0, 0, 0);
  ivec3 at[4] = ivec3[4](ivec3(0), ivec3(0), ivec3(0), ivec3(0));

  for (int kz = rz.kmin; kz < rz.kmax; ++kz) {
    const int pz = rz.start + kz * params.dilations[0];
    for (int ky = ry.kmin; ky < ry.kmax; ++ky) {
      const int py = ry.start + ky * params.dilations[1];
      const int row = ((plane * params.in_dims[0] + pz) * params.in_dims[1] + py) * in_w;
      // Each input of the row segment is loaded once and folded into every
      // output whose window holds it (in tap order: kx ascending with t).
      [[dont_unroll]] for (int t = 0; t < kSegment; ++t) {
        const int px = seg_start + t;
        if (px < 0 || px >= in_w) continue;
        const afp v = kInteger == 1 ? afp(0) : sfp2afp(x[row + px]);
        const int v_i = kInteger == 1 ? xi[row + px] : 0;
        for (int j = 0; j < 4; ++j) {
          const int u = t - j * kSx;  // kx * kDx for output j
          if (u < 0 || u % kDx != 0 || u / kDx >= kKx) continue;
          if (kMode == kModeMax) {
            if (kInteger == 1) {
              if (!any[j] || v_i > acc_i[j]) {
                acc_i[j] = v_i;
                at[j] = ivec3(pz, py, px);
              }
            } else {
              if (!any[j] || v > acc[j]) {
                acc[j] = v;
                at[j] = ivec3(pz, py, px);
              }
            }
            any[j] = true;
          } else {
            acc[j] += lp_term(v);
          }
        }
      }
    }
  }

  afp result[4];
  int result_i[4];
  for (int j = 0; j < 4; ++j) {
    if (kMode == kModeMax) {
      result_i[j] = any[j] ? acc_i[j] : int(params.empty_bits);
      result[j] = any[j] ? acc[j] : afp(empty_float_value());
    } else {
      result_i[j] = 0;
      result[j] = finish_mean_or_norm(acc[j], rz, ry, tap_range(2, ox0 + j));
    }
  }
  if (kVecStore == 1) {
    if (kInteger == 1) {
      yi4[o0 / 4] = ivec4(result_i[0], result_i[1], result_i[2], result_i[3]);
    } else {
      y4[o0 / 4] = afp2sfp4(afp4(result[0], result[1], result[2], result[3]));
    }
  } else {
    for (int j = 0; j < 4 && ox0 + j < out_w; ++j) {
      if (kInteger == 1) {
        yi[o0 + j] = result_i[j];
      } else {
        y[o0 + j] = afp2sfp(result[j]);
      }
    }
  }
  if (kIndices == 1) {
    for (int j = 0; j < 4 && ox0 + j < out_w; ++j) indices[o0 + j] = argmax_index(plane, at[j]);
  }
}
