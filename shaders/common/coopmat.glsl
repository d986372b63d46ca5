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
// named "<dir>/<file>_emu.<V>": fragments of 16 x 16 held whole by every invocation of the
// subgroup, each computing them alone, for tests on devices without cooperative matrices
// (lavapipe; VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX, docs/testing.md). It is slow on purpose
// of nothing but correctness: what it checks is a shader's own indexing, staging and epilogue.
#if defined(VKG_COOPMAT_EMULATED)
// The loops over a fragment's columns and over k are unrolled: llvmpipe ends a loop after 65535
// iterations in all (its loop limit), and a deep product runs these loops that often.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
struct vkg_coopmat_f16 { float16_t e[256]; };
struct vkg_coopmat_f32 { float e[256]; };
#define COOPMAT_A(R, C) vkg_coopmat_f16
#define COOPMAT_B(R, C) vkg_coopmat_f16
#define COOPMAT_ACC_16(R, C) vkg_coopmat_f16
#define COOPMAT_ACC_32(R, C) vkg_coopmat_f32
vkg_coopmat_f16 vkg_coopmat_zero_16() {
  vkg_coopmat_f16 m;
  [[unroll]] for (uint i = 0u; i < 256u; ++i) m.e[i] = float16_t(0);
  return m;
}
vkg_coopmat_f32 vkg_coopmat_zero_32() {
  vkg_coopmat_f32 m;
  [[unroll]] for (uint i = 0u; i < 256u; ++i) m.e[i] = 0.0;
  return m;
}
#define COOPMAT_ZERO_16(R, C) vkg_coopmat_zero_16()
#define COOPMAT_ZERO_32(R, C) vkg_coopmat_zero_32()
// Row-major, `element` and `stride` in elements of the array.
#define coopmat_load(m, array, element, stride)          \
  for (uint vkg_r = 0u; vkg_r < 16u; ++vkg_r)            \
    [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; ++vkg_c) \
      m.e[vkg_r * 16u + vkg_c] = array[(element) + vkg_r * (stride) + vkg_c]
// From uvec4s of eight fp16 values: column c of a row is half c % 2 of component c % 8 / 2 of
// vector c / 8.
#define coopmat_load_vec8(m, array, element, stride)                                          \
  for (uint vkg_r = 0u; vkg_r < 16u; ++vkg_r)                                                \
    [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; vkg_c += 2u)                               \
      {                                                                                       \
        const f16vec2 vkg_h =                                                                 \
            unpackFloat2x16(array[(element) + vkg_r * (stride) + vkg_c / 8u][vkg_c % 8u / 2u]); \
        m.e[vkg_r * 16u + vkg_c] = vkg_h.x;                                                   \
        m.e[vkg_r * 16u + vkg_c + 1u] = vkg_h.y;                                              \
      }
// The subgroup's first invocation writes: every invocation holds the same fragment.
#define coopmat_store(m, array, element, stride)             \
  if (subgroupElect())                                        \
    for (uint vkg_r = 0u; vkg_r < 16u; ++vkg_r)               \
      [[unroll]] for (uint vkg_c = 0u; vkg_c < 16u; ++vkg_c)    \
        array[(element) + vkg_r * (stride) + vkg_c] = m.e[vkg_r * 16u + vkg_c]
vkg_coopmat_f16 coopmat_mul_add(vkg_coopmat_f16 a, vkg_coopmat_f16 b, vkg_coopmat_f16 c) {
  for (uint r = 0u; r < 16u; ++r) {
    [[unroll]] for (uint col = 0u; col < 16u; ++col) {
      float16_t sum = c.e[r * 16u + col];
      [[unroll]] for (uint k = 0u; k < 16u; ++k) sum += a.e[r * 16u + k] * b.e[k * 16u + col];
      c.e[r * 16u + col] = sum;
    }
  }
  return c;
}
vkg_coopmat_f32 coopmat_mul_add(vkg_coopmat_f16 a, vkg_coopmat_f16 b, vkg_coopmat_f32 c) {
  for (uint r = 0u; r < 16u; ++r) {
    [[unroll]] for (uint col = 0u; col < 16u; ++col) {
      float sum = c.e[r * 16u + col];
      [[unroll]] for (uint k = 0u; k < 16u; ++k) sum += float(a.e[r * 16u + k]) * float(b.e[k * 16u + col]);
      c.e[r * 16u + col] = sum;
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
#define coopmat_load_vec8(m, array, element, stride) coopmat_load(m, array, element, stride)
#else
#extension GL_NV_cooperative_matrix : require
#define COOPMAT_A(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_B(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_ACC_16(R, C) fcoopmatNV<16, gl_ScopeSubgroup, R, C>
#define COOPMAT_ACC_32(R, C) fcoopmatNV<32, gl_ScopeSubgroup, R, C>
#define coopmat_load(m, array, element, stride) coopMatLoadNV(m, array, element, stride, false)
#define coopmat_store(m, array, element, stride) coopMatStoreNV(m, array, element, stride, false)
#define coopmat_mul_add(a, b, c) coopMatMulAddNV(a, b, c)
#define coopmat_load_vec8(m, array, element, stride) coopmat_load(m, array, element, stride)
#endif
// COOPMAT_ACC(BITS, R, C): BITS expanded first (ACC_BITS is a macro).
#define COOPMAT_ACC_(BITS, R, C) COOPMAT_ACC_##BITS(R, C)
#define COOPMAT_ACC(BITS, R, C) COOPMAT_ACC_(BITS, R, C)
#if !defined(VKG_COOPMAT_EMULATED)
#define COOPMAT_ZERO_16(R, C) COOPMAT_ACC_16(R, C)(0.0)
#define COOPMAT_ZERO_32(R, C) COOPMAT_ACC_32(R, C)(0.0)
#endif
#define COOPMAT_ZERO_(BITS, R, C) COOPMAT_ZERO_##BITS(R, C)
#define COOPMAT_ZERO(BITS, R, C) COOPMAT_ZERO_(BITS, R, C)
