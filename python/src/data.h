// The reference backend, the data loader, the comparator and Polygraphy's JSON files, from Python.
#pragma once

#include <pybind11/pybind11.h>

namespace vkg::python {

void bind_data(pybind11::module_& m);

}  // namespace vkg::python
