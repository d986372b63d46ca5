// Precision macros shared by every shader (STYLE.md rule 3: one source, many
// variants). The build compiles a shader once per variant listed in its
// "// vkgraphy-variants:" line and defines exactly one of:
//   VKG_PRECISION_F32       fp32 storage, fp32 arithmetic
//   VKG_PRECISION_F16       fp16 storage, fp16 arithmetic
//   VKG_PRECISION_F16ACC32  fp16 storage, fp32 arithmetic
// Shaders use the types and conversions below, never float/float16_t directly:
//   sfp, sfp4  storage types (buffer element types)
//   afp, afp4  arithmetic types (what the shader computes in)
//   sfp2afp(x), sfp2afp4(x), afp2sfp(x), afp2sfp4(x)  conversions between them
#ifndef VKG_COMMON_PRECISION_GLSL
#define VKG_COMMON_PRECISION_GLSL

#if defined(VKG_PRECISION_F32)
#define sfp float
#define sfp4 vec4
#define afp float
#define afp4 vec4
#define sfp2afp(x) (x)
#define sfp2afp4(x) (x)
#define afp2sfp(x) (x)
#define afp2sfp4(x) (x)

#elif defined(VKG_PRECISION_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define sfp float16_t
#define sfp4 f16vec4
#define afp float16_t
#define afp4 f16vec4
#define sfp2afp(x) (x)
#define sfp2afp4(x) (x)
#define afp2sfp(x) (x)
#define afp2sfp4(x) (x)

#elif defined(VKG_PRECISION_F16ACC32)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define sfp float16_t
#define sfp4 f16vec4
#define afp float
#define afp4 vec4
#define sfp2afp(x) float(x)
#define sfp2afp4(x) vec4(x)
#define afp2sfp(x) float16_t(x)
#define afp2sfp4(x) f16vec4(x)

#else
#error "no precision variant defined: expected VKG_PRECISION_F32, VKG_PRECISION_F16 or VKG_PRECISION_F16ACC32"
#endif

#endif  // VKG_COMMON_PRECISION_GLSL
