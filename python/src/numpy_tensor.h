// numpy arrays and vkgraphy tensors: arrays go in as views of their memory (a copy only where an
// array is not C-contiguous or not in native byte order), tensors come out as arrays that own the
// tensor's memory (no copy).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace vkg::python {

// The numpy dtype of `dtype` (bfloat16, which numpy lacks, is float32: see to_numpy).
pybind11::dtype numpy_dtype(DType dtype);

// A view of `object` (an array, or anything numpy.asarray takes) named `what` in messages.
// `keep` receives the array the view points into: it must outlive the view.
// An object that is not an array yet (a list, a scalar) becomes one of `dtype` where given.
TensorView view_of(const pybind11::handle& object, const std::string& what, std::vector<pybind11::array>& keep,
                   const std::optional<DType>& dtype = std::nullopt);

// `tensor` as an array that owns its memory (bfloat16 values are widened to float32).
pybind11::array to_numpy(Tensor tensor);

// A copy of `object` as a Tensor (for the calls that keep their inputs).
Tensor to_tensor(const pybind11::handle& object, const std::string& what);

// Python dict {name: array} <-> TensorMap.
TensorMap to_tensor_map(const pybind11::dict& arrays, const std::string& what);
pybind11::dict to_dict(TensorMap tensors);

}  // namespace vkg::python
