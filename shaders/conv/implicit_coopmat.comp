// vkgraphy-variants: f16 f16acc32
// vkgraphy-coopmat-khr
// vkgraphy-coopmat-emulated
// Conv and ConvTranspose as an implicit GEMM on tensor cores: the cooperative-matrix core of
// gemm/coopmat_tile.glsl (its tiles, needs and constants 0-3) over the operands of
// conv/implicit_gemm_operands.glsl (its bindings, push constants and constant 9), A and B
// rounded to fp16 as they are staged; the bias and the fused epilogue in fp32 with .f16acc32.
// Dispatch: x = ceil(positions / kBN), y = row tiles of the group's output channels, z = images
// times groups.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/coopmat.glsl"
#include "common/precision.glsl"
#include "common/epilogue.glsl"
#include "conv/implicit_gemm_operands.glsl"

void coop_batch(uint batch) { smem_batch(batch); }

float16_t coop_a(uint m, uint k) { return float16_t(smem_a1(m, k)); }

float16_t coop_b(uint k, uint pos) { return float16_t(smem_b1(k, pos)); }

void coop_store(uint batch, uint m, uint pos, afp sum) { smem_store(batch, 0u, m, pos, sum); }

#include "gemm/coopmat_tile.glsl"

void main() { coopmat_gemm(p.mg, p.od * p.oh * p.ow, p.kdim, p.n * p.group); }
