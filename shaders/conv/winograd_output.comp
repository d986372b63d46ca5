// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: M
// Winograd F(2x2, 3x3), step 3 of 3: the output transform. Step 2 (conv/gemm.comp,
// one GEMM per xi) left M[xi][m][p] = sum over c of U[xi][m][c] * V[xi][c][p];
// each invocation turns the 16 values of one output channel m and tile p into
// the 2x2 output tile A^T M A (+ bias), written where inside the output.
//
// Bindings: 0 M (scratch) [16][M][positions]; 1 B bias [M] (bound but unread when
//   kHasBias == 0); 2 Y [N][M][OH][OW].
// Push constants: n, m, oh, ow, tiles_h, tiles_w (positions = n * tiles_h * tiles_w).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kHasBias; 2 kVec4:
//   1 when tiles_w % 4 == 0 and OW == 2 * tiles_w: an invocation turns four tiles
//   side by side, reading M as vec4s and writing two vec4s per output row.
// Dispatch N * M * tiles_h * tiles_w invocations, a quarter of that with kVec4
// (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kHasBias = 0;
layout(constant_id = 2) const uint kVec4 = 0;

layout(push_constant) uniform Params {
  uint n, m, oh, ow, tiles_h, tiles_w;
} p;

VKG_INPUT(m_at, m4_at, 0, mv, mv4)
layout(binding = 1) readonly buffer B { sfp bias[]; };
layout(binding = 2) writeonly buffer Y { sfp y[]; };
layout(binding = 2) writeonly buffer Y4 { sfp4 y4[]; };

// A^T M A of one tile (its 16 values as four rows), plus the bias: the 2x2 outputs, row-major.
afp4 tile_transform(afp4 rows[4], afp bv) {
  // A^T M: rows (0 + 1 + 2) and (1 - 2 - 3); then the same on the columns.
  const afp4 s0 = rows[0] + rows[1] + rows[2];
  const afp4 s1 = rows[1] - rows[2] - rows[3];
  return afp4(s0.x + s0.y + s0.z, s0.y - s0.z - s0.w, s1.x + s1.y + s1.z, s1.y - s1.z - s1.w) + bv;
}

void main_vec4() {
  const uint tiles = p.tiles_h * p.tiles_w, quads = tiles / 4;
  const uint positions = p.n * tiles;
  uint idx = vkg_linear_index();
  if (idx >= p.m * p.n * quads) return;
  const uint t = (idx % quads) * 4;
  idx /= quads;
  const uint m = idx % p.m;
  const uint n = idx / p.m;
  const uint xi_stride = p.m * positions / 4;  // in vec4s
  const uint src = (m * positions + n * tiles + t) / 4;
  afp4 v[16];  // [xi][tile]
  [[unroll]] for (uint xi = 0; xi < 16; ++xi) v[xi] = m4_at(xi * xi_stride + src);
  const afp bv = kHasBias == 1 ? sfp2afp(bias[m]) : afp(0);
  afp4 o[4];  // [tile]
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    afp4 rows[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) rows[i] = afp4(v[4 * i][j], v[4 * i + 1][j], v[4 * i + 2][j], v[4 * i + 3][j]);
    o[j] = tile_transform(rows, bv);
  }
  const uint oy0 = (t / p.tiles_w) * 2;
  const uint ox0 = (t % p.tiles_w) * 2;  // a multiple of 8
  const uint plane = (n * p.m + m) * p.oh * p.ow;
  [[unroll]] for (uint r = 0; r < 2; ++r) {
    if (oy0 + r >= p.oh) break;
    const uint row = (plane + (oy0 + r) * p.ow + ox0) / 4;
    y4[row] = afp2sfp4(vkg_epilogue4(afp4(o[0][2 * r], o[0][2 * r + 1], o[1][2 * r], o[1][2 * r + 1])));
    y4[row + 1] = afp2sfp4(vkg_epilogue4(afp4(o[2][2 * r], o[2][2 * r + 1], o[3][2 * r], o[3][2 * r + 1])));
  }
}

void main() {
  if (kVec4 == 1) {
    main_vec4();
    return;
  }
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
    [[unroll]] for (uint j = 0; j < 4; ++j) rows[i][j] = m_at((4 * i + j) * xi_stride + src);
  }
  const afp4 out_tile = tile_transform(rows, kHasBias == 1 ? sfp2afp(bias[m]) : afp(0));

  const uint oy0 = (t / p.tiles_w) * 2;
  const uint ox0 = (t % p.tiles_w) * 2;
  const uint plane = (n * p.m + m) * p.oh * p.ow;
  [[unroll]] for (uint q = 0; q < 4; ++q) {
    const uint oy = oy0 + q / 2;
    const uint ox = ox0 + q % 2;
    if (oy < p.oh && ox < p.ow) y[plane + oy * p.ow + ox] = afp2sfp(vkg_epilogue(out_tile[q]));
  }
}
