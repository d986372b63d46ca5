// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: X
// Winograd F(2x2, 3x3), step 1 of 3: the input transform. For every input
// channel c and 2x2 output tile p (over the batch: p = n * tiles + ty * tiles_w
// + tx), reads the 4x4 input patch d whose top-left corner is
// (2 * ty - pad_top, 2 * tx - pad_left) (zero outside the input) and writes
// V = B^T d B as 16 GEMM operands:
//   V[xi][c][p] for xi < 16 (row-major 4x4), rows of p_pad = tile count rounded
//   up to 4 (the tail is zero), read by conv/gemm.comp as its B.
//
// Bindings: 0 X [N][C][H][W]; 1 V (scratch) [16][C][p_pad].
// Push constants: n, c, h, w, tiles_h, tiles_w, pad_top, pad_left.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kVec4: 1 when
//   tiles_w % 4 == 0 and W % 4 == 0, 2 when besides the tile count is a multiple
//   of 8; 2 kPadLeft: pad_left (read with kVec4 only). With kVec4 1 an invocation
//   transforms four tiles side by side (a quad): the 4 x 10 inputs they share
//   read once as 16 vec4s, each V row written as one vec4 (on lavapipe every
//   load or store instruction costs a loop over the SIMD lanes). With 2 it
//   transforms two quads and, in the "_texel" build, writes each V row's eight
//   values with one store (VKG_OUTPUT8).
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

// B^T applied to four rows (or, on transposed data, columns) of a patch.
afp4 row_transform(afp4 t) { return afp4(t.x - t.z, t.y + t.z, t.z - t.y, t.y - t.w); }

// B^T d B of the patch d (four rows).
void patch_transform(afp4 d[4], out afp4 r[4]) {
  r[0] = row_transform(d[0] - d[2]);
  r[1] = row_transform(d[1] + d[2]);
  r[2] = row_transform(d[2] - d[1]);
  r[3] = row_transform(d[1] - d[3]);
}

// kVec4: quad q of channel c, tiles 4 q .. 4 q + 3 of one tile row (columns 2 * tx0 - pad_left ..
// + 9), transformed into r[tile][row].
void quad_transform(uint c, uint q, out afp4 r[4][4]) {
  const uint tiles = p.tiles_h * p.tiles_w;
  const uint pos0 = q * 4;
  const uint n = pos0 / tiles;
  const uint t = pos0 % tiles;
  const uint align = (kPadLeft + 3) / 4 * 4;
  const uint offset = align - kPadLeft;  // the patch's first column within the row span
  const int y0 = int(t / p.tiles_w) * 2 - p.pad_top;
  const int x0 = int(t % p.tiles_w) * 2 - int(align);  // a multiple of 4
  const uint plane = (n * p.c + c) * p.h * p.w;
  afp span[4][16];
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    const int yy = y0 + int(i);
    [[unroll]] for (uint k = 0; k < 4; ++k) {
      const int xx = x0 + int(4 * k);
      afp4 run = afp4(0);
      if (yy >= 0 && yy < int(p.h) && xx >= 0 && xx < int(p.w)) run = x4_at((plane + uint(yy) * p.w + uint(xx)) / 4);
      [[unroll]] for (uint l = 0; l < 4; ++l) span[i][4 * k + l] = run[l];
    }
  }
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    afp4 d[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint o = offset + 2 * j;
      d[i] = afp4(span[i][o], span[i][o + 1], span[i][o + 2], span[i][o + 3]);
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
  afp4 r[4][4];  // [tile][row]
  quad_transform(c, q, r);
  if (kVec4 == 2) {
    afp4 r1[4][4];
    quad_transform(c, q + 1, r1);
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      [[unroll]] for (uint k = 0; k < 4; ++k) {
        const uint at = (4 * i + k) * xi_stride + dst;
        const afp4 lo = afp4(r[0][i][k], r[1][i][k], r[2][i][k], r[3][i][k]);
        const afp4 hi = afp4(r1[0][i][k], r1[1][i][k], r1[2][i][k], r1[3][i][k]);
        if (kWide) {
          v8_put(at / 2, lo, hi);
        } else {
          v4[at] = afp2sfp4(lo);
          v4[at + 1] = afp2sfp4(hi);
        }
      }
    }
    return;
  }
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    [[unroll]] for (uint k = 0; k < 4; ++k) {
      v4[(4 * i + k) * xi_stride + dst] = afp2sfp4(afp4(r[0][i][k], r[1][i][k], r[2][i][k], r[3][i][k]));
    }
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
    for (uint xi = 0; xi < 16; ++xi) v[xi * xi_stride + dst] = sfp(0);
    return;
  }
  const uint n = pos / tiles;
  const uint t = pos % tiles;
  const int y0 = int(t / p.tiles_w) * 2 - p.pad_top;
  const int x0 = int(t % p.tiles_w) * 2 - p.pad_left;
  const uint plane = (n * p.c + c) * p.h * p.w;

  afp4 d[4];
  for (int i = 0; i < 4; ++i) {
    d[i] = afp4(0);
    const int yy = y0 + i;
    if (yy < 0 || yy >= int(p.h)) continue;
    for (int j = 0; j < 4; ++j) {
      const int xx = x0 + j;
      if (xx >= 0 && xx < int(p.w)) d[i][j] = x_at(plane + uint(yy) * p.w + uint(xx));
    }
  }
  // B^T d: combine rows; then (B^T d) B: combine the columns of each row.
  afp4 r[4];
  patch_transform(d, r);
  for (uint i = 0; i < 4; ++i) {
    for (uint j = 0; j < 4; ++j) v[(4 * i + j) * xi_stride + dst] = afp2sfp(r[i][j]);
  }
}
