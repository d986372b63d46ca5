// Float inputs read through storage buffers or, in the "_texel" build of a shader marked
// `// vkgraphy-texel-reads` (cmake/shaders.cmake, which defines VKG_TEXEL_READS), through
// uniform texel buffers of vec4s: lavapipe gathers texels in SIMD where it loads a storage
// buffer one invocation at a time. The runtime views a texel binding as vec4s of fp32 or fp16,
// fp32 where a reformat is fused in (texel_view_format, runtime/vulkan/compute_pipeline.h), so
// texel readers need no kF32Bindings test: they round values to the storage type, as a reformat
// would. The tactic picks the "_texel" build where the device has texel buffers
// (LayerContext::texel_reads). Include after precision.glsl (and f32_bindings.glsl for
// VKG_FLOAT_INPUT).
#ifndef VKG_COMMON_TEXEL_READS_GLSL
#define VKG_COMMON_TEXEL_READS_GLSL

// Element i and vec4 i of the texel buffer t, as the arithmetic type.
#define vkg_texel(t, i) sfp2afp(sfp(texelFetch(t, int((i) >> 2))[(i) & 3u]))
#define vkg_texel4(t, i) sfp2afp4(sfp4(texelFetch(t, int(i))))

// Readers at(i) (element i) and at4(i) (vec4 i) of the float input at binding b of a shader that
// takes no fused reformat (declares no kF32Bindings): its texel buffer s, or its storage-buffer
// views s, s4.
#ifdef VKG_TEXEL_READS
#define VKG_INPUT(at, at4, b, s, s4)           \
  layout(binding = b) uniform samplerBuffer s; \
  afp at(uint i) { return vkg_texel(s, i); }   \
  afp4 at4(uint i) { return vkg_texel4(s, i); }
#else
#define VKG_INPUT(at, at4, b, s, s4)                                 \
  layout(binding = b) readonly buffer s##_elements { sfp s[]; };     \
  layout(binding = b) readonly buffer s4##_vectors { sfp4 s4[]; };   \
  afp at(uint i) { return sfp2afp(s[i]); }                           \
  afp4 at4(uint i) { return sfp2afp4(s4[i]); }
#endif

// The same for a shader that takes fused reformats (f32_bindings.glsl): the storage build also
// declares the fp32 views f, f4 and reads through them where kF32Bindings says.
#ifdef VKG_TEXEL_READS
#define VKG_FLOAT_INPUT(at, at4, b, s, s4, f, f4)  \
  layout(binding = b) uniform samplerBuffer s;     \
  afp at(uint i) { return vkg_texel(s, i); }       \
  afp4 at4(uint i) { return vkg_texel4(s, i); }
#else
#define VKG_FLOAT_INPUT(at, at4, b, s, s4, f, f4)                      \
  layout(binding = b) readonly buffer s##_elements { sfp s[]; };       \
  layout(binding = b) readonly buffer s4##_vectors { sfp4 s4[]; };     \
  layout(binding = b) readonly buffer f##_elements { float f[]; };     \
  layout(binding = b) readonly buffer f4##_vectors { vec4 f4[]; };     \
  VKG_F32_READERS(at, at4, b, s, s4, f, f4)
#endif

// Wide stores, in "_texel" builds only: put8(i, lo, hi) writes elements 8 i .. 8 i + 7 of the
// output at binding b (lo the first four) with one store instruction, which lavapipe runs one
// invocation at a time like a vec4 store: eight floats as a u64vec4 (the fp32 builds need the
// device's 64-bit integers: LayerContext::texel_reads checks), eight halves as a uvec4. The
// storage type only: a fused reformat on the output runs the storage-buffer build.
#ifdef VKG_TEXEL_READS
#if defined(VKG_PRECISION_F32)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define VKG_OUTPUT8(put8, b, s8)                                                                 \
  layout(binding = b) writeonly buffer s8##_octets { u64vec4 s8[]; };                            \
  void put8(uint i, afp4 lo, afp4 hi) {                                                          \
    const uvec4 l = floatBitsToUint(lo), h = floatBitsToUint(hi);                                \
    s8[i] = u64vec4(packUint2x32(l.xy), packUint2x32(l.zw), packUint2x32(h.xy), packUint2x32(h.zw)); \
  }
#else
#define VKG_OUTPUT8(put8, b, s8)                                                            \
  layout(binding = b) writeonly buffer s8##_octets { uvec4 s8[]; };                         \
  void put8(uint i, afp4 lo, afp4 hi) {                                                     \
    const f16vec4 l = f16vec4(lo), h = f16vec4(hi);                                         \
    s8[i] = uvec4(packFloat2x16(l.xy), packFloat2x16(l.zw), packFloat2x16(h.xy), packFloat2x16(h.zw)); \
  }
#endif
#endif

#endif  // VKG_COMMON_TEXEL_READS_GLSL
