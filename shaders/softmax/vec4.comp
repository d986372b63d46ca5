// vkgraphy-variants: f32 f16acc32
// vkgraphy-texel-reads: X
// Softmax and LogSoftmax over contiguous rows (softmax.vec4_sg, softmax.vec4_wg), one workgroup per row: the row's
// aligned interior is read and written as vec4s, invocation i taking vectors i, i + size, ...;
// the at most three elements before it and three after it (a row need not start at a multiple
// of 4: PP-OCRv4 rec's rows of 6625 classes) as single elements by the first invocations. Three
// passes as softmax/workgroup.comp (the maximum, the sum of exp(x - max), the outputs), each
// combined by the tree of softmax/combine.glsl; every read stays inside the tensor. lavapipe
// gathers a texel vector for about what a storage buffer costs it per element, and one
// invocation per row (softmax.row) leaves all but a few of its SIMD lanes idle on few long rows.
// Bindings: 0 = X (input), 1 = Y (output, X's shape).
// Push constants: the row geometry (reduce/rows.glsl), 18 words; rows have one reduced run of
// stride 1 (element r of a row at r).
// Specialization constants:
//   0 (local_size_x_id)  workgroup size, a power of two
//   1 kKind              0 Softmax, 1 LogSoftmax
// Group counts: linear_groups(rows * workgroup size, workgroup size), one group per row.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "reduce/rows.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kWorkgroupSize = 64;
layout(constant_id = 1) const uint kKind = 0;

const uint kSoftmax = 0;

layout(push_constant) uniform Params { VKG_ROW_GEOMETRY } p;

VKG_INPUT(x_at, x4_at, 0, x, x4)
layout(binding = 1) writeonly buffer Y { sfp y[]; };
layout(binding = 1) writeonly buffer Y4 { sfp4 y4[]; };

shared float sh_f[kWorkgroupSize];

#include "softmax/combine.glsl"

// The larger of m and v, m where v is NaN (as softmax/workgroup.comp skips NaNs in its maximum).
afp larger(afp m, afp v) { return v > m ? v : m; }

// Output of element value v, for the row's maximum m and log_sum = log(sum) (LogSoftmax) or
// inv = 1 / sum (Softmax).
afp4 outputs(afp4 v, afp m, afp inv, afp log_sum) { return kKind == kSoftmax ? exp(v - m) * inv : (v - m) - log_sum; }

void main() {
  const uint row = vkg_workgroup_index();
  if (row >= p.rows || p.reduced == 0) return;  // the same for the whole workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint start = vkg_row_offset(row, p.kept_dims, p.kept_strides), end = start + p.reduced;
  // [start, a) single elements, [a, b) whole vec4s, [b, end) single elements.
  const uint a = min((start + 3) & ~3u, end);
  const uint b = max(a, end & ~3u);
  const uint q0 = a / 4, q1 = b / 4;
  // This invocation's single element before the interior and after it, if any.
  const bool has_head = lid < a - start, has_tail = lid < end - b;
  const uint head = start + lid, tail = b + lid;

  afp m = afp(-vkg_inf());
  for (uint q = q0 + lid; q < q1; q += kWorkgroupSize) {
    const afp4 v = x4_at(q);
    m = larger(larger(larger(larger(m, v.x), v.y), v.z), v.w);
  }
  if (has_head) m = larger(m, x_at(head));
  if (has_tail) m = larger(m, x_at(tail));
  m = afp(workgroup_combine(true, float(m)));

  afp4 s4 = afp4(0);
  for (uint q = q0 + lid; q < q1; q += kWorkgroupSize) s4 += exp(x4_at(q) - m);
  afp s = (s4.x + s4.y) + (s4.z + s4.w);
  if (has_head) s += exp(x_at(head) - m);
  if (has_tail) s += exp(x_at(tail) - m);
  const float sum = workgroup_combine(false, float(s));

  const afp inv = afp(1.0 / sum), log_sum = afp(log(sum));
  for (uint q = q0 + lid; q < q1; q += kWorkgroupSize) y4[q] = afp2sfp4(outputs(x4_at(q), m, inv, log_sum));
  if (has_head) y[head] = afp2sfp(outputs(afp4(x_at(head)), m, inv, log_sum).x);
  if (has_tail) y[tail] = afp2sfp(outputs(afp4(x_at(tail)), m, inv, log_sum).x);
}
