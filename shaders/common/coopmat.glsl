// Cooperative matrices in one spelling for both extensions: a shader marked
// `vkgraphy-coopmat-khr` (cmake/shaders.cmake) is compiled once against
// VK_NV_cooperative_matrix (NVIDIA only; Debian's glslang) and once more,
// with VKG_COOPMAT_KHR defined, against the cross-vendor
// VK_KHR_cooperative_matrix (AMD, Intel, NVIDIA; a newer glslang). Fragments
// are subgroup-scoped; loads and stores are row-major, their element offset and
// stride counted in elements of the array they read or write.
//   COOPMAT_A(R, C) / COOPMAT_B(R, C)  an fp16 operand of a multiply-add
//   COOPMAT_ACC(BITS, R, C)            an accumulator of fp16 (16) or fp32 (32)
//   coopmat_load(m, array, element, stride), coopmat_store(m, array, element, stride)
//   coopmat_load_vec8(m, array, element, stride)   the same from an array of uvec4s of eight
//                                      fp16 values each (element and stride in uvec4s)
//   coopmat_mul_add(a, b, c)           a * b + c
//   COOPMAT_ZERO(BITS, R, C)           an accumulator of zeros
// Include it before any declaration: it names its extension.
//
// A shader marked `vkgraphy-coopmat-emulated` is compiled a third time with VKG_COOPMAT_EMULATED,
// named "<dir>/<file>_emu.<V>": fragments of 16 x 16 spread over the subgroup by rows, for
// tests on devices without cooperative matrices
// (lavapipe; VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX, docs/testing.md). It is slow on purpose
// of nothing but correctness: what it checks is a shader's own indexing, staging and epilogue.
#if defined(VKG_COOPMAT_EMULATED)
// Each invocation holds rows l and l + L of every fragment (l its index in the subgroup, L the
// subgroup's size, 8 or more; rows past 15 are none): 32 of a fragment's 256 elements, so the code
// LLVM compiles keeps a fragment in 32 values, not 256. A multiply-add takes B's row k from the
// invocation holding it, through a shuffle. The loops over a fragment's columns and over k are
// unrolled: llvmpipe ends a loop after 65535 iterations in all (its loop limit), and a deep product
// runs these loops that often.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
struct vkg_coopmat_f16 { float16_t e[32]; };
struct vkg_coopmat_f32 { float e[32]; };
#define COOPMAT_A(R, C) vkg_coopmat_f16
#define COOPMAT_B(R, C) vkg_coopmat_f16
#define COOPMAT_ACC_16(R, C) vkg_coopmat_f16
#define COOPMAT_ACC_32(R, C) vkg_coopmat_f32
// Row `i` (0 or 1) of this invocation's two. The helpers below pick a row's elements by a select, not
// by an index computed from the subgroup size: that index would make the fragment an array in memory.
#define vkg_coopmat_row(i) (gl_SubgroupInvocationID + (i) * gl_SubgroupSize)
vkg_coopmat_f16 vkg_coopmat_zero_16() {
  vkg_coopmat_f16 m;
  [[unroll]] for (uint i = 0u; i < 32u; ++i) m.e[i] = float16_t(0);
  return m;
}
vkg_coopmat_f32 vkg_coopmat_zero_32() {
  vkg_coopmat_f32 m;
  [[unroll]] for (uint i = 0u; i < 32u; ++i) m.e[i] = 0.0;
  return m;
}
#define COOPMAT_ZERO_16(R, C) vkg_coopmat_zero_16()
#define COOPMAT_ZERO_32(R, C) vkg_coopmat_zero_32()
// Row-major, `element` and `stride` in elements of the array.
#define coopmat_load(m, array, element, stride)                                 \
  [[unroll]] for (uint vkg_i = 0u; vkg_i < 2u; ++vkg_i)                        \
    if (vkg_coopmat_row(vkg_i) < 16u)                                           \
      [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; ++vkg_c)                    \
        m.e[vkg_i * 16u + vkg_c] = array[(element) + vkg_coopmat_row(vkg_i) * (stride) + vkg_c]
// From uvec4s of eight fp16 values: column c of a row is half c % 2 of component c % 8 / 2 of
// vector c / 8.
#define coopmat_load_vec8(m, array, element, stride)                                              \
  [[unroll]] for (uint vkg_i = 0u; vkg_i < 2u; ++vkg_i)                                          \
    if (vkg_coopmat_row(vkg_i) < 16u)                                                             \
      [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; vkg_c += 2u) {                                \
        const f16vec2 vkg_h = unpackFloat2x16(                                                    \
            array[(element) + vkg_coopmat_row(vkg_i) * (stride) + vkg_c / 8u][vkg_c % 8u / 2u]); \
        m.e[vkg_i * 16u + vkg_c] = vkg_h.x;                                                       \
        m.e[vkg_i * 16u + vkg_c + 1u] = vkg_h.y;                                                  \
      }
#define coopmat_store(m, array, element, stride)                                \
  [[unroll]] for (uint vkg_i = 0u; vkg_i < 2u; ++vkg_i)                        \
    if (vkg_coopmat_row(vkg_i) < 16u)                                           \
      [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; ++vkg_c)                    \
        array[(element) + vkg_coopmat_row(vkg_i) * (stride) + vkg_c] = m.e[vkg_i * 16u + vkg_c]
// Elements (k, col) and (k, col + 1) of B (col even), from the invocation holding row k: one shuffle
// of the pair packed in a word (fp16 shuffles would need another extension; a float shuffle of each
// element took LLVM twice as long over gemm/coopmat_emu.f16).
f16vec2 vkg_coopmat_b2(vkg_coopmat_f16 b, uint k, uint col) {
  const uint i = k < gl_SubgroupSize ? 0u : 1u;
  const uint pair = i == 0u ? packFloat2x16(f16vec2(b.e[col], b.e[col + 1u]))
                            : packFloat2x16(f16vec2(b.e[16u + col], b.e[17u + col]));
  return unpackFloat2x16(subgroupShuffle(pair, k - i * gl_SubgroupSize));
}
vkg_coopmat_f16 coopmat_mul_add(vkg_coopmat_f16 a, vkg_coopmat_f16 b, vkg_coopmat_f16 c) {
  [[unroll]] for (uint k = 0u; k < 16u; ++k) {
    [[unroll]] for (uint col = 0u; col < 16u; col += 2u) {
      const f16vec2 bk = vkg_coopmat_b2(b, k, col);
      c.e[col] += a.e[k] * bk.x;
      c.e[col + 1u] += a.e[k] * bk.y;
      c.e[16u + col] += a.e[16u + k] * bk.x;
      c.e[17u + col] += a.e[16u + k] * bk.y;
    }
  }
  return c;
}
// Element (k, col) of B as a float, from the invocation holding row k (for fp32 accumulators: one
// float shuffle compiles faster here than a pair's unpacking and widening).
float vkg_coopmat_b(vkg_coopmat_f16 b, uint k, uint col) {
  const uint i = k < gl_SubgroupSize ? 0u : 1u;
  return subgroupShuffle(float(i == 0u ? b.e[col] : b.e[16u + col]), k - i * gl_SubgroupSize);
}
vkg_coopmat_f32 coopmat_mul_add(vkg_coopmat_f16 a, vkg_coopmat_f16 b, vkg_coopmat_f32 c) {
  [[unroll]] for (uint k = 0u; k < 16u; ++k) {
    [[unroll]] for (uint col = 0u; col < 16u; ++col) {
      const float bk = vkg_coopmat_b(b, k, col);
      c.e[col] += float(a.e[k]) * bk;
      c.e[16u + col] += float(a.e[16u + k]) * bk;
    }
  }
  return c;
}
#elif defined(VKG_COOPMAT_KHR)
#extension GL_KHR_cooperative_matrix : require
#define COOPMAT_A(R, C) coopmat<float16_t, gl_ScopeSubgroup, R, C, gl_MatrixUseA>
#define COOPMAT_B(R, C) coopmat<float16_t, gl_ScopeSubgroup, R, C, gl_MatrixUseB>
#define COOPMAT_ACC_16(R, C) coopmat<float16_t, gl_ScopeSubgroup, R, C, gl_MatrixUseAccumulator>
#define COOPMAT_ACC_32(R, C) coopmat<float, gl_ScopeSubgroup, R, C, gl_MatrixUseAccumulator>
#define coopmat_load(m, array, element, stride) \
  coopMatLoad(m, array, element, stride, gl_CooperativeMatrixLayoutRowMajor)
#define coopmat_store(m, array, element, stride) \
  coopMatStore(m, array, element, stride, gl_CooperativeMatrixLayoutRowMajor)
#define coopmat_mul_add(a, b, c) coopMatMulAdd(a, b, c)
#else
#extension GL_NV_cooperative_matrix : require
#define COOPMAT_A(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_B(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_ACC_16(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_ACC_32(R, C) fcoopmatNV<32, gl_ScopeSubgroup, R, C>
#define coopmat_load(m, array, element, stride) coopMatLoadNV(m, array, element, stride, false)
#define coopmat_store(m, array, element, stride) coopMatStoreNV(m, array, element, stride, false)
#define coopmat_mul_add(a, b, c) coopMatMulAddNV(a, b, c)
#endif
// COOPMAT_ACC(BITS, R, C): BITS expanded first (ACC_BITS is a macro).
#define COOPMAT_ACC_(BITS, R, C) COOPMAT_ACC_##BITS(R, C)
#define COOPMAT_ACC(BITS, R, C) COOPMAT_ACC_(BITS, R, C)
#if !defined(VKG_COOPMAT_EMULATED)
#define COOPMAT_ZERO_16(R, C) COOPMAT_ACC_16(R, C)(0.0)
#define COOPMAT_ZERO_32(R, C) COOPMAT_ACC_32(R, C)(0.0)
// Both extensions load from an array of uvec4s as from any other, counting in its elements.
#define coopmat_load_vec8(m, array, element, stride) coopmat_load(m, array, element, stride)
#endif
#define COOPMAT_ZERO_(BITS, R, C) COOPMAT_ZERO_##BITS(R, C)
#define COOPMAT_ZERO(BITS, R, C) COOPMAT_ZERO_(BITS, R, C)
