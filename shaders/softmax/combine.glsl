// The shared-memory tree of the workgroup-per-row softmax shaders (softmax/workgroup.comp,
// softmax/vec4.comp). Include after declaring kWorkgroupSize (a power of two) and
// `shared float sh_f[kWorkgroupSize]`.
#ifndef VKG_SOFTMAX_COMBINE_GLSL
#define VKG_SOFTMAX_COMBINE_GLSL

// barrier() also makes shared memory writes visible (WorkgroupMemory semantics).
void sync() { barrier(); }

// max_op: the maximum of every invocation's v, else their sum (every invocation must call it).
float workgroup_combine(bool max_op, float v) {
  const uint lid = gl_LocalInvocationID.x;
  sh_f[lid] = v;
  sync();
  for (uint s = kWorkgroupSize / 2; s > 0; s >>= 1) {
    if (lid < s) sh_f[lid] = max_op ? max(sh_f[lid], sh_f[lid + s]) : sh_f[lid] + sh_f[lid + s];
    sync();
  }
  const float result = sh_f[0];
  sync();
  return result;
}

#endif  // VKG_SOFTMAX_COMBINE_GLSL
