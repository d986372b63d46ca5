// vkgraphy-variants: f32
// gemm/block.comp with A read eight floats per load (u64vec4, unpacked to two
// vec4): on lavapipe, which loads a storage buffer one component per
// invocation at a time, that halves the cost of the A loads (1024^3: 30-31
// GFLOP/s against 25.7 for gemm/block, docs/bench.md). Interface and
// specialization constants as gemm/block.comp; needs the device's 64-bit
// integers (shaderInt64) and a_sk == 1 with a_sm and every A batch base a
// multiple of 8. fp32 only.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define VKG_BLOCK_WIDE_A 1
#include "gemm/block_main.glsl"
