// vkgraphy-variants: f32 f16 f16acc32
// gemm/block.comp with B read through a uniform texel buffer of vec4s (binding
// 1): lavapipe gathers texels in SIMD where it loads a storage buffer one
// invocation at a time (a 192 x 192 x 6400 product: 31 -> 40 GFLOP/s,
// docs/bench.md). Interface and specialization constants as gemm/block.comp;
// needs the device's texel buffers (device feature texel-buffers). A fused
// reformat on B needs no specialization bit: the runtime views B as fp32.
#version 450
#extension GL_GOOGLE_include_directive : require
#define VKG_BLOCK_TEXEL_B 1
#include "gemm/block_main.glsl"
