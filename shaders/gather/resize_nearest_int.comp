// vkgraphy-variants: f32 f16
// Resize/Upsample (nearest) by whole factors, when every axis maps output
// coordinate o to input coordinate o / factor (checked at build time against
// the tap tables of resize.comp). One invocation per kPer consecutive input
// elements of each output row: it reads each element once and writes its `fw`
// copies along the last axis (fw: the last axis' factor). Bit-exact copies.
// Bindings: 0 = X, 1 = out,
//   2 = meta (int32): [rank] run sizes (output sizes, the last one replaced by
//       the input's), [rank] factors, [rank] input strides, [rank] output strides.
// Push constants: n (input elements of all output rows), rank, fw.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kPer
// (elements per invocation, 1..8).
// Dispatch (n / W) * ceil(W / kPer) invocations (vkg_linear_index), W the
// input's last size.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPer = 4;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint fw;
} params;

layout(binding = 0) readonly buffer X { melem x[]; };
layout(binding = 1) writeonly buffer Out { melem out_[]; };
layout(binding = 2) readonly buffer Meta { int meta[]; };

void main() {
  const uint rank = params.rank;
  const uint in_w = uint(meta[rank - 1]);
  if (in_w == 0u) return;
  const uint blocks = (in_w + kPer - 1) / kPer;
  const uint i = vkg_linear_index();
  if (i >= params.n / in_w * blocks) return;
  const uint c0 = i % blocks * kPer;
  uint rem = i / blocks;
  uint src = c0, dst = c0 * params.fw;
  for (uint d = rank - 1; d-- > 0;) {
    const uint size = uint(meta[d]);
    const uint c = rem % size;
    rem /= size;
    src += c / uint(meta[rank + d]) * uint(meta[2 * rank + d]);
    dst += c * uint(meta[3 * rank + d]);
  }
  [[unroll]] for (uint k = 0; k < kPer; ++k) {
    if (c0 + k < in_w) {
      const melem v = x[src + k];
      for (uint j = 0; j < params.fw; ++j) out_[dst + k * params.fw + j] = v;
    }
  }
}
