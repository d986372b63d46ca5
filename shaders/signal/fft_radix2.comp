// vkgraphy-variants: f32 f16acc32
// DFT and STFT of power-of-two length n as a radix-2 FFT: one workgroup per transformed
// signal (outer x frames x inner of them) loads its n samples (each times window[j] with
// kWindow; zeros past the terms or the signal's end) into shared memory in bit-reversed
// order, runs log2(n) butterfly stages, and writes the first `bins` results. Twiddles come
// from a table of cos and sin of 2 pi m / n (computed in double on the host). fp32.
// The layout is shaders/signal/dft.comp's.
// Bindings: 0 = X (kComplex: (re, im) pairs), 1 = twiddles (float32, n (cos, sin) pairs),
// 2 = window (terms values; unread without kWindow), 3 = Y ((re, im) pairs).
// Push constants: signals, frames, bins, inner, signal_length, step, n, terms, log2n.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kComplex           1: X holds (re, im) pairs; 0: reals
//   2 kInverse           1: inverse transform (sign +, scale 1 / n); 0: forward (sign -, scale 1)
//   3 kWindow            1: multiply sample j by window[j]
//   4 kMaxN              the shared buffer's size (at least n)
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kLocalSize = 64;
layout(constant_id = 1) const uint kComplex = 0;
layout(constant_id = 2) const uint kInverse = 0;
layout(constant_id = 3) const uint kWindow = 0;
layout(constant_id = 4) const uint kMaxN = 1024;

layout(push_constant) uniform Params {
  uint signals;
  uint frames;
  uint bins;
  uint inner;
  uint signal_length;
  uint step;
  uint n;
  uint terms;
  uint log2n;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer Twiddles { vec2 twiddle[]; };
layout(binding = 2) readonly buffer Window { sfp window[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

shared vec2 buf[kMaxN];

void main() {
  const uint s = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (s >= p.signals) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint i = s % p.inner;
  const uint of = s / p.inner;  // o * frames + f
  const uint f = of % p.frames, o = of / p.frames;
  const uint start = f * p.step;
  const uint terms = min(p.terms, p.signal_length - start);
  const uint channels = kComplex != 0 ? 2 : 1;
  for (uint j = lid; j < p.n; j += kLocalSize) {
    vec2 v = vec2(0.0);
    if (j < terms) {
      const uint at = ((o * p.signal_length + start + j) * p.inner + i) * channels;
      v.x = float(sfp2afp(x[at]));
      if (kComplex != 0) v.y = float(sfp2afp(x[at + 1]));
      if (kWindow != 0) v *= float(sfp2afp(window[j]));
    }
    buf[bitfieldReverse(j) >> (32 - p.log2n)] = v;
  }
  barrier();
  const float sign = kInverse != 0 ? 1.0 : -1.0;
  for (uint half_size = 1; half_size < p.n; half_size *= 2) {
    const uint stride = p.n / (2 * half_size);  // twiddle index step
    for (uint b = lid; b < p.n / 2; b += kLocalSize) {
      const uint pos = b % half_size;
      const uint i0 = (b / half_size) * 2 * half_size + pos, i1 = i0 + half_size;
      const vec2 t = twiddle[pos * stride];
      const vec2 w = vec2(t.x, sign * t.y);
      const vec2 a = buf[i0], c = buf[i1];
      const vec2 wc = vec2(w.x * c.x - w.y * c.y, w.x * c.y + w.y * c.x);
      buf[i0] = a + wc;
      buf[i1] = a - wc;
    }
    barrier();
  }
  const float scale = kInverse != 0 ? 1.0 / float(p.n) : 1.0;
  for (uint k = lid; k < p.bins; k += kLocalSize) {
    const uint e = (of * p.bins + k) * p.inner + i;
    y[2 * e] = afp2sfp(afp(buf[k].x * scale));
    y[2 * e + 1] = afp2sfp(afp(buf[k].y * scale));
  }
}
