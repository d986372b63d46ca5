// numpy's .npy array format, the payload of every array in Polygraphy's JSON
// files (np.save / np.load). Format versions 1.0, 2.0 and 3.0 are read;
// version 1.0 is written, byte for byte as numpy 1.24+ writes it.
#pragma once

#include <string>
#include <string_view>

#include "runtime/core/tensor.h"

namespace vkg {

// The .npy bytes of a tensor: little-endian, C order. Throws Error for BFloat16,
// which has no numpy dtype (cast it to float32 first).
std::string save_npy(const Tensor& tensor);

// Parses .npy bytes. Accepts little- and big-endian descrs ('<f4', '>i8', '|b1', ...)
// of float16/32/64, (u)int8/16/32/64 and bool, C or Fortran order, any shape
// including scalars. Anything malformed or unsupported (complex, strings,
// objects, structured dtypes, truncated data, trailing bytes) throws Error.
Tensor load_npy(std::string_view bytes);

// numpy's descr string for a dtype ("<f4", "|b1", ...). Throws Error for BFloat16.
std::string npy_descr(DType dtype);

}  // namespace vkg
