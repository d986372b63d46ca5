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

#endif  // VKG_COMMON_F32_BINDINGS_GLSL
