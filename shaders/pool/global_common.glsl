// Shared by the global pooling shaders (pool/global_*.comp): push constants and
// the per-element terms. The including shader declares the specialization
// constants kMode and kP first.
//
// Push constants: 2 words.
//   planes      N * C, one output per plane
//   plane_size  elements per plane (the product of the spatial dims), >= 1
#ifndef VKG_POOL_GLOBAL_COMMON_GLSL
#define VKG_POOL_GLOBAL_COMMON_GLSL

const uint kModeMax = 0;
const uint kModeAverage = 1;
const uint kModeLp = 2;

layout(push_constant) uniform Params {
  uint planes;
  uint plane_size;
} params;

// What an average or an Lp norm sums per element.
afp4 lp_term4(afp4 v) {
  if (kMode == kModeAverage) return v;
  if (kP == 1) return abs(v);
  if (kP == 2) return v * v;
  return pow(abs(v), afp4(kP));
}

// The mean or the norm from the sum over a plane.
afp finish_mean_or_norm(afp acc) {
  if (kMode == kModeAverage) return afp(float(acc) / float(params.plane_size));
  if (kP == 1) return acc;
  if (kP == 2) return sqrt(acc);
  return acc > afp(0) ? pow(acc, afp(1) / afp(kP)) : afp(0);
}

// max over v's lanes and m, keeping m where a lane is NaN or not larger.
afp4 max_keep(afp4 m, afp4 v) { return mix(m, v, greaterThan(v, m)); }

#endif  // VKG_POOL_GLOBAL_COMMON_GLSL
