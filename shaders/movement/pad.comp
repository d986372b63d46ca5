// vkgraphy-variants: f32 f16
// Pad in modes constant, reflect, edge and wrap, negative pads (crops)
// included; one output element per invocation. Along axis d the output index o
// reads the kept (cropped) input index p = o - pad_lo; outside [0, kept) it
// takes the fill value (constant) or folds p back into [0, kept) (the others).
// Bindings: 0 = src, 1 = dst, 2 = fill (one element: the constant value),
// 3 = meta (int32, 5 per axis: out_dim, kept, pad_lo, crop_lo, src_stride; at
// least one element even for rank 0).
// Push constants: n, the output element count; rank; mode (0 constant,
// 1 reflect, 2 edge, 3 wrap). Modes other than constant need kept > 0.
// Specialization constant 0 (local_size_x_id): workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "movement/element.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint mode;
} params;

layout(binding = 0) readonly buffer Src { elem_t src[]; };
layout(binding = 1) writeonly buffer Dst { elem_t dst[]; };
layout(binding = 2) readonly buffer Fill { elem_t fill[]; };
layout(binding = 3) readonly buffer Meta { int meta[]; };

int fold(int p, int kept) {
  if (params.mode == 2) return clamp(p, 0, kept - 1);
  if (params.mode == 3) return vkg_floor_mod(p, kept);
  if (kept == 1) return 0;
  const int period = 2 * (kept - 1);
  const int m = vkg_floor_mod(p, period);
  return m < kept ? m : period - m;
}

void main() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  uint rest = i;
  int s = 0;
  for (int d = int(params.rank) - 1; d >= 0; --d) {
    const uint out_dim = uint(meta[5 * d]);
    const int kept = meta[5 * d + 1];
    int p = int(rest % out_dim) - meta[5 * d + 2];
    rest /= out_dim;
    if (p < 0 || p >= kept) {
      if (params.mode == 0) {
        dst[i] = fill[0];
        return;
      }
      p = fold(p, kept);
    }
    s += (meta[5 * d + 3] + p) * meta[5 * d + 4];
  }
  dst[i] = src[uint(s)];
}
