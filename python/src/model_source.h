// The model (or engine) argument of the Python calls: a path (str or os.PathLike) or a file's bytes.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "runtime/onnx/onnx_import.h"

namespace vkg::python {

struct ModelSource {
  std::string path;                  // "" for bytes
  std::optional<std::string> bytes;  // the model file's bytes

  // What the command line's positional model argument is given: the path, or a placeholder for bytes.
  std::string positional() const { return bytes ? "<model bytes>" : path; }
  // The model as the tools load it, external data from `external_data_dir` ("": the model's folder).
  OnnxModel load(const std::string& external_data_dir) const;
};

// Raises TypeError naming `function` for anything but a str, an os.PathLike or bytes.
ModelSource model_source(const pybind11::object& model, const std::string& function);

}  // namespace vkg::python
