// Linear invocation index for dispatches whose group counts come from
// linear_groups() (runtime/engine/tactic.h): groups spread over x and y so that
// large tensors stay within the device's per-dimension group limits.
//
// Shaders including this declare `layout(local_size_x_id = 0) in;` (the
// workgroup size is specialization constant 0). The size is read through a
// plain specialization constant with the same id rather than gl_WorkGroupSize:
// glslang gives gl_WorkGroupSize its default (1, 1, 1) in code that precedes the
// local_size_x_id declaration, so an include placed above it silently computed
// wrong indices beyond the first workgroup.
#ifndef VKG_COMMON_INDEX_GLSL
#define VKG_COMMON_INDEX_GLSL

layout(constant_id = 0) const uint vkg_workgroup_size_x = 1;

uint vkg_linear_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * vkg_workgroup_size_x + gl_LocalInvocationID.x;
}

#endif  // VKG_COMMON_INDEX_GLSL
