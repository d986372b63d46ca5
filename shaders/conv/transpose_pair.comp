// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: X and the weights
// Two upsampling ConvTransposes in a row as one layer (runtime/engine/graph_optimizer.h,
// transpose_pair): each with its kernel equal to its strides, so every output of the first takes
// one tap of one input and every output of the second one tap of one output of the first:
//   h[m1][y * kh1 + a][x * kw1 + c] = act1(b1[m1] + sum_ci W1[ci][m1][a][c] * X[ci][y][x])
//   Y[m2][(y * kh1 + a) * kh2 + b][(x * kw1 + c) * kw2 + d] =
//       act2(b2[m2] + sum_m1 W2[m1][m2][b][d] * h[m1][y * kh1 + a][x * kw1 + c])
// An invocation takes four inputs of a row (x = 4 q .. 4 q + 3) and one tap (a, c) of the first
// kernel, keeps the C1 values of h it makes for each input in registers (so the first
// ConvTranspose's output, the larger tensor, is never written) and writes, for each output
// channel, the kh2 rows under them: kw2 consecutive values per input (one two-wide store when kw2
// is 2). Reads go through texel buffers where the device has them ("_texel" build: on lavapipe a
// storage-buffer load costs a loop over the SIMD lanes, and this shader read that way ran 4-7x
// slower, 14-17 ms on PP-OCRv4 det's head).
// Bindings: 0 X [N][C][H][W]; 1 W1, packed [C][kh1 * kw1][C1]; 2 B1 [C1]; 3 W2 [C1][C2][kh2][kw2];
//   4 B2 [C2]; 5 Y [N][C2][H * kh1 * kh2][W * kw1 * kw2].
// Push constants: n, c, h, w, c2.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kC1; 2 kKh1, 3 kKw1 (the first
//   kernel); 4 kKh2, 5 kKw2 (the second's); 6 kInner, 7 kInnerAlpha, 8 kInnerBeta (act1: an
//   Activation kind and its parameters), 9 kInnerScale, 10 kInnerShift (after act1: v * scale +
//   shift); act2 is the epilogue's (20-24, common/epilogue.glsl). The tactic checks W % 4 == 0
//   and bounds kC1 and kKh2 * kKw2.
// Dispatch N * H * (W / 4) * kh1 * kw1 invocations (vkg_linear_index).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/precision.glsl"
#include "common/texel_reads.glsl"
#include "common/epilogue.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kC1 = 1;
layout(constant_id = 2) const uint kKh1 = 2;
layout(constant_id = 3) const uint kKw1 = 2;
layout(constant_id = 4) const uint kKh2 = 2;
layout(constant_id = 5) const uint kKw2 = 2;
layout(constant_id = 6) const uint kInner = 0;
layout(constant_id = 7) const float kInnerAlpha = 0.0;
layout(constant_id = 8) const float kInnerBeta = 0.0;
layout(constant_id = 9) const float kInnerScale = 1.0;
layout(constant_id = 10) const float kInnerShift = 0.0;

layout(push_constant) uniform Params {
  uint n, c, h, w, c2;
} p;

VKG_INPUT(x_at, x4_at, 0, x, x4)
VKG_INPUT(w1_at, w1_4_at, 1, w1, w1_4)
VKG_INPUT(b1_at, b1_4_at, 2, b1, b1_4)
VKG_INPUT(w2_at, w2_4_at, 3, w2, w2_4)
VKG_INPUT(b2_at, b2_4_at, 4, b2, b2_4)
#ifdef VKG_PRECISION_F32
#define vkg_sfp2 vec2
#else
#define vkg_sfp2 f16vec2
#endif
layout(binding = 5) writeonly buffer Y { sfp ys[]; };
layout(binding = 5) writeonly buffer Y2 { vkg_sfp2 ys2[]; };

const uint kTaps1 = kKh1 * kKw1;

void main() {
  const uint quads = p.w / 4;
  uint idx = vkg_linear_index();
  if (idx >= p.n * p.h * quads * kTaps1) return;
  const uint tap = idx % kTaps1;  // (a, c) of the first kernel
  idx /= kTaps1;
  const uint q = idx % quads;
  idx /= quads;
  const uint y = idx % p.h;
  const uint n = idx / p.h;
  const uint a = tap / kKw1, c = tap % kKw1;

  // The first ConvTranspose at tap (a, c): hv[m1] holds the four inputs' values; W1 is packed
  // [C][kh1 * kw1][C1] (kC1 % 4 == 0: read as vec4s).
  afp4 hv[kC1];
  [[unroll]] for (uint m1 = 0; m1 < kC1; ++m1) hv[m1] = afp4(0);
  const uint plane = p.h * quads;
  uint xi = n * p.c * plane + y * quads + q;
  uint ci = 0;
  // Four input channels a step: each accumulator takes four products per update (lavapipe keeps
  // these in memory, and merges every update with the lanes' mask: 1.93 -> 1.45 ms on PP-OCRv4 det's head).
  if (kC1 % 4 == 0) {
    for (; ci + 4 <= p.c; ci += 4, xi += 4 * plane) {
      afp4 xv[4];
      [[unroll]] for (uint j = 0; j < 4; ++j) xv[j] = x4_at(xi + j * plane);
      [[unroll]] for (uint m1 = 0; m1 < kC1; m1 += 4) {
        afp4 wv[4];
        [[unroll]] for (uint j = 0; j < 4; ++j) wv[j] = w1_4_at((((ci + j) * kTaps1 + tap) * kC1 + m1) / 4);
        [[unroll]] for (uint l = 0; l < 4; ++l)
          hv[m1 + l] += wv[0][l] * xv[0] + wv[1][l] * xv[1] + wv[2][l] * xv[2] + wv[3][l] * xv[3];
      }
    }
  }
  for (; ci < p.c; ++ci, xi += plane) {
    const afp4 xv = x4_at(xi);
    const uint wbase = (ci * kTaps1 + tap) * kC1;
    if (kC1 % 4 == 0) {
      [[unroll]] for (uint m1 = 0; m1 < kC1; m1 += 4) {
        const afp4 wv = w1_4_at((wbase + m1) / 4);
        [[unroll]] for (uint l = 0; l < 4; ++l) hv[m1 + l] += wv[l] * xv;
      }
    } else {
      [[unroll]] for (uint m1 = 0; m1 < kC1; ++m1) hv[m1] += w1_at(wbase + m1) * xv;
    }
  }
  afp bias1[kC1];  // read four at a time where kC1 % 4 == 0
  if (kC1 % 4 == 0) {
    [[unroll]] for (uint m1 = 0; m1 < kC1; m1 += 4) {
      const afp4 b = b1_4_at(m1 / 4);
      [[unroll]] for (uint l = 0; l < 4; ++l) bias1[m1 + l] = b[l];
    }
  } else {
    [[unroll]] for (uint m1 = 0; m1 < kC1; ++m1) bias1[m1] = b1_at(m1);
  }
  [[unroll]] for (uint m1 = 0; m1 < kC1; ++m1) {
    afp4 v = hv[m1] + bias1[m1];
    [[unroll]] for (uint l = 0; l < 4; ++l)
      v[l] = vkg_activation(kInner, afp(kInnerAlpha), afp(kInnerBeta), v[l]) * afp(kInnerScale) + afp(kInnerShift);
    hv[m1] = v;
  }

  // The second: each output channel's kh2 rows under (a, c), kw2 values for each input, at
  // columns ((x * kw1 + c) * kw2 + d): runs of kw2 (written as one store when kw2 is 2 or 4).
  const uint ow = p.w * kKw1 * kKw2, oh = p.h * kKh1 * kKh2;
  for (uint m2 = 0; m2 < p.c2; ++m2) {
    const afp bias = b2_at(m2);
    afp o[kKh2 * 4 * kKw2];  // [b][px][d]
    [[unroll]] for (uint i = 0; i < kKh2 * 4 * kKw2; ++i) o[i] = bias;
    [[unroll]] for (uint m1 = 0; m1 < kC1; ++m1) {
      // A 2x2 kernel's four taps are one vec4 (lavapipe fetches a texel per lane as dearly as a float).
      const afp4 w4 = kKh2 * kKw2 == 4 ? w2_4_at(m1 * p.c2 + m2) : afp4(0);
      [[unroll]] for (uint t = 0; t < kKh2 * kKw2; ++t) {
        const afp wv = kKh2 * kKw2 == 4 ? w4[t % 4] : w2_at((m1 * p.c2 + m2) * kKh2 * kKw2 + t);
        const uint b = t / kKw2, d = t % kKw2;
        [[unroll]] for (uint px = 0; px < 4; ++px) o[(b * 4 + px) * kKw2 + d] += wv * hv[m1][px];
      }
    }
    [[unroll]] for (uint b = 0; b < kKh2; ++b) {
      const uint row = (y * kKh1 + a) * kKh2 + b;
      const uint base = ((n * p.c2 + m2) * oh + row) * ow;
      [[unroll]] for (uint px = 0; px < 4; ++px) {
        const uint col = ((q * 4 + px) * kKw1 + c) * kKw2;
        const uint at = (b * 4 + px) * kKw2;
        if (kKw2 == 2) {
          ys2[(base + col) / 2] = vkg_sfp2(afp2sfp(vkg_epilogue(o[at])), afp2sfp(vkg_epilogue(o[at + 1])));
        } else {
          [[unroll]] for (uint d = 0; d < kKw2; ++d) ys[base + col + d] = afp2sfp(vkg_epilogue(o[at + d]));
        }
      }
    }
  }
}
