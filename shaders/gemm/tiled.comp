// vkgraphy-variants: f32 f16 f16acc32
// GEMM with shared-memory tiles: a workgroup of kTile x kTile invocations
// computes a kTile x kTile block of Y (one element per invocation), staging
// kTile x kTile tiles of A and B in shared memory. Any strides (transposes,
// broadcast batch dims): the interface of gemm/common.glsl.
// Dispatch: one workgroup per output tile, batches * ceil(M / kTile) *
// ceil(N / kTile) workgroups through linear_groups() (the tile is the
// workgroup's linear index; workgroups past the last tile return).
// Specialization constants: 0 (local_size_x_id) workgroup size, must be
// kTile * kTile; 1 kTile, the tile edge.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kTile = 16;

layout(binding = 0) readonly buffer A { sfp a[]; };
layout(binding = 1) readonly buffer B { sfp b[]; };
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

shared afp tile_a[kTile * kTile];  // [row][k]
shared afp tile_b[kTile * kTile];  // [k][column]

void main() {
  const uint tiles_m = (p.M + kTile - 1) / kTile;
  const uint tiles_n = (p.N + kTile - 1) / kTile;
  const uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (tile >= p.batches * tiles_m * tiles_n) return;  // uniform over the workgroup
  const uint batch = tile / (tiles_m * tiles_n);
  const uint m0 = (tile / tiles_n) % tiles_m * kTile;
  const uint n0 = tile % tiles_n * kTile;
  const uint tx = gl_LocalInvocationID.x % kTile;  // column within the tile
  const uint ty = gl_LocalInvocationID.x / kTile;  // row within the tile
  const uint m = m0 + ty;
  const uint n = n0 + tx;
  const uint a_base = gemm_a_base(batch);
  const uint b_base = gemm_b_base(batch);

  afp acc = afp(0);
  for (uint k0 = 0; k0 < p.K; k0 += kTile) {
    // This invocation stages A(m, k0 + tx) and B(k0 + ty, n); zero outside.
    const uint ka = k0 + tx;
    const uint kb = k0 + ty;
    tile_a[ty * kTile + tx] = (m < p.M && ka < p.K) ? sfp2afp(a[a_base + m * p.a_sm + ka * p.a_sk]) : afp(0);
    tile_b[ty * kTile + tx] = (kb < p.K && n < p.N) ? sfp2afp(b[b_base + kb * p.b_sk + n * p.b_sn]) : afp(0);
    barrier();
    for (uint kk = 0; kk < kTile; ++kk) acc += tile_a[ty * kTile + kk] * tile_b[kk * kTile + tx];
    barrier();
  }
  if (m >= p.M || n >= p.N) return;
  afp result = afp(uintBitsToFloat(p.alpha_bits)) * acc;
  if ((p.flags & kGemmHasC) != 0u) {
    result += afp(uintBitsToFloat(p.beta_bits)) * sfp2afp(c[m * p.c_sm + n * p.c_sn]);
  }
  y[(batch * p.M + m) * p.N + n] = afp2sfp(vkg_epilogue(result));
}
