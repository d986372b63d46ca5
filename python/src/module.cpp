// The native part of the `vkgraphy` Python package (python/vkgraphy/__init__.py re-exports it):
// engines, the reference backend, the data loader, the comparator and Polygraphy's files, over the
// libraries the command line uses. docs/python.md is the guide.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <utility>

#include "python/src/data.h"
#include "python/src/engine.h"
#include "python/src/options.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/core/version.h"
#include "runtime/vulkan/device_info.h"
#include "tools/args_builder.h"
#include "tools/args_vulkan.h"

namespace py = pybind11;

namespace {

py::list devices(const py::kwargs& kwargs) {
  CLI::App app("devices");
  vkg::tools::VulkanArgs vulkan;
  vulkan.add_to(app);
  vkg::python::parse_words(app, {}, vkg::python::kwargs_to_words(app, kwargs, "devices"), "devices");
  py::list out;
  int index = 0;
  for (const vkg::vk::DeviceInfo& info : vkg::vk::list_devices(vulkan.options())) {
    py::dict d;
    d["index"] = index++;
    d["name"] = info.name;
    d["type"] = vkg::device_type_name(info.type);
    d["driver"] = info.driver_info;
    d["fp16"] = info.shader_float16;
    out.append(d);
  }
  return out;
}

// The options build_engine() takes from the device and builder groups of the command line, for
// front ends that offer them under their own names (the `polygraphy run` extension):
// [(long name without dashes, help, is a switch, takes several values)].
py::list builder_options() {
  CLI::App app("build_engine");
  vkg::tools::VulkanArgs vulkan;
  vkg::tools::BuilderArgs builder;
  vulkan.add_to(app);
  builder.add_to(app);
  std::vector<const CLI::Option*> options = std::as_const(app).get_options();
  for (CLI::App* group : app.get_subcommands([](CLI::App* sub) { return sub->get_name().empty(); }))
    for (const CLI::Option* o : std::as_const(*group).get_options()) options.push_back(o);
  py::list out;
  for (const CLI::Option* o : options) {
    if (o->get_lnames().empty()) continue;
    const std::string name = o->get_lnames().front();
    if (name == "help" || name == "validate-tactics") continue;  // validation needs vkgraphy's own data loader
    out.append(py::make_tuple(name, o->get_description(), o->get_expected_max() == 0, o->get_items_expected_max() > 1));
  }
  return out;
}

void set_log_level(const std::string& level) {
  vkg::Severity s;
  VKG_CHECK(vkg::parse_severity(level, &s),
            "set_log_level: '" << level << "' is not a level (verbose, info, warning, error, or a number)");
  vkg::Logger::get().set_severity(s);
}

}  // namespace

PYBIND11_MODULE(_vkgraphy, m) {
  m.doc() = "vkgraphy's native module; use `import vkgraphy`.";
  static py::exception<vkg::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") = "A vkgraphy failure: its message is the command line's, naming the file, tensor or option at fault.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vkg::Error& e) {
      error(e.what());
    } catch (const CLI::Error& e) {
      error(e.what());
    }
  });
  m.attr("__version__") = VKGRAPHY_VERSION;
  // Python callers see warnings and errors; set_log_level('info') shows the command line's report.
  vkg::Logger::get().set_severity(vkg::Severity::Warning);

  vkg::python::bind_engine(m);
  vkg::python::bind_data(m);
  m.def("devices", &devices,
        "devices(**device_options) -> list[dict]\n\nThe Vulkan devices (index, name, type, driver, fp16), as "
        "`vkgraphy inspect device` lists them; device= of the other calls takes an index or a name substring.");
  m.def("_builder_options", &builder_options, "The builder's and the device's options: (name, help, switch, many).");
  m.def("set_log_level", &set_log_level, py::arg("level"),
        "Sets the severity below which vkgraphy's messages are dropped: 'verbose', 'info', 'warning' (the "
        "default in Python), 'error', or a number.");
  m.def("get_log_level", [] { return int(vkg::Logger::get().severity()); }, "The current severity threshold.");
}
