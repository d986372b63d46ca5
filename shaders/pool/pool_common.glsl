// Shared by the windowed pooling shaders (pool/window*.comp): their push
// constants and the window arithmetic. The including shader declares the
// specialization constants kMode, kP, kColumnMajor and kCountIncludePad first.
//
// Push constants: 23 words.
//   total       outputs (N * C * O0 * O1 * O2)
//   empty_bits  max pooling's value for a window that lies entirely in the
//               padding: float bits (f32) or an int32
//   per spatial dim d (3 dims; fewer are given leading dims of size 1):
//   in_dims, out_dims, kernel, strides, dilations, pads_begin, pads_end
#ifndef VKG_POOL_COMMON_GLSL
#define VKG_POOL_COMMON_GLSL

const uint kModeMax = 0;
const uint kModeAverage = 1;
const uint kModeLp = 2;

layout(push_constant) uniform Params {
  uint total;
  uint empty_bits;
  int in_dims[3];
  int out_dims[3];
  int kernel[3];
  int strides[3];
  int dilations[3];
  int pads_begin[3];
  int pads_end[3];
} params;

// The window of output position `o` along spatial dim `d`: it starts at input
// position `start`; kernel offsets [kmin, kmax) fall inside the input, offsets
// [0, padded) inside the padded input (count_include_pad's count).
struct TapRange {
  int start;
  int kmin;
  int kmax;
  int padded;
};

TapRange tap_range(int d, int o) {
  TapRange r;
  const int dil = params.dilations[d];
  r.start = o * params.strides[d] - params.pads_begin[d];
  const int room = params.in_dims[d] - r.start;
  const int padded_room = params.in_dims[d] + params.pads_end[d] - r.start;
  if (dil == 1) {  // uniform: skips the divisions
    r.kmin = max(-r.start, 0);
    r.kmax = max(min(params.kernel[d], room), r.kmin);
    r.padded = clamp(padded_room, 0, params.kernel[d]);
    return r;
  }
  r.kmin = r.start < 0 ? (dil - 1 - r.start) / dil : 0;
  r.kmax = room <= 0 ? 0 : min(params.kernel[d], (room + dil - 1) / dil);
  r.kmax = max(r.kmax, r.kmin);
  r.padded = padded_room <= 0 ? 0 : min(params.kernel[d], (padded_room + dil - 1) / dil);
  return r;
}

// The value of an empty max window (float variants).
sfp empty_float_value() {
#if defined(VKG_PRECISION_F32)
  return uintBitsToFloat(params.empty_bits);
#else
  return sfp(unpackHalf2x16(params.empty_bits).x);
#endif
}

// MaxPool's Indices value for the input position `at` (dims 0, 1, 2) of `plane`.
int argmax_index(int plane, ivec3 at) {
  const int local = kColumnMajor == 1
                        ? at.x + params.in_dims[0] * (at.y + params.in_dims[1] * at.z)
                        : (at.x * params.in_dims[1] + at.y) * params.in_dims[2] + at.z;
  return plane * params.in_dims[0] * params.in_dims[1] * params.in_dims[2] + local;
}

// What an average (kModeAverage) or an Lp norm (kModeLp) sums per tap.
afp lp_term(afp v) {
  if (kMode == kModeAverage) return v;
  if (kP == 1) return abs(v);
  if (kP == 2) return v * v;
  return pow(abs(v), afp(kP));
}

// The mean or the norm from the sum over a window's taps.
afp finish_mean_or_norm(afp acc, TapRange rz, TapRange ry, TapRange rx) {
  if (kMode == kModeAverage) {
    const int count = kCountIncludePad == 1
                          ? rz.padded * ry.padded * rx.padded
                          : (rz.kmax - rz.kmin) * (ry.kmax - ry.kmin) * (rx.kmax - rx.kmin);
    return count > 0 ? afp(float(acc) / float(count)) : afp(0);
  }
  if (kP == 1) return acc;
  if (kP == 2) return sqrt(acc);
  return acc > afp(0) ? pow(acc, afp(1) / afp(kP)) : afp(0);
}

#endif  // VKG_POOL_COMMON_GLSL
