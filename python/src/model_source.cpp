#include "python/src/model_source.h"

namespace py = pybind11;

namespace vkg::python {

OnnxModel ModelSource::load(const std::string& external_data_dir) const {
  return bytes ? parse_onnx_model(*bytes, "", true, external_data_dir) : load_onnx_model(path, true, external_data_dir);
}

ModelSource model_source(const py::object& model, const std::string& function) {
  if (py::isinstance<py::bytes>(model)) return {"", model.cast<std::string>()};
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__"))
    return {py::module_::import("os").attr("fspath")(model).cast<std::string>(), std::nullopt};
  throw py::type_error(function + "(): expected a path or the bytes of a file, not " +
                       py::str(py::type::of(model)).cast<std::string>());
}

}  // namespace vkg::python
