// Element types of the movement shaders, which move bits and never compute:
//   elem_t, elem4_t  uint / uvec4 in the f32 variant (float32 and int32 storage
//                    alike, so integers move exactly), float16_t / f16vec4 in
//                    the f16 variant.
// Included by shaders/movement/*.comp (not compiled on its own: only *.comp are).
#ifndef VKG_MOVEMENT_ELEMENT_GLSL
#define VKG_MOVEMENT_ELEMENT_GLSL

#if defined(VKG_PRECISION_F32)
#define elem_t uint
#define elem4_t uvec4
#elif defined(VKG_PRECISION_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define elem_t float16_t
#define elem4_t f16vec4
#else
#error "movement shaders have f32 and f16 variants only"
#endif

#endif  // VKG_MOVEMENT_ELEMENT_GLSL
