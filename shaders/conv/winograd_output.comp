// vkgraphy-variants: f32 f16 f16acc32
// Winograd F(2x2, 3x3), step 3 of 3: the output transform. Step 2 (conv/gemm.comp,
// one GEMM per xi) left M[xi][m][p] = sum over c of U[xi][m][c] * V[xi][c][p];
// each invocation turns the 16 values of one output channel m and tile p into
// the 2x2 output tile A^T M A (+ bias), written where inside the output.
//
// Bindings: 0 M (scratch) [16][M][positions]; 1 B bias [M] (bound but unread when
//   kHasBias == 0); 2 Y [N][M][OH][OW].
// Push constants: n, m, oh, ow, tiles_h, tiles_w (positions = n * tiles_h * tiles_w).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kHasBias.
// Dispatch N * M * tiles_h * tiles_w invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kHasBias = 0;

layout(push_constant) uniform Params {
  uint n, m, oh, ow, tiles_h, tiles_w;
} p;

layout(binding = 0) readonly buffer MBuf { sfp mv[]; };
layout(binding = 1) readonly buffer B { sfp bias[]; };
layout(binding = 2) writeonly buffer Y { sfp y[]; };

void main() {
  const uint tiles = p.tiles_h * p.tiles_w;
  const uint positions = p.n * tiles;
  uint idx = vkg_linear_index();
  if (idx >= p.m * positions) return;
  const uint t = idx % tiles;
  idx /= tiles;
  const uint m = idx % p.m;
  const uint n = idx / p.m;
  const uint xi_stride = p.m * positions;
  const uint src = m * positions + n * tiles + t;

  afp4 rows[4];
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    [[unroll]] for (uint j = 0; j < 4; ++j) rows[i][j] = sfp2afp(mv[(4 * i + j) * xi_stride + src]);
  }
  // A^T M: rows (0 + 1 + 2) and (1 - 2 - 3); then the same on the columns.
  const afp4 s0 = rows[0] + rows[1] + rows[2];
  const afp4 s1 = rows[1] - rows[2] - rows[3];
  const afp bv = kHasBias == 1 ? sfp2afp(bias[m]) : afp(0);
  afp out_tile[4];
  out_tile[0] = s0.x + s0.y + s0.z + bv;
  out_tile[1] = s0.y - s0.z - s0.w + bv;
  out_tile[2] = s1.x + s1.y + s1.z + bv;
  out_tile[3] = s1.y - s1.z - s1.w + bv;

  const uint oy0 = (t / p.tiles_w) * 2;
  const uint ox0 = (t % p.tiles_w) * 2;
  const uint plane = (n * p.m + m) * p.oh * p.ow;
  [[unroll]] for (uint q = 0; q < 4; ++q) {
    const uint oy = oy0 + q / 2;
    const uint ox = ox0 + q % 2;
    if (oy < p.oh && ox < p.ow) y[plane + oy * p.ow + ox] = afp2sfp(vkg_epilogue(out_tile[q]));
  }
}
