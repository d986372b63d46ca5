#include "python/src/numpy_tensor.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/error.h"

namespace py = pybind11;

namespace vkg::python {

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return py::dtype::of<float>();
    case DType::Float16: return py::dtype("float16");
    case DType::BFloat16: return py::dtype::of<float>();
    case DType::Float64: return py::dtype::of<double>();
    case DType::Int8: return py::dtype::of<int8_t>();
    case DType::Int16: return py::dtype::of<int16_t>();
    case DType::Int32: return py::dtype::of<int32_t>();
    case DType::Int64: return py::dtype::of<int64_t>();
    case DType::UInt8: return py::dtype::of<uint8_t>();
    case DType::UInt16: return py::dtype::of<uint16_t>();
    case DType::UInt32: return py::dtype::of<uint32_t>();
    case DType::UInt64: return py::dtype::of<uint64_t>();
    case DType::Bool: return py::dtype::of<bool>();
  }
  VKG_THROW("unknown dtype");
}

namespace {

DType dtype_of(const py::dtype& dt, const std::string& what) {
  // Through Python attributes: pybind11 2.10 reads the descriptor's fields from numpy 1's layout.
  const char kind = dt.attr("kind").cast<std::string>().at(0);
  const size_t size = dt.attr("itemsize").cast<size_t>();
  const std::string name = py::str(static_cast<const py::handle&>(dt)).cast<std::string>();
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  if (kind == 'b' && size == 1) return DType::Bool;
  if (kind == 'i' || kind == 'u') {
    const bool s = kind == 'i';
    if (size == 1) return s ? DType::Int8 : DType::UInt8;
    if (size == 2) return s ? DType::Int16 : DType::UInt16;
    if (size == 4) return s ? DType::Int32 : DType::UInt32;
    if (size == 8) return s ? DType::Int64 : DType::UInt64;
  }
  VKG_THROW(what << " has numpy dtype " << name << ", which vkgraphy does not hold (float16/32/64, (u)int8-64, bool)");
}

}  // namespace

TensorView view_of(const py::handle& object, const std::string& what, std::vector<py::array>& keep,
                   const std::optional<DType>& dtype) {
  py::object source = py::reinterpret_borrow<py::object>(object);
  if (dtype && !py::isinstance<py::array>(object) && !py::hasattr(object, "__array__")) {
    try {
      source = py::module_::import("numpy").attr("asarray")(object, numpy_dtype(*dtype));
    } catch (const py::error_already_set&) {
      VKG_THROW(what << " is not an array (" << py::str(py::type::of(object)).cast<std::string>() << ")");
    }
  }
  py::array array = py::array::ensure(source, py::array::c_style);
  if (!array) {
    PyErr_Clear();
    VKG_THROW(what << " is not an array (" << py::str(py::type::of(object)).cast<std::string>() << ")");
  }
  if (py::str(array.dtype().attr("byteorder")).cast<std::string>() == ">")
    array = py::array(array.attr("astype")(array.dtype().attr("newbyteorder")("=")));
  TensorView view;
  view.dtype = dtype_of(array.dtype(), what);
  view.shape.assign(array.shape(), array.shape() + array.ndim());
  view.data = static_cast<const std::byte*>(array.data());
  keep.push_back(std::move(array));
  return view;
}

py::array to_numpy(Tensor tensor) {
  if (tensor.dtype() == DType::BFloat16) tensor = tensor.cast(DType::Float32);
  const std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  // Strides always given: pybind11 2.10 would compute them from numpy 1's descriptor layout.
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = py::ssize_t(dtype_size(tensor.dtype()));
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<py::ssize_t>(shape[d], 1);
  }
  if (tensor.nbytes() == 0) return py::array(numpy_dtype(tensor.dtype()), shape, strides);
  auto* owner = new Tensor(std::move(tensor));
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(owner->dtype()), shape, strides, owner->raw(), base);
}

Tensor to_tensor(const py::handle& object, const std::string& what) {
  std::vector<py::array> keep;
  return view_of(object, what, keep).copy();
}

TensorMap to_tensor_map(const py::dict& arrays, const std::string& what) {
  TensorMap out;
  for (const auto& [key, value] : arrays) {
    const std::string name = py::str(key).cast<std::string>();
    out.emplace(name, to_tensor(value, what + " '" + name + "'"));
  }
  return out;
}

py::dict to_dict(TensorMap tensors) {
  py::dict out;
  for (auto& [name, t] : tensors) out[py::str(name)] = to_numpy(std::move(t));
  return out;
}

}  // namespace vkg::python
