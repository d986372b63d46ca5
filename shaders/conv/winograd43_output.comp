// vkgraphy-variants: f32
// vkgraphy-texel-reads: M
// Winograd F(4x4, 3x3), step 3 of 3: the output transform. Step 2 (gemm/block.comp,
// one GEMM per xi) left M[xi][m][p] = sum over c of U[xi][m][c] * V[xi][c][p];
// each invocation turns the 36 values of one output channel m and tile p into
// the 4x4 output tile A^T M A (+ bias), written where inside the output.
// A^T: [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
//
// Bindings: 0 M (scratch) [36][M][positions]; 1 B bias [M] (bound but unread when
//   kHasBias == 0); 2 Y [N][M][OH][OW].
// Push constants: n, m, oh, ow, tiles_h, tiles_w (positions = n * tiles_h * tiles_w).
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kHasBias; 2 kVec4:
//   1 when tiles_w % 4 == 0 and OW % 4 == 0: an invocation turns four tiles
//   side by side, reading M as vec4s and writing four vec4s per output row (tiles
//   at or past OW, the padding of a tile row, are not stored); 2: the same with OW
//   % 8 == 0, and the "_texel" build writes each output row of the four tiles as
//   two eight-wide stores (VKG_OUTPUT8; the device needs 64-bit integers).
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
#ifdef VKG_TEXEL_READS
VKG_OUTPUT8(y8_put, 2, y8)
const bool kWide = true;
#else
const bool kWide = false;  // storage-buffer builds store vec4s whatever kVec4 says
void y8_put(uint i, afp4 lo, afp4 hi) {}
#endif

// A^T applied to six values.
afp4 at(const afp s[6]) {
  const afp a = s[1] + s[2], b = s[1] - s[2], c = s[3] + s[4], d = s[3] - s[4];
  return afp4(s[0] + a + c, b + afp(2) * d, a + afp(4) * c, b + afp(8) * d + s[5]);
}

// A^T M A of one tile (36 values, row-major) plus the bias: the 4x4 outputs as four rows.
void tile_transform(const afp t[36], afp bv, out afp4 rows[4]) {
  afp4 e[6];  // A^T applied along each row of M: e[i] = the 4 outputs of row i
  [[unroll]] for (uint i = 0; i < 6; ++i) {
    afp s[6];
    [[unroll]] for (uint j = 0; j < 6; ++j) s[j] = t[6 * i + j];
    e[i] = at(s);
  }
  [[unroll]] for (uint c = 0; c < 4; ++c) {
    afp s[6];
    [[unroll]] for (uint i = 0; i < 6; ++i) s[i] = e[i][c];
    const afp4 col = at(s);
    [[unroll]] for (uint r = 0; r < 4; ++r) rows[r][c] = col[r] + bv;
  }
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
  afp4 v[36];  // [xi][tile]
  [[unroll]] for (uint xi = 0; xi < 36; ++xi) v[xi] = m4_at(xi * xi_stride + src);
  const afp bv = kHasBias == 1 ? sfp2afp(bias[m]) : afp(0);
  afp4 o[4][4];  // [tile][row]
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    afp tv[36];
    [[unroll]] for (uint xi = 0; xi < 36; ++xi) tv[xi] = v[xi][j];
    tile_transform(tv, bv, o[j]);
  }
  const uint oy0 = (t / p.tiles_w) * 4;
  const uint ox0 = (t % p.tiles_w) * 4;  // a multiple of 16
  const uint plane = (n * p.m + m) * p.oh * p.ow;
  [[unroll]] for (uint r = 0; r < 4; ++r) {
    if (oy0 + r >= p.oh) break;
    const uint row = (plane + (oy0 + r) * p.ow + ox0) / 4;
    if (kVec4 == 2 && kWide) {
      if (ox0 < p.ow) y8_put(row / 2, vkg_epilogue4(o[0][r]), vkg_epilogue4(o[1][r]));
      if (ox0 + 8 < p.ow) y8_put(row / 2 + 1, vkg_epilogue4(o[2][r]), vkg_epilogue4(o[3][r]));
    } else {
      [[unroll]] for (uint j = 0; j < 4; ++j) {
        if (ox0 + 4 * j < p.ow) y4[row + j] = afp2sfp4(vkg_epilogue4(o[j][r]));
      }
    }
  }
}

void main() {
  if (kVec4 != 0) {
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
  afp tv[36];
  [[unroll]] for (uint xi = 0; xi < 36; ++xi) tv[xi] = m_at(xi * xi_stride + src);
  afp4 rows[4];
  tile_transform(tv, kHasBias == 1 ? sfp2afp(bias[m]) : afp(0), rows);
  const uint oy0 = (t / p.tiles_w) * 4;
  const uint ox0 = (t % p.tiles_w) * 4;
  const uint plane = (n * p.m + m) * p.oh * p.ow;
  [[unroll]] for (uint r = 0; r < 4; ++r) {
    [[unroll]] for (uint c = 0; c < 4; ++c) {
      const uint oy = oy0 + r, ox = ox0 + c;
      if (oy < p.oh && ox < p.ow) y[plane + oy * p.ow + ox] = afp2sfp(vkg_epilogue(rows[r][c]));
    }
  }
}
