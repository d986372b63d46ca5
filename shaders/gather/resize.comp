// vkgraphy-variants: f32 f16 f16acc32
// Resize/Upsample, any mode, from per-axis tap tables built at build time
// (runtime/tactics/gather.cpp): every output coordinate along axis d maps to
// up to kTaps input coordinates with weights (nearest 1, linear 2, cubic 4), or
// to "outside" (tf_crop_and_resize: the output is the extrapolation value).
// An output element is the weighted sum over the product of its axes' taps.
// One invocation per output element.
// Bindings: 0 = X, 1 = out,
//   2 = taps (int32): [rank] output sizes, [rank] first entry of each axis,
//       then entries of kTaps + 1 ints: tap count (0: outside), then the taps'
//       input offsets (input coordinate * input stride of the axis),
//   3 = weights (float32): kTaps per entry.
//   Entry (d, o) of output coordinate o along axis d is first[d] + o.
// Push constants: n (output elements), rank (<= 8), extrapolation: the bits of
//   the value in out's storage for the f32 variant (float32 or int32), else of
//   the float32 value.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kTaps              taps per entry: 1, 2 or 4
//   2 kNearest           1: copy the single tap's element bit-exactly (any
//                        storage in the f32 variant); 0: interpolate (float data)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const uint kTaps = 1;
layout(constant_id = 2) const uint kNearest = 1;
const uint kMaxRank = 8;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint extrapolation;
} params;

layout(binding = 0) readonly buffer X { melem x[]; };
layout(binding = 0) readonly buffer XF { sfp xf[]; };
layout(binding = 1) writeonly buffer Out { melem out_[]; };
layout(binding = 1) writeonly buffer OutF { sfp outf[]; };
layout(binding = 2) readonly buffer Taps { int taps[]; };
layout(binding = 3) readonly buffer Weights { float weights[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint rank = params.rank;
  const uint entries = 2 * rank;  // where the entries start in `taps`
  uint entry[kMaxRank];
  uint count[kMaxRank];
  uint pick[kMaxRank];
  uint rem = e;
  bool outside = false;
  for (uint d = rank; d-- > 0;) {
    const uint size = uint(taps[d]);
    entry[d] = uint(taps[rank + d]) + rem % size;
    rem /= size;
    count[d] = uint(taps[entries + entry[d] * (kTaps + 1)]);
    pick[d] = 0;
    outside = outside || count[d] == 0;
  }
  if (outside) {
#if defined(VKG_PRECISION_F32)
    out_[e] = params.extrapolation;
#else
    out_[e] = melem(uintBitsToFloat(params.extrapolation));
#endif
    return;
  }
  if (kNearest == 1) {
    uint offset = 0;
    for (uint d = 0; d < rank; ++d) offset += uint(taps[entries + entry[d] * (kTaps + 1) + 1]);
    out_[e] = x[offset];
    return;
  }
  afp sum = afp(0);
  bool more = true;
  while (more) {
    afp weight = afp(1);
    uint offset = 0;
    for (uint d = 0; d < rank; ++d) {
      offset += uint(taps[entries + entry[d] * (kTaps + 1) + 1 + pick[d]]);
      weight *= afp(weights[entry[d] * kTaps + pick[d]]);
    }
    sum += weight * sfp2afp(xf[offset]);
    // Next combination of taps, the last axis fastest.
    more = false;
    for (uint d = rank; d-- > 0;) {
      if (++pick[d] < count[d]) {
        more = true;
        break;
      }
      pick[d] = 0;
    }
  }
  outf[e] = afp2sfp(sum);
}
