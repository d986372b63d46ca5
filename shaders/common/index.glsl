// Linear invocation index for dispatches whose group counts come from
// linear_groups() (runtime/engine/tactic.h): groups spread over x and y so that
// large tensors stay within the device's per-dimension group limits.
#ifndef VKG_COMMON_INDEX_GLSL
#define VKG_COMMON_INDEX_GLSL

uint vkg_linear_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

#endif  // VKG_COMMON_INDEX_GLSL
