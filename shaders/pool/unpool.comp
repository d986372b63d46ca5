// vkgraphy-variants: f32 f16
// MaxUnpool in three dispatches of this shader (kStep), deterministic where
// indices repeat: the last X element naming an output position wins, as in
// the reference's sequential scatter.
//   kStep 0  claim[o] = -1 for every output position o       (n_out invocations)
//   kStep 1  atomicMax(claim[target(e)], e) for every X element e (n_in invocations)
//   kStep 2  Y[o] = claim[o] >= 0 ? X[claim[o]] : 0           (n_out invocations)
// An index outside the unpooled shape is skipped (the reference rejects it).
// Elements are moved as bits: uint (f32 and int32 storage) or float16_t.
// Bindings: 0 = X, 1 = Indices (int32, X's shape), 2 = Y, 3 = claim (int32
// scratch, n_out elements). Dispatch linear_groups(n) for the step's n.
// Push constants (12 words):
//   n_in, n_out   element counts of X and Y
//   inferred[5]   the unpooled shape the indices address (N, C, D0, D1, D2;
//                 fewer spatial dims are given leading dims of size 1)
//   out_dims[5]   Y's shape in the same form (output_shape)
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kStep.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kStep = 0;

layout(push_constant) uniform Params {
  uint n_in;
  uint n_out;
  int inferred[5];
  int out_dims[5];
} params;

#if defined(VKG_PRECISION_F32)
#define elem uint
#else
#define elem float16_t
#endif

layout(binding = 0) readonly buffer X { elem x[]; };
layout(binding = 1) readonly buffer Ind { int indices[]; };
layout(binding = 2) writeonly buffer Y { elem y[]; };
layout(binding = 3) buffer Claim { int claim[]; };

void main() {
  const uint i = vkg_linear_index();
  if (kStep == 0) {
    if (i < params.n_out) claim[i] = -1;
  } else if (kStep == 1) {
    if (i >= params.n_in) return;
    int flat_index = indices[i];
    int limit = 1;
    for (int d = 0; d < 5; ++d) limit *= params.inferred[d];
    if (flat_index < 0 || flat_index >= limit) return;
    int coord[5];
    for (int d = 4; d >= 0; --d) {
      coord[d] = flat_index % params.inferred[d];
      flat_index /= params.inferred[d];
    }
    int target = 0;
    for (int d = 0; d < 5; ++d) {
      if (coord[d] >= params.out_dims[d]) return;
      target = target * params.out_dims[d] + coord[d];
    }
    atomicMax(claim[target], int(i));
  } else {
    if (i >= params.n_out) return;
    const int c = claim[i];
    y[i] = c >= 0 ? x[min(uint(c), params.n_in - 1)] : elem(0);
  }
}
