// vkgraphy-variants: f32
// vkgraphy-texel-reads: X
// Winograd F(4x4, 3x3), step 1 of 3: the input transform. For every input
// channel c and 4x4 output tile p (over the batch: p = n * tiles + ty * tiles_w
// + tx), reads the 6x6 input patch d whose top-left corner is
// (4 * ty - pad_top, 4 * tx - pad_left) (zero outside the input) and writes
// V = B^T d B as 36 GEMM operands:
//   V[xi][c][p] for xi < 36 (row-major 6x6), rows of p_pad = tile count rounded
//   up to 4 (the tail is zero), read by gemm/block.comp as its B.
// B^T (Lavin and Gray, interpolation points 0, -1, 1, -2, 2 and infinity):
//   [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
// Its values grow more than F(2x2, 3x3)'s, so the tactic is fp32 only.
//
// Bindings: 0 X [N][C][H][W]; 1 V (scratch) [36][C][p_pad].
// Push constants: n, c, h, w, tiles_h, tiles_w, pad_top, pad_left.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kVec4: 1 when
//   tiles_w % 4 == 0 and W % 4 == 0, 2 when besides the tile count is a multiple
//   of 8; 2 kPadLeft: pad_left (read with kVec4 only, 0..3). With kVec4 1 an
//   invocation transforms four tiles side by side (a quad): the 6 x 18 inputs
//   they share read once as 36 vec4s, each V row written as one vec4 (on
//   lavapipe every load or store instruction costs a loop over the SIMD lanes,
//   whatever its width). With 2 it transforms two quads and, in the "_texel"
//   build, writes each V row's eight values with one store (VKG_OUTPUT8).
// Dispatch C * p_pad invocations, or C * p_pad / 4 (kVec4 1), C * p_pad / 8
// (kVec4 2) (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kVec4 = 0;
layout(constant_id = 2) const uint kPadLeft = 0;

layout(push_constant) uniform Params {
  uint n, c, h, w, tiles_h, tiles_w;
  int pad_top, pad_left;
} p;

VKG_INPUT(x_at, x4_at, 0, x, x4)
layout(binding = 1) writeonly buffer V { sfp v[]; };
layout(binding = 1) writeonly buffer V4 { sfp4 v4[]; };
#ifdef VKG_TEXEL_READS
VKG_OUTPUT8(v8_put, 1, v8)
const bool kWide = true;
#else
const bool kWide = false;  // storage-buffer builds store the two quads as two vec4s
void v8_put(uint i, afp4 lo, afp4 hi) {}
#endif

// B^T applied to six values d (a row or a column of the patch).
void bt(const afp d[6], out afp r[6]) {
  r[0] = afp(4) * d[0] - afp(5) * d[2] + d[4];
  r[1] = -afp(4) * (d[1] + d[2]) + d[3] + d[4];
  r[2] = afp(4) * (d[1] - d[2]) - d[3] + d[4];
  r[3] = afp(2) * (d[3] - d[1]) - d[2] + d[4];
  r[4] = afp(2) * (d[1] - d[3]) - d[2] + d[4];
  r[5] = afp(4) * d[1] - afp(5) * d[3] + d[5];
}

// B^T d B of the patch d (6x6, row-major), into r (row-major).
void patch_transform(const afp d[36], out afp r[36]) {
  afp e[36];  // d B: each row transformed
  [[unroll]] for (uint i = 0; i < 6; ++i) {
    afp row[6], t[6];
    [[unroll]] for (uint j = 0; j < 6; ++j) row[j] = d[6 * i + j];
    bt(row, t);
    [[unroll]] for (uint j = 0; j < 6; ++j) e[6 * i + j] = t[j];
  }
  [[unroll]] for (uint j = 0; j < 6; ++j) {
    afp col[6], t[6];
    [[unroll]] for (uint i = 0; i < 6; ++i) col[i] = e[6 * i + j];
    bt(col, t);
    [[unroll]] for (uint i = 0; i < 6; ++i) r[6 * i + j] = t[i];
  }
}

// kVec4: quad q of channel c, tiles 4 q .. 4 q + 3 of one tile row (columns 4 * tx0 - pad_left ..
// + 17), transformed into r[tile][xi].
void quad_transform(uint c, uint q, out afp r[4][36]) {
  const uint tiles = p.tiles_h * p.tiles_w;
  const uint pos0 = q * 4;
  const uint n = pos0 / tiles;
  const uint t = pos0 % tiles;
  const uint align = (kPadLeft + 3) / 4 * 4;
  const uint offset = align - kPadLeft;  // the patch's first column within the row span
  const int y0 = int(t / p.tiles_w) * 4 - p.pad_top;
  const int x0 = int(t % p.tiles_w) * 4 - int(align);  // a multiple of 4
  const uint plane = (n * p.c + c) * p.h * p.w;
  afp span[6][24];
  [[unroll]] for (uint i = 0; i < 6; ++i) {
    const int yy = y0 + int(i);
    [[unroll]] for (uint k = 0; k < 6; ++k) {
      const int xx = x0 + int(4 * k);
      afp4 run = afp4(0);
      if (yy >= 0 && yy < int(p.h) && xx >= 0 && xx < int(p.w)) run = x4_at((plane + uint(yy) * p.w + uint(xx)) / 4);
      [[unroll]] for (uint l = 0; l < 4; ++l) span[i][4 * k + l] = run[l];
    }
  }
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    afp d[36];
    [[unroll]] for (uint i = 0; i < 6; ++i) {
      [[unroll]] for (uint jj = 0; jj < 6; ++jj) d[6 * i + jj] = span[i][offset + 4 * j + jj];
    }
    patch_transform(d, r[j]);
  }
}

// kVec4 1: one quad per invocation, each V row written as a vec4; 2: two quads (q, q + 1, q even:
// eight consecutive positions, possibly of two tile rows), each V row written eight wide.
void main_quads() {
  const uint quads = p.n * p.tiles_h * p.tiles_w / 4;
  const uint per = kVec4 == 2 ? 2 : 1;
  const uint idx = vkg_linear_index();
  if (idx >= p.c * quads / per) return;
  const uint q = (idx % (quads / per)) * per;
  const uint c = idx / (quads / per);
  const uint xi_stride = p.c * quads;  // in vec4s
  const uint dst = c * quads + q;
  afp r[4][36];  // [tile][xi]
  quad_transform(c, q, r);
  if (kVec4 == 2) {
    afp r1[4][36];
    quad_transform(c, q + 1, r1);
    [[unroll]] for (uint xi = 0; xi < 36; ++xi) {
      const afp4 lo = afp4(r[0][xi], r[1][xi], r[2][xi], r[3][xi]);
      const afp4 hi = afp4(r1[0][xi], r1[1][xi], r1[2][xi], r1[3][xi]);
      if (kWide) {
        v8_put((xi * xi_stride + dst) / 2, lo, hi);
      } else {
        v4[xi * xi_stride + dst] = afp2sfp4(lo);
        v4[xi * xi_stride + dst + 1] = afp2sfp4(hi);
      }
    }
    return;
  }
  [[unroll]] for (uint xi = 0; xi < 36; ++xi) {
    v4[xi * xi_stride + dst] = afp2sfp4(afp4(r[0][xi], r[1][xi], r[2][xi], r[3][xi]));
  }
}

void main() {
  if (kVec4 != 0) {
    main_quads();
    return;
  }
  const uint tiles = p.tiles_h * p.tiles_w;
  const uint positions = p.n * tiles;
  const uint p_pad = (positions + 3) & ~3u;
  const uint idx = vkg_linear_index();
  if (idx >= p.c * p_pad) return;
  const uint pos = idx % p_pad;
  const uint c = idx / p_pad;
  const uint xi_stride = p.c * p_pad;
  const uint dst = c * p_pad + pos;
  if (pos >= positions) {
    for (uint xi = 0; xi < 36; ++xi) v[xi * xi_stride + dst] = sfp(0);
    return;
  }
  const uint n = pos / tiles;
  const uint t = pos % tiles;
  const int y0 = int(t / p.tiles_w) * 4 - p.pad_top;
  const int x0 = int(t % p.tiles_w) * 4 - p.pad_left;
  const uint plane = (n * p.c + c) * p.h * p.w;
  afp d[36];
  [[unroll]] for (uint i = 0; i < 6; ++i) {
    const int yy = y0 + int(i);
    [[unroll]] for (uint j = 0; j < 6; ++j) {
      const int xx = x0 + int(j);
      d[6 * i + j] = yy >= 0 && yy < int(p.h) && xx >= 0 && xx < int(p.w)
                         ? x_at(plane + uint(yy) * p.w + uint(xx))
                         : afp(0);
    }
  }
  afp r[36];
  patch_transform(d, r);
  [[unroll]] for (uint xi = 0; xi < 36; ++xi) v[xi * xi_stride + dst] = afp2sfp(r[xi]);
}
