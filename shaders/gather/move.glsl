// Helpers of the gather family's shaders (shaders/gather/*.comp).
//
// melem/melem4: the element type of data that is moved, not computed on. The
// f32 variant moves 32-bit words, so float32 and int32 (integer, bool) storage
// are copied bit-exactly by one shader; the f16 and f16acc32 variants move
// float16 storage.
//
// vkg_wrap_index: an index read from data into an axis of `dim` elements
// (dim >= 1): negative indices count from the back as in ONNX. Out-of-range
// indices are invalid ONNX (the reference backend reports them); on the device
// they are clamped into [0, dim - 1] so that no access leaves its buffer.
#ifndef VKG_GATHER_MOVE_GLSL
#define VKG_GATHER_MOVE_GLSL

#if defined(VKG_PRECISION_F32)
#define melem uint
#define melem4 uvec4
#else
#define melem float16_t
#define melem4 f16vec4
#endif

uint vkg_wrap_index(int index, uint dim) {
  const int d = int(dim);
  return uint(clamp(index < 0 ? index + d : index, 0, d - 1));
}

#endif  // VKG_GATHER_MOVE_GLSL
