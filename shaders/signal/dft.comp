// vkgraphy-variants: f32 f16acc32
// DFT and STFT as direct sums, one invocation per complex element of Y [outer, frames, bins,
// inner, 2]:
//   Y[o, f, k, i] = scale * sum_j X[o, f * step + j, i] * window[j] * e^(sign * 2 pi i j k / n)
// over j < terms with f * step + j < length (samples past the signal's end are zero). The
// twiddles come from a table of cos and sin of 2 pi m / n (computed in double on the host)
// at m = (j * k) mod n, so no angle loses precision however long the sum. The sum is fp32.
// DFT is one frame (frames 1, step 0); STFT has inner 1.
// Bindings: 0 = X (kComplex: (re, im) pairs), 1 = twiddles (float32, n (cos, sin) pairs),
// 2 = window (terms values; unread without kWindow), 3 = Y ((re, im) pairs).
// Push constants: total (complex outputs), frames, bins, inner, signal_length (the signal axis of
// X), step, n (the DFT length), terms.
// Specialization constants:
//   0 (local_size_x_id)  workgroup size
//   1 kComplex           1: X holds (re, im) pairs; 0: reals
//   2 kInverse           1: inverse transform (sign +, scale 1 / n); 0: forward (sign -, scale 1)
//   3 kWindow            1: multiply sample j by window[j]
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/index.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kComplex = 0;
layout(constant_id = 2) const uint kInverse = 0;
layout(constant_id = 3) const uint kWindow = 0;

layout(push_constant) uniform Params {
  uint total;
  uint frames;
  uint bins;
  uint inner;
  uint signal_length;
  uint step;
  uint n;
  uint terms;
} p;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer Twiddles { vec2 twiddle[]; };
layout(binding = 2) readonly buffer Window { sfp window[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

void main() {
  const uint e = vkg_linear_index();
  if (e >= p.total) return;
  const uint i = e % p.inner;
  const uint k = (e / p.inner) % p.bins;
  const uint of = e / (p.inner * p.bins);  // o * frames + f
  const uint f = of % p.frames, o = of / p.frames;
  const uint start = f * p.step;
  const uint terms = min(p.terms, p.signal_length - start);
  const float sign = kInverse != 0 ? 1.0 : -1.0;
  const uint channels = kComplex != 0 ? 2 : 1;
  float re = 0.0, im = 0.0;
  uint m = 0;  // (j * k) mod n
  for (uint j = 0; j < terms; ++j) {
    const uint at = ((o * p.signal_length + start + j) * p.inner + i) * channels;
    float xr = float(sfp2afp(x[at]));
    float xi = kComplex != 0 ? float(sfp2afp(x[at + 1])) : 0.0;
    if (kWindow != 0) {
      const float w = float(sfp2afp(window[j]));
      xr *= w;
      xi *= w;
    }
    const vec2 t = twiddle[m];
    const float cr = t.x, ci = sign * t.y;
    re += xr * cr - xi * ci;
    im += xr * ci + xi * cr;
    m += k;
    if (m >= p.n) m -= p.n;
  }
  const float scale = kInverse != 0 ? 1.0 / float(p.n) : 1.0;
  y[2 * e] = afp2sfp(afp(re * scale));
  y[2 * e + 1] = afp2sfp(afp(im * scale));
}
