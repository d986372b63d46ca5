// A fused activation, applied where a Conv, ConvTranspose, Gemm or MatMul
// shader stores its output (runtime/engine/graph_optimizer.h fuses the
// activation that follows such a node into its layer). The builder sets the
// specialization constants below on the dispatch that writes the layer's
// output; kind 0 (the default) leaves values unchanged. The kinds are
// runtime/engine/graph_optimizer.h's Activation. Include after precision.glsl.
#ifndef VKG_COMMON_EPILOGUE_GLSL
#define VKG_COMMON_EPILOGUE_GLSL

#include "elementwise/math.glsl"

layout(constant_id = 20) const uint kEpilogue = 0;
layout(constant_id = 21) const float kEpilogueAlpha = 0.0;
layout(constant_id = 22) const float kEpilogueBeta = 0.0;
// After the activation: v * kEpilogueScale + kEpilogueShift (Mul/Add by single-element constants
// that followed the activation).
layout(constant_id = 23) const float kEpilogueScale = 1.0;
layout(constant_id = 24) const float kEpilogueShift = 0.0;

afp vkg_epilogue_hard_sigmoid(afp v, afp alpha, afp beta) {
  const afp h = alpha * v + beta;
  return clamp(h, afp(0), afp(1));
}

afp vkg_epilogue_sigmoid(afp v) {
  const afp e = exp(-abs(v));
  return v >= afp(0) ? afp(1) / (afp(1) + e) : e / (afp(1) + e);
}

// Activation `kind` (runtime/engine/graph_optimizer.h's Activation) of v; kind, alpha and beta
// are constants where the shader calls it, so the switch folds away.
afp vkg_activation(uint kind, afp alpha, afp beta, afp v) {
  switch (kind) {
    case 1: return max(v, afp(0));                                   // Relu
    case 2: return min(max(v, alpha), beta);                         // Clip(min, max)
    case 3: return v < afp(0) ? alpha * v : v;                       // LeakyRelu(alpha)
    case 4: return vkg_epilogue_sigmoid(v);                          // Sigmoid
    case 5: return vkg_epilogue_hard_sigmoid(v, alpha, beta);        // HardSigmoid(alpha, beta)
    case 6: return v * vkg_epilogue_hard_sigmoid(v, afp(1.0 / 6.0), afp(0.5));  // HardSwish
    case 7: return vkg_tanh(v);                                      // Tanh
    case 8: return afp(0.5) * v * (afp(1) + vkg_erf(v * afp(0.70710678118654752)));  // GELU (erf)
    case 9: return v * vkg_epilogue_hard_sigmoid(v, alpha, beta);    // x * HardSigmoid(x)
    case 10: return v * vkg_epilogue_sigmoid(v);                     // x * Sigmoid(x) (SiLU)
    default: return v;
  }
}

afp vkg_epilogue_activation(afp v) {
  return vkg_activation(kEpilogue, afp(kEpilogueAlpha), afp(kEpilogueBeta), v);
}

afp vkg_epilogue(afp v) {
  const afp a = vkg_epilogue_activation(v);
  if (kEpilogueScale == 1.0 && kEpilogueShift == 0.0) return a;
  return a * afp(kEpilogueScale) + afp(kEpilogueShift);
}

afp4 vkg_epilogue4(afp4 v) {
  return afp4(vkg_epilogue(v.x), vkg_epilogue(v.y), vkg_epilogue(v.z), vkg_epilogue(v.w));
}

#endif  // VKG_COMMON_EPILOGUE_GLSL
