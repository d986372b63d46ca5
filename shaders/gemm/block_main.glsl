// The block GEMM shader (see gemm/block.comp for its interface), shared by
// gemm/block.comp and gemm/block_wide_a.comp. With VKG_BLOCK_WIDE_A defined
// (and GL_EXT_shader_explicit_arithmetic_types_int64 enabled by the includer),
// A is read eight floats per load as u64vec4, which needs a_sm and every A
// batch base to be multiples of 8 (the tactic checks). With VKG_BLOCK_SHUFFLE_A defined (and
// GL_KHR_shader_subgroup_shuffle enabled by the includer), lane l of each group of 8 in a subgroup
// reads A's rows m0 + l, m0 + 8 + l, ... of the block and every row reaches the others through a
// shuffle from a constant lane: kRows / 8 A loads per k step instead of kRows, which needs
// kRows % 8 == 0, subgroups of 8 or more and full ones (the tactic checks). In the "_texel" builds
// (common/texel_reads.glsl), A and B are uniform texel buffers of vec4s.
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/f32_bindings.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "gemm/common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kRows = 16;
layout(constant_id = 2) const uint kColVecs = 4;
layout(constant_id = 3) const uint kNVec4 = 0;
layout(constant_id = 4) const uint kDepthToSpace = 0;
// With kDepthToSpace: 1 when kw == 2, IW % 4 == 0 and kRows is even: rows m, m + 1 (m even) are
// taps kx = 0, 1 of one output row, so a column vector of both lands as 8 consecutive outputs,
// written as two vec4s instead of eight floats.
layout(constant_id = 5) const uint kD2SPairs = 0;
// C: 0 none, 1 along M only (c_sn == 0: a bias per row, read once per row of the block), 2 any
// strides, 3 along N only (c_sm == 0, c_sn == 1: a bias per column, read once per column of the
// block: a Linear layer's; rec's classifier, [40 x 120] x [120 x 6625] + bias, 3.8 -> 2.45 ms on
// lavapipe). A constant, not the flags word: lavapipe runs both sides of every branch, so a C
// behind a runtime test costs its loads even when absent (MatMul 48x48 @ 48x6400: 2.7 -> 1.6 ms).
layout(constant_id = 6) const uint kCMode = 0;
// "_texel" builds: 1 when N % 8 == 0, kColVecs is even, kCMode != 2 and there is no
// depth-to-space map (or its pairs, kD2SPairs): pairs of column vectors are stored as one
// eight-wide store (common/texel_reads.glsl).
layout(constant_id = 7) const uint kStore8 = 0;
// kDepthToSpace's map: input extents id, ih, iw and kernel extents kd, kh, kw. Constants, not push
// constants: lavapipe divides by a runtime value one SIMD lane at a time, by a constant with
// vector multiplies (ConvTranspose 2x2 s2 24->24 80x80, conv.transpose_block16x16: 1.6 ms).
layout(constant_id = 8) const uint kMapId = 1;
layout(constant_id = 9) const uint kMapIh = 1;
layout(constant_id = 10) const uint kMapIw = 1;
layout(constant_id = 11) const uint kMapKd = 1;
layout(constant_id = 12) const uint kMapKh = 1;
layout(constant_id = 13) const uint kMapKw = 1;
// 0 when K % 4 == 0: no scalar tail loop over k. Compiled out, not skipped: lavapipe's code for a
// 16x16 block is long enough that the dead tail cost a 48x4x6400 MatMul 15% (0.61 -> 0.51 ms).
layout(constant_id = 14) const uint kKTail = 1;

VKG_FLOAT_INPUT(a_at, a4_at, 0, a, a4, a32, a32_4)
#ifdef VKG_BLOCK_WIDE_A
layout(binding = 0) readonly buffer A8 { u64vec4 a8[]; };
#endif
#ifdef VKG_TEXEL_READS
layout(binding = 1) uniform samplerBuffer b_texels;
#else
layout(binding = 1) readonly buffer B4 { sfp4 b4[]; };
#endif
layout(binding = 2) readonly buffer C { sfp c[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };
layout(binding = 3) writeonly buffer Y4 { sfp4 y4[]; };
// fp32 views, where a reformat is fused in (f32_bindings.glsl).
#ifndef VKG_TEXEL_READS
layout(binding = 1) readonly buffer B32_4 { vec4 b32_4[]; };
#endif
layout(binding = 2) readonly buffer C32 { float c32[]; };
layout(binding = 3) writeonly buffer Y32 { float y32[]; };
layout(binding = 3) writeonly buffer Y32_4 { vec4 y32_4[]; };

#ifdef VKG_TEXEL_READS
afp4 b4_at(uint i) { return vkg_texel4(b_texels, i); }
#else
afp4 b4_at(uint i) { return vkg_f32_binding(1) ? vkg_f32_in4(b32_4[i]) : sfp2afp4(b4[i]); }
#endif
afp c_at(uint i) { return vkg_f32_binding(2) ? vkg_f32_in(c32[i]) : sfp2afp(c[i]); }
VKG_F32_WRITERS(y_put, y4_put, 3, y, y4, y32, y32_4)
#ifdef VKG_TEXEL_READS
VKG_OUTPUT8(y8_put, 3, y8)
const bool kWide = kStore8 == 1;
#else
const bool kWide = false;  // storage-buffer builds store vec4s whatever kStore8 says
void y8_put(uint i, afp4 lo, afp4 hi) {}
#endif

// kDepthToSpace: Y's index of element (batch, m, n) is d2s_row(batch, m) + d2s_col(n).
uint d2s_row(uint batch, uint m) {
  const uint id = kMapId, ih = kMapIh, iw = kMapIw, kd = kMapKd, kh = kMapKh, kw = kMapKw;
  const uint taps = kd * kh * kw, tap = m % taps;
  const uint plane = ih * kh * iw * kw;
  return (batch * (p.M / taps) + m / taps) * id * kd * plane + (tap / (kh * kw)) * plane +
         ((tap / kw) % kh) * iw * kw + tap % kw;
}

uint d2s_col(uint n) {
  const uint ih = kMapIh, iw = kMapIw, kd = kMapKd, kh = kMapKh, kw = kMapKw;
  const uint plane = ih * kh * iw * kw;
  return (n / (iw * ih)) * kd * plane + ((n / iw) % ih) * kh * iw * kw + (n % iw) * kw;
}

// beta * C(m, 0) of row m (clamped to M - 1): the whole row's C when kCMode == 1; 0 otherwise.
afp c_row(uint m) {
  return kCMode == 1 ? afp(uintBitsToFloat(p.beta_bits)) * c_at(min(m, p.M - 1) * p.c_sm) : afp(0);
}

// beta * C(0, n0 .. n0 + 3) (columns clamped to N - 1) when kCMode == 3; 0 otherwise.
afp4 c_cols(uint n0) {
  if (kCMode != 3) return afp4(0);
  afp4 v;
  [[unroll]] for (uint j = 0; j < 4; ++j) v[j] = c_at(min(n0 + j, p.N - 1));
  return afp(uintBitsToFloat(p.beta_bits)) * v;
}

// Stores row m, columns n0..n0+3 of the block; `c` is c_row(m) + c_cols(n0).
void store(uint batch, uint m, uint n0, afp4 acc, afp4 c) {
  if (m >= p.M || n0 >= p.N) return;
  afp4 result = afp(uintBitsToFloat(p.alpha_bits)) * acc + c;
  if (kCMode == 2) {
    const afp beta = afp(uintBitsToFloat(p.beta_bits));
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (n0 + j < p.N) result[j] += beta * c_at(m * p.c_sm + (n0 + j) * p.c_sn);
    }
  }
  const uint yi = (batch * p.M + m) * p.N + n0;
  if (kNVec4 == 1) {
    y4_put(yi / 4, vkg_epilogue4(result));
  } else {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (n0 + j < p.N) y_put(yi + j, vkg_epilogue(result[j]));
    }
  }
}

// The same through the depth-to-space map: `row` = d2s_row(batch, m), `cols` = d2s_col of n0..n0+3.
void store_d2s(uint m, uint n0, uint row, uvec4 cols, afp4 acc, afp4 c) {
  if (m >= p.M || n0 >= p.N) return;
  const afp4 result = afp(uintBitsToFloat(p.alpha_bits)) * acc + c;
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    if (n0 + j < p.N) y_put(row + cols[j], vkg_epilogue(result[j]));
  }
}

// BLOCK_A4(i) and BLOCK_A(i): row i of the block's A at k .. k + 3 and at k, inside the k loops.
#ifdef VKG_BLOCK_SHUFFLE_A
// Lavapipe moves a shuffle from a constant lane with one vector permute, while every load, uniform
// or not, is a call that reads each SIMD lane's texel (docs/bench.md, "What lavapipe's loads cost").
// The shuffle goes through fp32 (no 16-bit subgroup types needed).
#define BLOCK_A4(i) afp4(subgroupShuffle(mine[(i) / 8], (i) % 8))
#define BLOCK_A(i) afp(subgroupShuffle(mine1[(i) / 8], (i) % 8))
#else
#define BLOCK_A4(i) a4_at((a_row[i] + k) / 4)
#define BLOCK_A(i) a_at(a_row[i] + k)
#endif

void main() {
  const uint blocks_n = (p.N + 3) / 4;
  const uint cb = gl_GlobalInvocationID.x * kColVecs;
#ifdef VKG_BLOCK_SHUFFLE_A
  if (blocks_n == 0) return;  // every lane takes part in the shuffles: those past N are not stored
#else
  if (blocks_n == 0 || cb >= blocks_n) return;
#endif
  uint cv[kColVecs];  // column vectors past N read the last one and are not stored
  [[unroll]] for (uint j = 0; j < kColVecs; ++j) cv[j] = min(cb + j, blocks_n - 1);
  afp4 ccol[kColVecs];  // c_cols of each column vector
  [[unroll]] for (uint j = 0; j < kColVecs; ++j) ccol[j] = c_cols((cb + j) * 4);
  const uint blocks_m = (p.M + kRows - 1) / kRows;
  const uint b_sk4 = p.b_sk / 4;
  for (uint batch = gl_WorkGroupID.z; batch < p.batches; batch += gl_NumWorkGroups.z) {
    const uint a_base = gemm_a_base(batch);
    const uint b_base = gemm_b_base(batch) / 4;
    for (uint mb = gl_WorkGroupID.y; mb < blocks_m; mb += gl_NumWorkGroups.y) {
      const uint m0 = mb * kRows;
      uint a_row[kRows];  // rows past M read row M - 1 and are not stored
      [[unroll]] for (uint i = 0; i < kRows; ++i) a_row[i] = a_base + min(m0 + i, p.M - 1) * p.a_sm;
#ifdef VKG_BLOCK_SHUFFLE_A
      uint a_mine[kRows / 8];  // the rows this lane reads for its group of 8
      [[unroll]] for (uint h = 0; h < kRows / 8; ++h)
        a_mine[h] = a_base + min(m0 + 8 * h + (gl_SubgroupInvocationID & 7u), p.M - 1) * p.a_sm;
#endif
      afp4 acc[kRows * kColVecs];
      [[unroll]] for (uint i = 0; i < kRows * kColVecs; ++i) acc[i] = afp4(0);
      uint bi = b_base;
      uint k = 0;
#ifdef VKG_BLOCK_WIDE_A
      // lavapipe loads a storage buffer one invocation at a time per load instruction, whatever
      // its width: eight floats in one u64vec4 cost about half of two vec4 (four uint64_t loads
      // cost as much as two vec4: measured in docs/bench.md).
      for (; k + 8 <= p.K; k += 8) {
        afp4 bv[8 * kColVecs];  // [k][column vector]
        [[unroll]] for (uint kk = 0; kk < 8; ++kk) {
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) bv[kk * kColVecs + j] = b4_at(bi + kk * b_sk4 + cv[j]);
        }
        bi += 8 * b_sk4;
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const u64vec4 w = a8[(a_row[i] + k) / 8];
          const vec4 av = uintBitsToFloat(uvec4(unpackUint2x32(w.x), unpackUint2x32(w.y)));
          const vec4 aw = uintBitsToFloat(uvec4(unpackUint2x32(w.z), unpackUint2x32(w.w)));
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
            acc[i * kColVecs + j] += av.x * bv[j] + av.y * bv[kColVecs + j] + av.z * bv[2 * kColVecs + j] +
                                     av.w * bv[3 * kColVecs + j] + aw.x * bv[4 * kColVecs + j] +
                                     aw.y * bv[5 * kColVecs + j] + aw.z * bv[6 * kColVecs + j] +
                                     aw.w * bv[7 * kColVecs + j];
          }
        }
      }
#endif
      for (; k + 4 <= p.K; k += 4) {
        afp4 bv[4 * kColVecs];  // [k][column vector]
        [[unroll]] for (uint kk = 0; kk < 4; ++kk) {
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) bv[kk * kColVecs + j] = b4_at(bi + kk * b_sk4 + cv[j]);
        }
        bi += 4 * b_sk4;
#ifdef VKG_BLOCK_SHUFFLE_A
        vec4 mine[kRows / 8];
        [[unroll]] for (uint h = 0; h < kRows / 8; ++h) mine[h] = vec4(a4_at((a_mine[h] + k) / 4));
#endif
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const afp4 av = BLOCK_A4(i);
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
            acc[i * kColVecs + j] += av.x * bv[j] + av.y * bv[kColVecs + j] + av.z * bv[2 * kColVecs + j] +
                                     av.w * bv[3 * kColVecs + j];
          }
        }
      }
      for (; kKTail == 1 && k < p.K; ++k) {
        afp4 bv[kColVecs];
        [[unroll]] for (uint j = 0; j < kColVecs; ++j) bv[j] = b4_at(bi + cv[j]);
        bi += b_sk4;
#ifdef VKG_BLOCK_SHUFFLE_A
        float mine1[kRows / 8];
        [[unroll]] for (uint h = 0; h < kRows / 8; ++h) mine1[h] = float(a_at(a_mine[h] + k));
#endif
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const afp av = BLOCK_A(i);
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) acc[i * kColVecs + j] += av * bv[j];
        }
      }
      if (kWide && kDepthToSpace == 0) {
        const afp alpha = afp(uintBitsToFloat(p.alpha_bits));
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const uint m = m0 + i;
          if (m >= p.M) continue;
          const afp crow = c_row(m);
          [[unroll]] for (uint j = 0; j < kColVecs; j += 2) {
            const uint n0 = (cb + j) * 4;  // a multiple of 8, as N is: n0 < N holds all eight
            if (n0 >= p.N) continue;
            y8_put(((batch * p.M + m) * p.N + n0) / 8, vkg_epilogue4(alpha * acc[i * kColVecs + j] + crow + ccol[j]),
                   vkg_epilogue4(alpha * acc[i * kColVecs + j + 1] + crow + ccol[j + 1]));
          }
        }
      } else if (kDepthToSpace == 0) {
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const afp crow = c_row(m0 + i);
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
            store(batch, m0 + i, (cb + j) * 4, acc[i * kColVecs + j], crow + ccol[j]);
          }
        }
      } else if (kD2SPairs == 1) {
        const afp alpha = afp(uintBitsToFloat(p.alpha_bits));
        [[unroll]] for (uint i = 0; i < kRows; i += 2) {
          const uint m = m0 + i;  // M is even (whole taps): m + 1 < M as well
          if (m >= p.M) continue;
          const uint row = d2s_row(batch, m);
          const afp c0 = c_row(m), c1 = c_row(m + 1);
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
            const uint n0 = (cb + j) * 4;
            if (n0 >= p.N) continue;
            const afp4 r0 = alpha * acc[i * kColVecs + j] + c0 + ccol[j];
            const afp4 r1 = alpha * acc[(i + 1) * kColVecs + j] + c1 + ccol[j];
            const uint o = (row + d2s_col(n0)) / 4;  // a multiple of 8 elements
            if (kWide) {
              y8_put(o / 2, vkg_epilogue4(afp4(r0.x, r1.x, r0.y, r1.y)), vkg_epilogue4(afp4(r0.z, r1.z, r0.w, r1.w)));
            } else {
              y4_put(o, vkg_epilogue4(afp4(r0.x, r1.x, r0.y, r1.y)));
              y4_put(o + 1, vkg_epilogue4(afp4(r0.z, r1.z, r0.w, r1.w)));
            }
          }
        }
      } else {
        uvec4 cols[kColVecs];
        [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
          [[unroll]] for (uint e = 0; e < 4; ++e) cols[j][e] = d2s_col(min((cb + j) * 4 + e, p.N - 1));
        }
        [[unroll]] for (uint i = 0; i < kRows; ++i) {
          const uint row = d2s_row(batch, min(m0 + i, p.M - 1));
          const afp crow = c_row(m0 + i);
          [[unroll]] for (uint j = 0; j < kColVecs; ++j) {
            store_d2s(m0 + i, (cb + j) * 4, row, cols[j], acc[i * kColVecs + j], crow + ccol[j]);
          }
        }
      }
    }
  }
}
