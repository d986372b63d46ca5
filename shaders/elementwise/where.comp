// vkgraphy-variants: f32 f16
// Out = Cond ? X : Y with numpy broadcasting of all three. Moves bits: the f32
// variant handles 32-bit elements (float32, int32 and bool storage alike) as
// uint, the f16 variant float16 elements.
// Bindings: 0 = Cond (int32, 0 or 1), 1 = X, 2 = Y, 3 = Out.
// Push constants (30 words):
//   n         output elements
//   rank      merged broadcast dimensions (1..7)
//   dims[7]   merged output dimensions, outermost first
//   stride_c[7], stride_x[7], stride_y[7]  element strides per merged dimension;
//             the last one is 0 (broadcast along rows) or 1 (contiguous rows)
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kVec  1: one element per invocation; 4: four contiguous output elements
//           per invocation (needs dims[rank-1] % 4 == 0, or rank 1, where the
//           n % 4 tail elements take one invocation each after the n / 4 vector
//           ones). Dispatch n / 4 + n % 4 invocations.
//   2 kCLayout, 3 kXLayout, 4 kYLayout  LAYOUT_* below: how Cond / X / Y are
//           indexed (the strided form is general; the others let lavapipe load
//           contiguously)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

#if defined(VKG_PRECISION_F32)
#define elem uint
#define elem4 uvec4
#else
#define elem float16_t
#define elem4 f16vec4
#endif

#define LAYOUT_STRIDED 0   // through dims and strides
#define LAYOUT_IDENTITY 1  // the output's shape: element e is at e
#define LAYOUT_SINGLE 2    // one element, at 0

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec = 1;
layout(constant_id = 2) const uint kCLayout = LAYOUT_STRIDED;
layout(constant_id = 3) const uint kXLayout = LAYOUT_STRIDED;
layout(constant_id = 4) const uint kYLayout = LAYOUT_STRIDED;

layout(push_constant) uniform Params {
  uint n;
  uint rank;
  uint dims[7];
  uint stride_c[7];
  uint stride_x[7];
  uint stride_y[7];
} params;

layout(binding = 0) readonly buffer Cond { int cond[]; };
layout(binding = 0) readonly buffer Cond4 { ivec4 cond4[]; };
layout(binding = 1) readonly buffer X { elem x[]; };
layout(binding = 1) readonly buffer X4 { elem4 x4[]; };
layout(binding = 2) readonly buffer Y { elem y[]; };
layout(binding = 2) readonly buffer Y4 { elem4 y4[]; };
layout(binding = 3) writeonly buffer Out { elem out_[]; };
layout(binding = 3) writeonly buffer Out4 { elem4 out4[]; };

// Offsets into Cond, X and Y of output element e.
uint pick(uint layout_, uint e, uint strided) {
  return layout_ == LAYOUT_IDENTITY ? e : layout_ == LAYOUT_SINGLE ? 0 : strided;
}

uvec3 offsets(uint e) {
  uvec3 o = uvec3(0);
  if (kCLayout == LAYOUT_STRIDED || kXLayout == LAYOUT_STRIDED || kYLayout == LAYOUT_STRIDED) {
    uint rest = e;
    for (int d = int(params.rank) - 1; d > 0; --d) {
      const uint dim = params.dims[d];
      const uint idx = rest % dim;
      rest /= dim;
      o += idx * uvec3(params.stride_c[d], params.stride_x[d], params.stride_y[d]);
    }
    o += rest * uvec3(params.stride_c[0], params.stride_x[0], params.stride_y[0]);
  }
  return uvec3(pick(kCLayout, e, o.x), pick(kXLayout, e, o.y), pick(kYLayout, e, o.z));
}

bool row(uint layout_, uint stride) {
  return layout_ == LAYOUT_IDENTITY || (layout_ == LAYOUT_STRIDED && stride == 1);
}

void element(uint e) {
  const uvec3 o = offsets(e);
  out_[e] = cond[o.x] != 0 ? x[o.y] : y[o.z];
}

// Output elements e .. e + 3 (e % 4 == 0, all in one row).
void vector4(uint e) {
  const uvec3 o = offsets(e);
  const uint last = params.rank - 1;
  const ivec4 c = row(kCLayout, params.stride_c[last]) ? cond4[o.x / 4] : ivec4(cond[o.x]);
  const elem4 vx = row(kXLayout, params.stride_x[last]) ? x4[o.y / 4] : elem4(x[o.y]);
  const elem4 vy = row(kYLayout, params.stride_y[last]) ? y4[o.z / 4] : elem4(y[o.z]);
  out4[e / 4] = elem4(c.x != 0 ? vx.x : vy.x, c.y != 0 ? vx.y : vy.y, c.z != 0 ? vx.z : vy.z,
                      c.w != 0 ? vx.w : vy.w);
}

void main() {
  const uint i = vkg_linear_index();
  if (kVec == 4) {
    const uint n4 = params.n / 4;
    if (i < n4) {
      vector4(i * 4);
      return;
    }
    const uint e = n4 * 4 + (i - n4);
    if (e < params.n) element(e);
  } else if (i < params.n) {
    element(i);
  }
}
