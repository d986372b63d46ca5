// The row tile of conv/depthwise_tile.comp and conv/direct_tile.comp: 8 outputs
// along a row, the kernel geometry compile-time (specialization constants 3-10),
// the input row span a tile reads loaded once into registers. Include after
// precision.glsl, f32_bindings.glsl, texel_reads.glsl and the push constants `p` (with the input's
// ih and iw); binding 0 is X (a texel buffer in "_texel" builds), binding 3 is Y (written through
// y_put / y4_put).
#ifndef VKG_CONV_TILE_ROW_GLSL
#define VKG_CONV_TILE_ROW_GLSL

layout(constant_id = 3) const uint kKh = 3;
layout(constant_id = 4) const uint kKw = 3;
layout(constant_id = 5) const uint kStrideH = 1;
layout(constant_id = 6) const uint kStrideW = 1;
layout(constant_id = 7) const uint kPadH = 1;
layout(constant_id = 8) const uint kPadW = 1;
layout(constant_id = 9) const uint kVecLoad = 1;   // IW % 4 == 0: X rows read as vec4
// 1: OW % 4 == 0, Y rows written as vec4s; 2: OW % 8 == 0 as well, and "_texel" builds write a tile
// row's 8 outputs with one eight-wide store (VKG_OUTPUT8; storage-buffer builds as 1). lavapipe
// stores each component of each lane on its own, so a u64vec4 costs what a vec4 does.
layout(constant_id = 10) const uint kVecStore = 1;

VKG_FLOAT_INPUT(x_at, x4_at, 0, x, x4, x32, x32_4)
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer Y4 { sfp4 y4[]; };
// fp32 views of Y, where a reformat is fused in (f32_bindings.glsl).
layout(binding = 3) writeonly buffer Y32 { float y32[]; };
layout(binding = 3) writeonly buffer Y32_4 { vec4 y32_4[]; };

VKG_F32_WRITERS(y_put, y4_put, 3, y, y4, y32, y32_4)
#ifdef VKG_TEXEL_READS
VKG_OUTPUT8(y8_put, 3, y8)
const bool kStore8 = kVecStore == 2;
#else
const bool kStore8 = false;
void y8_put(uint i, afp4 lo, afp4 hi) {}
#endif

// Writes 8 outputs of row `yrow` (an element index) starting at ox0 (a multiple of 8): through
// y8_put with kStore8, else as two vec4s (kVecStore != 0; OW % 4 == 0).
void put_tile_row(uint yrow, uint ox0, afp4 lo, afp4 hi) {
  if (kStore8) {
    if (ox0 < p.ow) y8_put((yrow + ox0) / 8, lo, hi);
  } else {
    if (ox0 < p.ow) y4_put((yrow + ox0) / 4, lo);
    if (ox0 + 4 < p.ow) y4_put((yrow + ox0 + 4) / 4, hi);
  }
}

const uint kPixels = 8;
// The row span starts at a multiple of 4 at or left of the first input column the tile reads.
const uint kAlignW = (kPadW + 3) / 4 * 4;
const uint kOffset = kAlignW - kPadW;  // the first column read, within the span
const uint kVecs = (kOffset + (kPixels - 1) * kStrideW + kKw + 3) / 4;

// Row iy (of ih) of the plane starting at X element `plane_base`, columns x0 .. x0 + 4 * kVecs - 1
// (x0 a multiple of 4), zero outside the input.
void load_span(uint plane_base, int iy, int x0, out afp span[24]) {
  [[unroll]] for (uint i = 0; i < kVecs * 4; ++i) span[i] = afp(0);
  if (iy < 0 || iy >= int(p.ih)) return;
  const uint xrow = plane_base + uint(iy) * p.iw;
  [[unroll]] for (uint v = 0; v < kVecs; ++v) {
    const int ix = x0 + int(4 * v);
    if (kVecLoad == 1) {
      if (ix >= 0 && ix < int(p.iw)) {  // a vec4 lies wholly inside the row or outside it
        const afp4 q = x4_at((xrow + uint(ix)) / 4);
        span[4 * v] = q.x;
        span[4 * v + 1] = q.y;
        span[4 * v + 2] = q.z;
        span[4 * v + 3] = q.w;
      }
    } else {
      [[unroll]] for (uint l = 0; l < 4; ++l) {
        if (ix + int(l) >= 0 && ix + int(l) < int(p.iw)) span[4 * v + l] = x_at(xrow + uint(ix) + l);
      }
    }
  }
}

#endif  // VKG_CONV_TILE_ROW_GLSL
