#include "python/src/data.h"

#include <pybind11/stl.h>

#include <memory>

#include "python/src/model_source.h"
#include "python/src/numpy_tensor.h"
#include "python/src/options.h"
#include "runtime/data/comparator.h"
#include "runtime/data/data_loader.h"
#include "runtime/data/run_results.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/reference/reference_backend.h"
#include "tools/args_comparator.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"

namespace py = pybind11;

namespace vkg::python {

namespace {

// A model imported as the tools import it, with the model options given as keyword arguments.
Graph import_model(const ModelSource& source, const tools::ModelArgs& args) {
  OnnxModel onnx = source.load(args.external_data_dir);
  return import_onnx(onnx, args.import_options());
}

py::dict value_metadata(const std::vector<ValueInfo>& values) {
  py::dict out;
  for (const ValueInfo& v : values) {
    py::object dtype = py::none();
    if (v.dtype) dtype = numpy_dtype(*v.dtype);
    py::object shape = py::none();
    if (v.shape) {
      py::list dims;
      for (const Dim& d : *v.shape) dims.append(d.known() ? py::object(py::int_(d.value)) : py::object(py::str(d.param.empty() ? "?" : d.param)));
      shape = py::tuple(dims);
    }
    out[py::str(v.name)] = py::make_tuple(dtype, shape);
  }
  return out;
}

// vkgraphy.ReferenceBackend: the CPU oracle on an imported model.
class PyReference {
 public:
  PyReference(const py::object& model, const py::kwargs& kwargs) {
    CLI::App app("ReferenceBackend");
    tools::ModelArgs args;
    args.add_to(app);
    const ModelSource source = model_source(model, "ReferenceBackend");
    parse_words(app, {source.positional()}, kwargs_to_words(app, kwargs, "ReferenceBackend"), "ReferenceBackend");
    graph_ = import_model(source, args);
    backend_ = std::make_unique<ReferenceBackend>(graph_);
  }

  py::dict infer(const py::dict& feed, const py::object& outputs) {
    std::vector<std::string> names;
    if (outputs.is_none()) {
      for (const ValueInfo& o : graph_.outputs) names.push_back(o.name);
    } else if (py::isinstance<py::str>(outputs) && outputs.cast<std::string>() == "all") {
      for (const ValueInfo& o : graph_.outputs) names.push_back(o.name);
      for (const std::string& t : graph_.node_outputs())
        if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
    } else {
      names = outputs.cast<std::vector<std::string>>();
    }
    const TensorMap inputs = to_tensor_map(feed, "input");
    TensorMap result;
    {
      py::gil_scoped_release release;
      result = backend_->run(inputs, names);
    }
    py::dict out;
    for (const std::string& n : names) out[py::str(n)] = to_numpy(std::move(result.at(n)));
    return out;
  }

  const Graph& graph() const { return graph_; }

 private:
  Graph graph_;
  std::unique_ptr<ReferenceBackend> backend_;
};

py::list generate_inputs(const py::object& model, const py::kwargs& kwargs) {
  CLI::App app("generate_inputs");
  tools::ModelArgs args;
  DataLoaderArgs data;
  args.add_to(app);
  data.add_to(app);
  const ModelSource source = model_source(model, "generate_inputs");
  parse_words(app, {source.positional()}, kwargs_to_words(app, kwargs, "generate_inputs"), "generate_inputs");
  const Graph graph = import_model(source, args);
  data.set_input_shapes(args.shapes());
  std::vector<TensorMap> feeds = load_or_generate_inputs(graph.inputs, data.options());
  if (!data.save_inputs_path().empty()) save_inputs(data.save_inputs_path(), feeds);
  py::list out;
  for (TensorMap& feed : feeds) out.append(to_dict(std::move(feed)));
  return out;
}

py::dict comparison_dict(const OutputComparison& c) {
  py::dict d;
  d["name"] = c.name;
  d["passed"] = c.passed;
  d["failure"] = c.failure;
  d["atol"] = c.atol;
  d["rtol"] = c.rtol;
  d["check_error_stat"] = error_stat_name(c.stat);
  d["max_absdiff"] = c.absdiff.max;
  d["mean_absdiff"] = c.absdiff.mean;
  d["median_absdiff"] = c.absdiff.median;
  d["max_reldiff"] = c.reldiff.max;
  d["mean_reldiff"] = c.reldiff.mean;
  d["median_reldiff"] = c.reldiff.median;
  d["required_atol"] = c.required_atol;
  d["required_rtol"] = c.required_rtol;
  d["elements"] = c.elements;
  d["mismatched_elements"] = c.mismatched_elements;
  return d;
}

struct PyCompareResult {
  bool passed = false;
  py::list outputs;
  std::vector<std::string> skipped;
};

PyCompareResult compare(const py::dict& a, const py::dict& b, const std::string& name_a, const std::string& name_b,
                        const py::kwargs& kwargs) {
  CLI::App app("compare");
  ComparatorArgs args;
  args.add_to(app);
  parse_words(app, {}, kwargs_to_words(app, kwargs, "compare"), "compare");
  const TensorMap ta = to_tensor_map(a, "output"), tb = to_tensor_map(b, "output");
  CompareResult r;
  {
    py::gil_scoped_release release;
    r = compare_outputs(name_a, ta, name_b, tb, args.options());
  }
  PyCompareResult out;
  out.passed = r.passed;
  for (const OutputComparison& c : r.per_output) out.outputs.append(comparison_dict(c));
  out.skipped = r.skipped;
  return out;
}

// Polygraphy's RunResults as [(runner name, [{"outputs": {...}, "runtime": s, "runner_name": name}, ...]), ...].
py::list run_results_to_python(RunResults results) {
  py::list out;
  for (auto& [runner, iterations] : results.runs) {
    py::list its;
    for (IterationResult& it : iterations) {
      py::dict outputs;
      for (auto& [name, t] : it.outputs) outputs[py::str(name)] = to_numpy(std::move(t));
      py::dict d;
      d["outputs"] = outputs;
      d["runtime"] = it.runtime;
      d["runner_name"] = it.runner_name;
      its.append(d);
    }
    out.append(py::make_tuple(runner, its));
  }
  return out;
}

RunResults run_results_from_python(const py::handle& results) {
  RunResults out;
  py::object items = py::isinstance<py::dict>(results) ? results.attr("items")() : py::reinterpret_borrow<py::object>(results);
  for (const py::handle entry : items) {
    const auto pair = entry.cast<py::tuple>();
    VKG_CHECK(pair.size() == 2, "save_outputs: each run is (runner name, [iteration, ...])");
    const std::string runner = py::str(pair[0]).cast<std::string>();
    std::vector<IterationResult> iterations;
    for (const py::handle it : pair[1]) {
      py::dict d = it.cast<py::dict>();
      IterationResult r;
      r.runner_name = runner;
      py::dict outputs = d;
      if (d.contains("outputs") && py::isinstance<py::dict>(d["outputs"])) {
        outputs = d["outputs"].cast<py::dict>();
        if (d.contains("runtime")) r.runtime = d["runtime"].cast<double>();
        if (d.contains("runner_name")) r.runner_name = d["runner_name"].cast<std::string>();
      }
      for (const auto& [key, value] : outputs) {
        const std::string name = py::str(key).cast<std::string>();
        r.outputs.emplace_back(name, to_tensor(value, "output '" + name + "'"));
      }
      iterations.push_back(std::move(r));
    }
    out.runs.emplace_back(runner, std::move(iterations));
  }
  return out;
}

}  // namespace

void bind_data(py::module_& m) {
  py::class_<PyReference>(m, "ReferenceBackend",
                          "ReferenceBackend(model, **model_options): vkgraphy's CPU reference backend, the trusted "
                          "oracle, on an ONNX model (a path or bytes). Model options as for build_engine "
                          "(input_shapes=..., no_fold_constants=True, ...).")
      .def(py::init<const py::object&, const py::kwargs&>(), py::arg("model"))
      .def("infer", &PyReference::infer, py::arg("feed"), py::arg("outputs") = py::none(),
           "Runs the model on `feed`; returns the model outputs, the tensors `outputs` names, or every tensor "
           "with outputs='all'.")
      .def_property_readonly("input_metadata", [](const PyReference& r) { return value_metadata(r.graph().inputs); },
                             "{input name: (numpy dtype or None, shape or None)}; a dynamic dimension is its name (or '?').")
      .def_property_readonly("output_metadata", [](const PyReference& r) { return value_metadata(r.graph().outputs); },
                             "{output name: (numpy dtype or None, shape or None)}.");

  m.def("generate_inputs", &generate_inputs, py::arg("model"),
        "generate_inputs(model, **options) -> list[dict[str, numpy.ndarray]]\n\n"
        "The feeds `vkgraphy run` and `polygraphy run` use: seed=1, iterations=1, val_range=(0, 1) or "
        "{'x': (-5, 5)}, input_shapes={...}, load_inputs=[paths], save_inputs=PATH. The same seed gives the "
        "same values as Polygraphy's DataLoader.");

  py::class_<PyCompareResult>(m, "CompareResult", "The result of compare(): true when every output passed.")
      .def_readonly("passed", &PyCompareResult::passed, "True when every output compared passed.")
      .def_readonly("outputs", &PyCompareResult::outputs,
                    "Per output: name, passed, failure, tolerances, error statistics, required_atol/rtol.")
      .def_readonly("skipped", &PyCompareResult::skipped, "Outputs only one side has.")
      .def("__bool__", [](const PyCompareResult& r) { return r.passed; })
      .def("__repr__", [](const PyCompareResult& r) {
        return std::string("<CompareResult ") + (r.passed ? "PASSED" : "FAILED") + ", " +
               std::to_string(py::len(r.outputs)) + " output(s)>";
      });
  m.def("compare", &compare, py::arg("a"), py::arg("b"), py::arg("name_a") = "a", py::arg("name_b") = "b",
        "compare(a, b, name_a='a', name_b='b', **options) -> CompareResult\n\n"
        "Compares two {name: array} dicts as `vkgraphy run` does (Polygraphy's CompareFunc.simple): atol=1e-5, "
        "rtol=1e-5 (or {'y': 1e-3}), check_error_stat='elemwise'|'max'|'mean'|'median'|'quantile', "
        "error_quantile=0.99, infinities_compare_equal=True, no_shape_check=True, fail_fast=True. Logs "
        "Polygraphy's report at log level info.");

  m.def("load_outputs", [](const std::string& path) { return run_results_to_python(load_run_results(path)); },
        py::arg("path"),
        "Reads a RunResults file (`--save-outputs` of vkgraphy or Polygraphy): "
        "[(runner name, [{'outputs': {...}, 'runtime': s, 'runner_name': name}, ...]), ...].");
  m.def("save_outputs",
        [](const std::string& path, const py::object& results) { save_run_results(path, run_results_from_python(results)); },
        py::arg("path"), py::arg("results"),
        "Writes a RunResults file Polygraphy reads: `results` as load_outputs returns it (an iteration may also be "
        "a plain {name: array} dict), or {runner name: [iterations]}.");
  m.def("load_inputs",
        [](const std::string& path) {
          py::list out;
          for (TensorMap& feed : load_inputs(path)) out.append(to_dict(std::move(feed)));
          return out;
        },
        py::arg("path"), "Reads an inputs file (`--save-inputs`): one {name: array} dict per iteration.");
  m.def("save_inputs",
        [](const std::string& path, const py::list& feeds) {
          std::vector<TensorMap> maps;
          for (const py::handle feed : feeds) maps.push_back(to_tensor_map(feed.cast<py::dict>(), "input"));
          save_inputs(path, maps);
        },
        py::arg("path"), py::arg("feeds"), "Writes an inputs file Polygraphy's --load-inputs reads.");
}

}  // namespace vkg::python
