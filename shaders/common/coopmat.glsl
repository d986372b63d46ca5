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
//   coopmat_mul_add(a, b, c)           a * b + c
// Include it before any declaration: it names its extension.
#if defined(VKG_COOPMAT_KHR)
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
