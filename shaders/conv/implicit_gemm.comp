// vkgraphy-variants: f32 f16 f16acc32
// Conv and ConvTranspose as an implicit GEMM on the shared-memory core of gemm/smem_tile.glsl,
// with the operands of conv/implicit_gemm_operands.glsl (its bindings, push constants and
// constant 9): no im2col buffer is written.
// Specialization constants: those of gemm/smem_tile.glsl (kVecB must be 0; kVecA needs Conv
// with kdim % 4 == 0; kSplits must be 1); 9 kTranspose; the epilogue's.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "conv/implicit_gemm_operands.glsl"

layout(binding = 1) readonly buffer W4 { sfp4 w4[]; };

afp4 smem_a4(uint m, uint k) { return sfp2afp4(w4[(g_w_base + m * p.kdim + k) / 4]); }

afp4 smem_b4(uint k, uint pos) { return afp4(0); }  // kVecB is 0: B has no vec4 runs

#include "gemm/smem_tile.glsl"

void main() { smem_gemm(p.mg, p.od * p.oh * p.ow, p.kdim, p.n * p.group); }
