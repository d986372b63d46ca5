// The update step shared by the scatter shaders (scatter_elements.comp,
// scatter_nd.comp). Declares binding 0 (out, read-write, already holding a copy
// of data) and binding 2 (updates) and vkg_scatter(dst, src), which combines
// updates[src] into out[dst] with the reduction of spec constant 1:
//   kReduction  0 none (replace, bit-exact), 1 add, 2 mul, 3 max, 4 min
//   kKind       0 float, 1 int32, 2 bool (0/1 in int32: add = or, mul = and)
// Int32 data exists only in the f32 variant. max/min follow std::max/std::min
// (the reference's): max(a, b) = a < b ? b : a, min(a, b) = b < a ? b : a.
#ifndef VKG_GATHER_SCATTER_GLSL
#define VKG_GATHER_SCATTER_GLSL

layout(constant_id = 1) const uint kReduction = 0;
layout(constant_id = 2) const uint kKind = 0;

layout(binding = 0) buffer Out { melem out_[]; };
layout(binding = 0) buffer OutF { sfp outf[]; };
layout(binding = 2) readonly buffer Updates { melem upd[]; };
layout(binding = 2) readonly buffer UpdatesF { sfp updf[]; };
#if defined(VKG_PRECISION_F32)
layout(binding = 0) buffer OutI { int outi[]; };
layout(binding = 2) readonly buffer UpdatesI { int updi[]; };
#endif

void vkg_scatter(uint dst, uint src) {
  if (kReduction == 0) {
    out_[dst] = upd[src];
    return;
  }
#if defined(VKG_PRECISION_F32)
  if (kKind != 0) {
    const int a = outi[dst], b = updi[src];
    int r = b;
    if (kReduction == 1) r = kKind == 2 ? max(a, b) : a + b;
    if (kReduction == 2) r = kKind == 2 ? min(a, b) : a * b;
    if (kReduction == 3) r = max(a, b);
    if (kReduction == 4) r = min(a, b);
    outi[dst] = r;
    return;
  }
#endif
  const afp a = sfp2afp(outf[dst]), b = sfp2afp(updf[src]);
  afp r = b;
  if (kReduction == 1) r = a + b;
  if (kReduction == 2) r = a * b;
  if (kReduction == 3) r = a < b ? b : a;
  if (kReduction == 4) r = b < a ? b : a;
  outf[dst] = afp2sfp(r);
}

#endif  // VKG_GATHER_SCATTER_GLSL
