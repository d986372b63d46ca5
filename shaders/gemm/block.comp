// vkgraphy-variants: f32 f16 f16acc32
// vkgraphy-texel-reads: A and B (gemm/block_texel: a 192 x 192 x 6400 product, 31 -> 64 GFLOP/s on lavapipe)
// Register-blocked GEMM with the block held in registers: each invocation
// computes a kRows x (4 * kColVecs) block of Y in a fixed-size array of vec4
// accumulators that every loop indexes with compile-time constants (all loops
// over the block are unrolled once the specialization constants are known),
// reading A as vec4 runs along k and B as vec4 rows. The interface of
// gemm/common.glsl, with the requirements of reg.comp on a packed B (b_sn == 1,
// b_sk and every B batch base a multiple of 4, rows readable up to
// round_up(N, 4)) and on A for vec4 loads (a_sk == 1, a_sm and every A batch
// base a multiple of 4; K need not be: the tail runs as scalars).
// Dispatch: groups (ceil(ceil(ceil(N / 4) / kColVecs) / local size), row
// blocks, batches), as reg.comp; row blocks and batches past the y and z
// counts are looped over.
// Specialization constants: 0 (local_size_x_id) workgroup size; 1 kRows
// (1..16); 2 kColVecs (1..4); 3 kNVec4 (N a multiple of 4: Y stored as vec4);
// 4 kDepthToSpace (1: ConvTranspose with kernel == strides and no padding:
// row m = channel * taps + tap and column n = input position land in the
// output [batches][M / taps][id * kd][ih * kh][iw * kw] at the position the
// tap of the kernel puts them; the map is constants 8..13 = {id, ih, iw, kd, kh, kw}); 5 kD2SPairs
// (with kDepthToSpace, kw == 2, iw % 4 == 0 and kRows even: taps kx = 0, 1
// written together as two vec4s); 7 kStore8 ("_texel" builds: column-vector
// pairs stored eight wide, see gemm/block_main.glsl); 6 kCMode (0: no C, 1: C along M only,
// c_sn == 0, read once per row, 2: any C strides, 3: C along N only, c_sm == 0 and c_sn == 1,
// read once per column; it replaces the flags
// word's kGemmHasC, which this shader does not read); 14 kKTail (0: K % 4 == 0, no scalar tail
// loop); 40 kF32Bindings (f16
// variants: bit b, binding b holds fp32, a fused reformat; common/f32_bindings.glsl).
// Push constants: GemmParams (16 words).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "gemm/block_main.glsl"
