// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: A and B (as gemm/block.comp)
// gemm/block.comp with A's rows shared through subgroup shuffles: lane l of each group of 8 lanes
// reads rows m0 + l, m0 + 8 + l, ... of the block, and each row reaches every lane by a shuffle
// from a constant lane, so a k step loads kRows / 8 A vectors instead of kRows. On lavapipe a
// texel load costs a call whatever its lanes read, and a shuffle from a constant lane one vector
// permute (docs/bench.md). Interface and specialization constants as gemm/block.comp; needs
// kRows % 8 == 0, subgroup shuffles, subgroups of at least 8 invocations and full subgroups
// (workgroups of whole subgroups).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define VKG_BLOCK_SHUFFLE_A 1
#include "gemm/block_main.glsl"
