// vkgraphy-variants: f32 f16
// Resize/Upsample (nearest) by whole factors, when every axis maps output
// coordinate o to input coordinate o / factor (checked at build time against
// the tap tables of resize.comp). One invocation per input element of each
// output row: it reads the element once and writes its `fw` copies along the
// last axis (fw: the last axis' factor). Bit-exact copies.
// Bindings: 0 = X, 1 = out,
//   2 = meta (int32): [rank] run sizes (output sizes, the last one replaced by
//       the input's), [rank] factors, [rank] input strides, [rank] output strides.
// Push constants: n (runs), rank, fw.
// Specialization constants: 0 (local_size_x_id) workgroup size.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint fw;
} params;

layout(binding = 0) readonly buffer X { melem x[]; };
layout(binding = 1) writeonly buffer Out { melem out_[]; };
layout(binding = 2) readonly buffer Meta { int meta[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= params.n) return;
  const uint rank = params.rank;
  uint rem = e;
  uint src = 0, dst = 0;
  for (uint d = rank; d-- > 0;) {
    const uint size = uint(meta[d]);
    const uint c = rem % size;
    rem /= size;
    if (d == rank - 1) {
      src += c;
      dst += c * params.fw;
    } else {
      src += c / uint(meta[rank + d]) * uint(meta[2 * rank + d]);
      dst += c * uint(meta[3 * rank + d]);
    }
  }
  const melem v = x[src];
  for (uint j = 0; j < params.fw; ++j) out_[dst + j] = v;
}
