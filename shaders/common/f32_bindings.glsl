// Reformats fused into a layer (runtime/engine/builder.cpp, fuse_reformats): in the f16 and
// f16acc32 variants, bit b of specialization constant 40 (kF32Bindings) says that binding b holds
// fp32 instead of fp16, so that the layer reads an fp32 producer's tensor, or writes the tensor its
// fp32 readers want, without a Reformat layer between. A shader including this declares fp32
// views of its float bindings and goes through them where vkg_f32_binding(b) holds; the builder
// sets the constant only on shaders that declare it. Values read through an fp32 view are
// rounded to fp16 first (vkg_f32_in), as the reformat would have: the engine computes what it
// computed with the reformat layer. The f32 variant holds fp32 everywhere and declares nothing.
#ifndef VKG_COMMON_F32_BINDINGS_GLSL
#define VKG_COMMON_F32_BINDINGS_GLSL

#if defined(VKG_PRECISION_F32)
const uint kF32Bindings = 0u;
#else
layout(constant_id = 40) const uint kF32Bindings = 0u;
#endif

bool vkg_f32_binding(uint b) { return (kF32Bindings & (1u << b)) != 0u; }

// An fp32 value read in place of fp16 storage, as the arithmetic type.
afp vkg_f32_in(float v) { return sfp2afp(sfp(v)); }
afp4 vkg_f32_in4(vec4 v) { return sfp2afp4(sfp4(v)); }

// Readers and writers of a float binding `b` with element and vec4 views `s`, `s4` in the storage
// type and `f`, `f4` in fp32: at(i) / at4(i) read element or vec4 i as the arithmetic type;
// put(i, v) / put4(i, v) store v rounded to the storage type, widened to fp32 where binding b
// holds fp32.
#define VKG_F32_READERS(at, at4, b, s, s4, f, f4)                                             \
  afp at(uint i) { return vkg_f32_binding(b) ? vkg_f32_in(f[i]) : sfp2afp(s[i]); }           \
  afp4 at4(uint i) { return vkg_f32_binding(b) ? vkg_f32_in4(f4[i]) : sfp2afp4(s4[i]); }
#define VKG_F32_WRITERS(put, put4, b, s, s4, f, f4) \
  void put(uint i, afp v) {                         \
    if (vkg_f32_binding(b)) {                       \
      f[i] = float(afp2sfp(v));                     \
    } else {                                        \
      s[i] = afp2sfp(v);                            \
    }                                               \
  }                                                 \
  void put4(uint i, afp4 v) {                       \
    if (vkg_f32_binding(b)) {                       \
      f4[i] = vec4(afp2sfp4(v));                    \
    } else {                                        \
      s4[i] = afp2sfp4(v);                          \
    }                                               \
  }

#endif  // VKG_COMMON_F32_BINDINGS_GLSL
