// vkgraphy-variants: f32
// gemm/block_wide_a.comp with B read through a uniform texel buffer, as
// gemm/block_texel.comp: both lavapipe load savings at once. Needs the
// device features int64 and texel-buffers. fp32 only.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define VKG_BLOCK_WIDE_A 1
#define VKG_BLOCK_TEXEL_B 1
#include "gemm/block_main.glsl"
