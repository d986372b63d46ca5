// vkgraphy-variants: f32 f16
// Resize/Upsample (nearest) by whole factors, when every axis maps output
// coordinate o to input coordinate o / factor (checked at build time against
// the tap tables of resize.comp). One invocation per kPer consecutive input
// elements of each output row: it reads each element once and writes its `fw`
// copies along the last axis (fw: the last axis' factor). Bit-exact copies.
// Bindings: 0 = X, 1 = out,
//   2 = meta (int32): [rank] run sizes (output sizes, the last one replaced by
//       the input's), [rank] factors, [rank] input strides, [rank] output strides.
// Push constants: n (input elements of all output rows), rank, fw, W (the
// input's last size).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kPer
// (elements per invocation, 1..8); 2 kFh, 3 kFw: the rows form, where every
// axis but the last two keeps its size and W % 4 == 0 (kFh: the second-last
// axis' factor, 0 for the general form above; kFw: the last axis' factor, 1..4):
// an invocation reads four elements of an input row as one vec4 and writes
// them, each kFw times, as kFw vec4s into each of the kFh output rows they
// fill; n is then the input's element count / 4. With kPer 1 in the rows form (kFw a
// multiple of 4, any W): an invocation reads one element and writes it as kFw / 4
// vec4s into each of its kFh output rows; n is then the input's element count
// (PP-OCRv4 det's x8 upsampling of 10x10 planes). 39 vkg_small_indices
// (common/index.glsl).
// Dispatch (n / W) * ceil(W / kPer) invocations (vkg_linear_index), n in the
// rows form.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/index.glsl"
#include "gather/move.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPer = 4;
layout(constant_id = 2) const uint kFh = 0;
layout(constant_id = 3) const uint kFw = 1;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint fw;
  uint in_w;
} params;

layout(binding = 0) readonly buffer X { melem x[]; };
layout(binding = 0) readonly buffer X4 { melem4 x4[]; };
layout(binding = 1) writeonly buffer Out { melem out_[]; };
layout(binding = 1) writeonly buffer Out4 { melem4 out4[]; };
layout(binding = 2) readonly buffer Meta { int meta[]; };

// The rows form: input row `row` (all axes but the last flattened) fills output rows
// row * kFh .. row * kFh + kFh - 1.
void main_rows() {
  const uint i = vkg_linear_index();
  if (i >= params.n) return;
  if (kPer == 1) {  // element i of input row `row` fills kFw / 4 vec4s of each output row
    const uint row = vkg_div(i, params.in_w);
    const uint col = i - row * params.in_w;
    const melem v = x[i];
    [[unroll]] for (uint r = 0; r < kFh; ++r) {
      const uint dst = ((row * kFh + r) * params.in_w + col) * (kFw / 4);
      [[unroll]] for (uint q = 0; q < kFw / 4; ++q) out4[dst + q] = melem4(v);
    }
    return;
  }
  const uint blocks = params.in_w / 4;
  const uint row = vkg_div(i, blocks);
  const uint b = i - row * blocks;
  const melem4 v = x4[i];
  [[unroll]] for (uint r = 0; r < kFh; ++r) {
    const uint dst = (row * kFh + r) * blocks * kFw + b * kFw;
    [[unroll]] for (uint q = 0; q < kFw; ++q) {
      melem4 o;
      [[unroll]] for (uint l = 0; l < 4; ++l) o[l] = v[(4 * q + l) / kFw];
      out4[dst + q] = o;
    }
  }
}

void main() {
  if (kFh != 0) {
    main_rows();
    return;
  }
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
