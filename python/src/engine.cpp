#include "python/src/engine.h"

#include <pybind11/stl.h>

#include <chrono>

#include "python/src/model_source.h"
#include "python/src/numpy_tensor.h"
#include "python/src/options.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
#include "runtime/engine/tactic_replay.h"
#include "runtime/onnx/onnx_import.h"
#include "tools/args_builder.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"
#include "tools/args_vulkan.h"

namespace py = pybind11;

namespace vkg::python {

PyEngine::PyEngine(std::unique_ptr<vk::Context> context, Engine engine, std::optional<BuildResult> build)
    : context_(std::move(context)), engine_(std::move(engine)), build_(std::move(build)) {
  if (build_) build_->engine = Engine{};  // held once, in engine_
}

PyEngine::~PyEngine() { close(); }

void PyEngine::close() {
  std::lock_guard lock(mutex_);
  executor_.reset();
  context_.reset();
}

vk::EngineExecutor& PyEngine::executor() {
  VKG_CHECK(context_ != nullptr, "the engine was closed");
  if (!executor_) {
    vk::ExecutorOptions options;
    options.faulty_tactics = vk::faulty_tactics_from_env();
    options.faulty_layers = vk::faulty_layers_from_env();
    executor_ = std::make_unique<vk::EngineExecutor>(context_->device(), engine_, options);
  }
  return *executor_;
}

py::dict PyEngine::infer(const py::dict& feed) {
  std::vector<py::array> keep;
  TensorViewMap views;
  for (const auto& [key, value] : feed) {
    const std::string name = py::str(key).cast<std::string>();
    const int32_t t = engine_.find_tensor(name);
    std::optional<DType> dtype;
    if (t >= 0) dtype = engine_.tensors[size_t(t)].dtype;
    views.emplace(name, view_of(value, "input '" + name + "'", keep, dtype));
  }
  TensorMap outputs;
  {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    const auto t0 = std::chrono::steady_clock::now();
    vk::EngineExecutor& ex = executor();
    outputs = ex.run(views);
    last_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    last_device_s_ = ex.last_device_ns() * 1e-9;
    context_->check_validation("the inference");
  }
  py::dict out;
  for (int32_t t : engine_.outputs) {
    const std::string& name = engine_.tensors[size_t(t)].name;
    out[py::str(name)] = to_numpy(std::move(outputs.at(name)));
  }
  return out;
}

void PyEngine::save(const std::string& path) const { save_engine(path, engine_); }

py::bytes PyEngine::serialize() const { return py::bytes(serialize_engine(engine_)); }

std::string PyEngine::device_name() const { return context_ ? context_->device().info().name : ""; }

namespace {

std::unique_ptr<PyEngine> build_engine(const py::object& model, const py::kwargs& kwargs) {
  const ModelSource source = model_source(model, "build_engine");
  CLI::App app("build_engine");
  tools::VulkanArgs vulkan;
  tools::ModelArgs model_args;
  tools::BuilderArgs builder;
  DataLoaderArgs data;
  std::vector<std::string> mark_outputs;
  vulkan.add_to(app);
  model_args.add_to(app);
  builder.add_to(app);
  data.add_to(app);
  builder.use_data_loader(data);
  app.add_option("--mark-outputs", mark_outputs,
                 "Tensors the engine returns besides the model's outputs: names, 'all' or 'layers'");
  const std::vector<std::string> words = kwargs_to_words(app, kwargs, "build_engine");
  parse_words(app, {source.positional()}, words, "build_engine");
  if (mark_outputs == std::vector<std::string>{"all"} || mark_outputs == std::vector<std::string>{"layers"})
    mark_outputs.insert(mark_outputs.begin(), "mark");

  py::gil_scoped_release release;
  OnnxModel onnx = source.load(model_args.external_data_dir);
  ImportOptions import = model_args.builder_import_options();
  data.set_input_shapes(import.input_shapes);
  tools::fix_shapes_from_loaded_inputs(onnx, data.options(), import.input_shapes);
  const Graph graph = import_onnx(onnx, import);
  auto context = std::make_unique<vk::Context>(vulkan.options());
  BuildResult built = builder.build_for_outputs(graph, *context, mark_outputs);
  Engine engine = std::move(built.engine);
  return std::make_unique<PyEngine>(std::move(context), std::move(engine), std::move(built));
}

std::unique_ptr<PyEngine> load_engine_file(const py::object& engine, const py::kwargs& kwargs) {
  const ModelSource source = model_source(engine, "load_engine");
  CLI::App app("load_engine");
  tools::VulkanArgs vulkan;
  vulkan.add_to(app);
  parse_words(app, {}, kwargs_to_words(app, kwargs, "load_engine"), "load_engine");
  py::gil_scoped_release release;
  Engine loaded = source.bytes ? deserialize_engine(*source.bytes, "the engine bytes") : load_engine(source.path);
  auto context = std::make_unique<vk::Context>(vulkan.options());
  const DeviceIdentity here = device_identity(context->device().info());
  if (!(loaded.device == here))
    VKG_WARNING("the engine was built for " << loaded.device.describe() << " but runs on " << here.describe()
                                            << ": its tactics were timed on the other device");
  return std::make_unique<PyEngine>(std::move(context), std::move(loaded), std::nullopt);
}

py::dict tensor_metadata(const Engine& e, const std::vector<int32_t>& which) {
  py::dict out;
  for (int32_t t : which) {
    const EngineTensor& tensor = e.tensors[size_t(t)];
    const DType shown = tensor.dtype == DType::BFloat16 ? DType::Float32 : tensor.dtype;
    out[py::str(tensor.name)] = py::make_tuple(numpy_dtype(shown), py::tuple(py::cast(tensor.shape)));
  }
  return out;
}

py::list layer_list(const Engine& e) {
  py::list out;
  for (const EngineLayer& layer : e.layers) {
    py::dict d;
    d["name"] = layer.name;
    d["op"] = layer.op;
    d["tactic"] = layer.tactic;
    d["precision"] = precision_name(layer.precision);
    d["nodes"] = layer.nodes;
    out.append(d);
  }
  return out;
}

py::dict build_stats(const BuildStats& s) {
  py::dict d;
  d["layers"] = s.layers;
  d["reformats"] = s.reformats;
  d["fused"] = s.fused;
  d["folded"] = s.folded;
  d["candidates_timed"] = s.candidates_timed;
  d["candidates_pruned"] = s.candidates_pruned;
  d["layers_timed"] = s.layers_timed;
  d["layers_cached"] = s.layers_cached;
  d["cache_hits"] = s.cache_hits;
  return d;
}

}  // namespace

void bind_engine(py::module_& m) {
  py::class_<PyEngine>(m, "Engine",
                       "A model compiled for one Vulkan device, with that device opened to run it. Made by "
                       "build_engine() or load_engine(); usable as a context manager (close() on exit).")
      .def("infer", &PyEngine::infer, py::arg("feed"),
           "Runs the engine once. `feed` maps every input name to an array of the engine's dtype and shape "
           "(read in place where C-contiguous). Returns {output name: new array} in engine order. The GIL is "
           "released while the device works.")
      .def("save", &PyEngine::save, py::arg("path"), "Writes the engine file (as `vkgraphy convert` does).")
      .def("serialize", &PyEngine::serialize, "The engine file's bytes.")
      .def("close", &PyEngine::close, "Frees the device and its memory; the engine cannot run afterwards.")
      .def("__enter__", [](PyEngine& e) -> PyEngine& { return e; }, py::return_value_policy::reference)
      .def("__exit__", [](PyEngine& e, const py::args&) { e.close(); })
      .def_property_readonly("input_metadata", [](const PyEngine& e) { return tensor_metadata(e.engine(), e.engine().inputs); },
                             "{input name: (numpy dtype, shape)} in model input order.")
      .def_property_readonly("output_metadata", [](const PyEngine& e) { return tensor_metadata(e.engine(), e.engine().outputs); },
                             "{output name: (numpy dtype, shape)}: model outputs, then marked tensors.")
      .def_property_readonly("layers", [](const PyEngine& e) { return layer_list(e.engine()); },
                             "The engine's layers in execution order: dicts of name, op, tactic, precision, nodes.")
      .def_property_readonly("device", &PyEngine::device_name, "The name of the device the engine runs on.")
      .def_property_readonly("built_for", [](const PyEngine& e) { return e.engine().device.describe(); },
                             "The device the engine was built (and its tactics timed) on.")
      .def_property_readonly("last_device_time", &PyEngine::last_device_time,
                             "Device time of the last infer() in seconds (0 where the device has no timestamps).")
      .def_property_readonly("last_inference_time", &PyEngine::last_inference_time,
                             "Host wall time of the last infer() in seconds (inputs in, outputs out).")
      .def_property_readonly("tactic_replay",
                             [](const PyEngine& e) -> py::object {
                               if (!e.build()) return py::none();
                               return py::str(tactic_replay_to_json_text(e.build()->replay));
                             },
                             "The build's tactic replay as JSON text (what save_tactics= writes); None for a loaded engine.")
      .def_property_readonly("build_stats",
                             [](const PyEngine& e) -> py::object {
                               if (!e.build()) return py::none();
                               return build_stats(e.build()->stats);
                             },
                             "Counts of the build (layers, fused, candidates timed, ...); None for a loaded engine.");

  m.def("build_engine", &build_engine, py::arg("model"),
        "build_engine(model, **options) -> Engine\n\n"
        "Builds a Vulkan engine from an ONNX model (a path, or the bytes of a model file). Options are the "
        "command line's, as keyword arguments with '_' for '-': builder options (fp16=True, "
        "layer_precisions={'conv1': 'fp32'}, precision_constraints='obey', optimization_level=3, "
        "tactic_selection='random:7', deterministic=True, save_tactics=PATH, load_tactics=PATH, "
        "load_timing_cache=PATH, save_timing_cache=PATH, tactics_allow=[...], no_fusion=True, validate_tactics=True, ...), "
        "model options (input_shapes={'x': (1, 3, 224, 224)}, external_data_dir=...), data loader options for "
        "validate_tactics (seed, val_range, load_inputs), device options (device='llvmpipe' or an index, "
        "vk_validation=True, vk_disable_fp16=True, ...) and mark_outputs=[names] | 'all' | 'layers'. "
        "See `vkgraphy convert --help`.");
  m.def("load_engine", &load_engine_file, py::arg("engine"),
        "load_engine(engine, **device_options) -> Engine\n\n"
        "Loads an engine file (a path, or its bytes) onto a device (device=..., vk_validation=True, ...).");
}

}  // namespace vkg::python
