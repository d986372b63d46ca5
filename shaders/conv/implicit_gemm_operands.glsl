// The operands of the implicit-GEMM convolutions (conv/implicit_gemm.comp on the shared-memory
// core, conv/implicit_coopmat.comp on cooperative matrices): per batch image n and group g (the
// core's batch n * group + g), Y[n][g * mg + m][pos] = sum_k A(m, k) * B(k, pos) + bias, k = ci *
// kernel + tap over the group's cg input channels and the taps of the window, pos over the output
// positions. A is the weights as stored (Conv [M][cg][taps]; ConvTranspose [C][mg][taps]), B is
// read from the input as the window addresses it (im2col on the fly, zero in the padding). Up to 3
// spatial dims (1-D and 2-D given as 3-D).
//
// Bindings: 0 X [N][C][ID][IH][IW]; 1 W; 2 bias [M] (any buffer without); 3 Y [N][M][OD][OH][OW].
// Push constants (24 words): the window of conv/im2col.comp, then mg, kdim (cg * taps) and
// has_bias. Specialization constant 9 kTranspose (ConvTranspose: output o gathers input
// (o + pad - tap * dilation) / stride where that divides).
// The includer includes common/precision.glsl and common/epilogue.glsl first.
#ifndef VKG_CONV_IMPLICIT_GEMM_OPERANDS_GLSL
#define VKG_CONV_IMPLICIT_GEMM_OPERANDS_GLSL

layout(push_constant) uniform Params {
  uint n, c, group;
  uint id, ih, iw;
  uint od, oh, ow;
  uint kd, kh, kw;
  int sd, sh, sw;
  int dd, dh, dw;
  int pd, ph, pw;
  uint mg, kdim, has_bias;
} p;

layout(constant_id = 9) const uint kTranspose = 0;

layout(binding = 0) readonly buffer X { sfp x[]; };
layout(binding = 1) readonly buffer W { sfp w[]; };
layout(binding = 2) readonly buffer Bias { sfp bias[]; };
layout(binding = 3) writeonly buffer Y { sfp y[]; };

uint g_x_base = 0, g_w_base = 0, g_group = 0;

uint taps() { return p.kd * p.kh * p.kw; }

void smem_batch(uint batch) {
  const uint g = batch % p.group, image = batch / p.group;
  const uint cg = p.c / p.group;
  g_group = g;
  g_x_base = (image * p.c + g * cg) * p.id * p.ih * p.iw;
  g_w_base = kTranspose != 0 ? g * cg * p.mg * taps() : g * p.mg * p.kdim;
}

afp smem_a1(uint m, uint k) {
  if (kTranspose != 0) return sfp2afp(w[g_w_base + ((k / taps()) * p.mg + m) * taps() + k % taps()]);
  return sfp2afp(w[g_w_base + m * p.kdim + k]);
}

// The input coordinate that output coordinate o reads at tap t along one dim; -1 when none.
int source(uint o, uint t, int stride, int dilation, int pad, uint size) {
  int i;
  if (kTranspose != 0) {
    const int num = int(o) + pad - int(t) * dilation;
    if (num < 0 || num % stride != 0) return -1;
    i = num / stride;
  } else {
    i = int(o) * stride + int(t) * dilation - pad;
  }
  return i >= 0 && i < int(size) ? i : -1;
}

afp smem_b1(uint k, uint pos) {
  const uint ci = k / taps(), tap = k % taps();
  const int ix = source(pos % p.ow, tap % p.kw, p.sw, p.dw, p.pw, p.iw);
  const int iy = source((pos / p.ow) % p.oh, (tap / p.kw) % p.kh, p.sh, p.dh, p.ph, p.ih);
  const int iz = source(pos / (p.ow * p.oh), tap / (p.kw * p.kh), p.sd, p.dd, p.pd, p.id);
  if (ix < 0 || iy < 0 || iz < 0) return afp(0);
  return sfp2afp(x[g_x_base + ((ci * p.id + uint(iz)) * p.ih + uint(iy)) * p.iw + uint(ix)]);
}

void smem_store(uint batch, uint split, uint m, uint pos, afp v) {
  if (p.has_bias != 0u) v += sfp2afp(bias[g_group * p.mg + m]);
  y[(batch * p.mg + m) * (p.od * p.oh * p.ow) + pos] = afp2sfp(vkg_epilogue(v));
}

#endif  // VKG_CONV_IMPLICIT_GEMM_OPERANDS_GLSL
