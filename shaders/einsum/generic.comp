// vkgraphy-variants: f32 f16 f16acc32
// Einsum, any equation: one invocation per output element sums, over the index space of
// the labels absent from the output, the product of up to four operands. Every label's
// size and per-operand element stride come from an index table (runtime/core/
// einsum_equation.h: diagonals add their strides, broadcast axes have stride 0), so the
// shader has no rank limit. Float data accumulates in afp, int32 data (f32 variant) in int.
// Bindings: 0-3 = the operands (unused ones bound to a one-element buffer), 4 = Y,
// 5 = index table (int32):
//   [0, no)                    output label sizes, outermost first
//   [no + k * no, ...)         operand k's strides of the output labels, k < kOperands
//   [s0, s0 + ns)              summed label sizes (s0 = no * (1 + kOperands))
//   [s0 + ns + k * ns, ...)    operand k's strides of the summed labels
// Push constants: total (output elements), no (output labels), ns (summed labels),
// summed (the summed index space's size).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kOperands          1 to 4
//   2 kInt               1: int32 data
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOperands = 2;
layout(constant_id = 2) const uint kInt = 0;

layout(push_constant) uniform Params {
  uint total;
  uint no;
  uint ns;
  uint summed;
} p;

layout(binding = 0) readonly buffer X0 { sfp x0[]; };
layout(binding = 0) readonly buffer X0I { int x0i[]; };
layout(binding = 1) readonly buffer X1 { sfp x1[]; };
layout(binding = 1) readonly buffer X1I { int x1i[]; };
layout(binding = 2) readonly buffer X2 { sfp x2[]; };
layout(binding = 2) readonly buffer X2I { int x2i[]; };
layout(binding = 3) readonly buffer X3 { sfp x3[]; };
layout(binding = 3) readonly buffer X3I { int x3i[]; };
layout(binding = 4) writeonly buffer Y { sfp y[]; };
layout(binding = 4) writeonly buffer YI { int yi[]; };
layout(binding = 5) readonly buffer T { int table[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  uint base0 = 0, base1 = 0, base2 = 0, base3 = 0;
  uint rest = e;
  for (uint a = p.no; a-- > 0;) {
    const uint size = uint(table[a]);
    const uint i = rest % size;
    rest /= size;
    base0 += i * uint(table[p.no + a]);
    if (kOperands > 1) base1 += i * uint(table[2 * p.no + a]);
    if (kOperands > 2) base2 += i * uint(table[3 * p.no + a]);
    if (kOperands > 3) base3 += i * uint(table[4 * p.no + a]);
  }
  const uint s0 = p.no * (1 + kOperands);
  afp acc = afp(0);
  int iacc = 0;
  for (uint s = 0; s < p.summed; ++s) {
    uint o0 = base0, o1 = base1, o2 = base2, o3 = base3;
    uint r = s;
    for (uint j = p.ns; j-- > 0;) {
      const uint size = uint(table[s0 + j]);
      const uint i = r % size;
      r /= size;
      o0 += i * uint(table[s0 + p.ns + j]);
      if (kOperands > 1) o1 += i * uint(table[s0 + 2 * p.ns + j]);
      if (kOperands > 2) o2 += i * uint(table[s0 + 3 * p.ns + j]);
      if (kOperands > 3) o3 += i * uint(table[s0 + 4 * p.ns + j]);
    }
    if (kInt != 0) {
      int prod = x0i[o0];
      if (kOperands > 1) prod *= x1i[o1];
      if (kOperands > 2) prod *= x2i[o2];
      if (kOperands > 3) prod *= x3i[o3];
      iacc += prod;
    } else {
      afp prod = sfp2afp(x0[o0]);
      if (kOperands > 1) prod *= sfp2afp(x1[o1]);
      if (kOperands > 2) prod *= sfp2afp(x2[o2]);
      if (kOperands > 3) prod *= sfp2afp(x3[o3]);
      acc += prod;
    }
  }
  if (kInt != 0) {
    yi[e] = iacc;
  } else {
    y[e] = afp2sfp(acc);
  }
}
