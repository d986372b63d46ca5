// `vkgraphy inspect`: shows what a model, an engine or a data file holds
// (Polygraphy's `inspect model` and `inspect data`).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "debug/fp16_risk.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/data/array_stats.h"
#include "runtime/data/run_results.h"
#include "runtime/engine/engine_file.h"
#include "runtime/onnx/model_summary.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/onnx/surgeon.h"
#include "runtime/vulkan/spirv_disassembly.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

// The kinds of file `inspect model` can show. A new kind (a tactic replay, say)
// adds a value here, a case in model_kind() and its own inspect function.
enum class ModelKind { Onnx, Engine };

struct InspectModelArgs {
  ModelArgs model;
  DataLoaderArgs data;  // the inputs of the reference run behind --show fp16-risk
  std::string model_type = "auto";
  std::vector<std::string> show;  // "layers", "attrs", "weights", "spirv", "fp16-risk"

  bool shows(const std::string& what) const { return std::find(show.begin(), show.end(), what) != show.end(); }
};

struct InspectDataArgs {
  std::string path;
  bool show_values = false;
  bool all = false;
  bool histogram = false;
};

// The kind of model file to show: the one --model-type names, or for "auto" the
// one the file looks like: an engine by its magic bytes, anything else is read
// as ONNX (the loader says clearly when it is not one).
ModelKind model_kind(const InspectModelArgs& args) {
  if (args.model_type == "onnx") return ModelKind::Onnx;
  if (args.model_type == "engine") return ModelKind::Engine;
  return looks_like_engine(args.model.path) ? ModelKind::Engine : ModelKind::Onnx;
}

// Fills in the shapes that inference alone leaves open but import finds by folding constants
// (Shape -> Gather -> Concat -> Reshape chains, as exporters write dynamic reshapes), so that
// outputs show the shapes `run` infers. Where import fails, the shapes stay as they are.
void take_folded_shapes(OnnxModel& model, const ImportOptions& import) {
  // Only for static inputs: a dimension the user left open stays open in what is shown.
  for (const auto& in : model.proto->graph().input()) {
    if (!in.type().has_tensor_type()) return;
    const auto& t = in.type().tensor_type();
    if (!t.has_shape()) return;
    for (const auto& d : t.shape().dim())
      if (!d.has_dim_value()) return;
  }
  OnnxModel folded = copy_onnx_model(model);
  Graph graph;
  try {
    graph = import_onnx(folded, import);
  } catch (const Error& e) {
    VKG_VERBOSE("shapes past constant folding are not shown: " << e.what());
    return;
  }
  auto fill = [&](onnx::ValueInfoProto& vi) {
    auto it = graph.value_info.find(vi.name());
    if (it == graph.value_info.end() || !it->second.static_shape() || !vi.type().has_tensor_type()) return;
    const auto& declared = vi.type().tensor_type();
    if (declared.has_shape()) {
      bool complete = true;
      for (const auto& d : declared.shape().dim()) complete = complete && d.has_dim_value();
      if (complete) return;
    }
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second.concrete_shape()) shape->add_dim()->set_dim_value(d);
  };
  auto* g = model.proto->mutable_graph();
  for (auto& vi : *g->mutable_output()) fill(vi);
  for (auto& vi : *g->mutable_value_info()) fill(vi);
}

void inspect_onnx_model(const InspectModelArgs& args) {
  const ImportOptions import = args.model.import_options();
  OnnxModel model = load_onnx_model(args.model.path, true, import.external_data_dir);
  const std::vector<std::string> unknown = validate_onnx_model(model);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
    VKG_WARNING("model '" << args.model.path << "' uses ops that ONNX does not define: " << list
                          << "; the shapes of their outputs stay unknown");
  }
  if (!import.input_shapes.empty()) {
    override_input_shapes(model, import.input_shapes);
    clear_inferred_shapes(model);
  }
  // Shape inference cannot be strict about ops it does not know.
  if (import.shape_inference) infer_shapes(model, /*strict=*/unknown.empty());
  if (import.shape_inference && import.fold_constants) take_folded_shapes(model, import);

  SummaryOptions options;
  for (const auto& s : args.show) {
    if (s == "layers") options.layers = true;
    if (s == "attrs") options.attrs = true;
    if (s == "weights") options.weights = true;
  }
  if (args.shows("spirv")) VKG_WARNING("--show spirv: an ONNX model has no SPIR-V; build an engine with `convert`");
  if (options.attrs && !options.layers)
    VKG_WARNING("--show attrs: attributes are shown with the layers; add --show layers");
  VKG_INFO(summarize_onnx_model(model, options));
  if (args.shows("fp16-risk")) {
    // As the builder sees the model (constants folded): the loaded model, imported in place.
    const Graph graph = import_onnx(model, import);
    DataLoaderArgs data = args.data;
    data.set_input_shapes(import.input_shapes);
    const std::vector<TensorMap> feeds = load_or_generate_inputs(graph.inputs, data.options());
    VKG_INFO(debug::fp16_risk_text(debug::analyze_fp16_risk(graph, feeds), feeds.size()));
  }
}

// "(1, 3)", "(5,)", "()": shapes as Polygraphy prints them.
std::string shape_tuple(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[48];
  if (unit == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", value, units[unit]);
  return buf;
}

// "x [dtype=float32, shape=(1, 3), storage=f32]".
// A view (an eliminated Concat's input) adds where it lies: ", in=out[1024:2048]" (elements).
std::string engine_tensor_text(const Engine& e, const EngineTensor& t) {
  std::string view;
  if (t.view_of >= 0 && size_t(t.view_of) < e.tensors.size()) {
    const EngineTensor& base = e.tensors[size_t(t.view_of)];
    const uint64_t bytes = storage_element_bytes(t.storage), first = t.offset / bytes;
    view = ", in=" + base.name + "[" + std::to_string(first) + ":" +
           std::to_string(first + uint64_t(num_elements(t.shape))) + "]";
  }
  return t.name + " [dtype=" + dtype_name(t.dtype) + ", shape=" + shape_tuple(t.shape) +
         ", storage=" + storage_type_name(t.storage) + view + "]";
}

// "{a [...],\n b [...]}" of the engine tensors `ids` (omitted ones, -1, are left out).
std::string engine_tensor_list(const Engine& e, const std::vector<int32_t>& ids, const std::string& indent) {
  std::string out = "{";
  bool first = true;
  for (int32_t id : ids) {
    if (id < 0) continue;
    out += (first ? "" : ",\n" + indent + " ") + engine_tensor_text(e, e.tensors[size_t(id)]);
    first = false;
  }
  return out + "}";
}

std::string binding_text(const EngineLayer& layer, const Engine& e, const BindingRef& b) {
  std::string out = std::string(binding_kind_name(b.kind)) + " " + std::to_string(b.index);
  switch (b.kind) {
    case BindingRef::Kind::Input:
      return out + " (" + e.tensors[size_t(layer.inputs[b.index])].name + ")";
    case BindingRef::Kind::Output:
      return out + " (" + e.tensors[size_t(layer.outputs[b.index])].name + ")";
    case BindingRef::Kind::Weight:
      return out;
    case BindingRef::Kind::Scratch:
      return out + " (slot " + std::to_string(layer.scratch_slots[b.index]) + ")";
  }
  return out;
}

std::string dispatch_text(const EngineLayer& layer, const Engine& e, size_t index) {
  const Dispatch& d = layer.plan.dispatches[index];
  std::string out = "Dispatch " + std::to_string(index) + " | " + d.shader + " | Groups: (" +
                    std::to_string(d.groups[0]) + ", " + std::to_string(d.groups[1]) + ", " +
                    std::to_string(d.groups[2]) + ")";
  out += "\n    Spec constants: {";
  for (size_t i = 0; i < d.spec.size(); ++i)
    out += (i ? ", " : "") + std::to_string(d.spec[i].id) + ": " + std::to_string(d.spec[i].value);
  out += "}\n    Push constants: [";
  for (size_t i = 0; i < d.push.size(); ++i) out += (i ? ", " : "") + std::to_string(d.push[i]);
  out += "]\n    Bindings: [";
  for (size_t i = 0; i < d.bindings.size(); ++i) out += (i ? ", " : "") + binding_text(layer, e, d.bindings[i]);
  return out + "]";
}

std::string layer_text(const Engine& e, size_t index, bool details) {
  const EngineLayer& l = e.layers[index];
  char number[32];
  std::snprintf(number, sizeof number, "Layer %-4zu | ", index);
  const size_t dispatches = l.plan.dispatches.size();
  std::string out = number + l.name + " [Op: " + l.op + "] | Tactic: " + l.tactic +
                    " | Precision: " + precision_name(l.precision) + " | " + std::to_string(dispatches) +
                    (dispatches == 1 ? " dispatch" : " dispatches");
  if (l.nodes.size() > 1) {
    out += "\n    Fused nodes:";
    for (size_t i = 0; i < l.nodes.size(); ++i) out += (i ? ", " : " ") + l.nodes[i];
  }
  out += "\n    " + engine_tensor_list(e, l.inputs, "    ");
  out += "\n     -> " + engine_tensor_list(e, l.outputs, "        ");
  if (!details) return out;
  for (size_t s = 0; s < l.plan.scratch_bytes.size(); ++s)
    out += "\n    Scratch " + std::to_string(s) + ": " + bytes_text(l.plan.scratch_bytes[s]) + " (slot " +
           std::to_string(l.scratch_slots[s]) + ")";
  for (size_t i = 0; i < dispatches; ++i) {
    std::string text = dispatch_text(l, e, i);
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
      text.insert(at + 1, "    ");
    out += "\n    " + text;
  }
  return out;
}

// The summary of an engine, laid out like Polygraphy's summary of a TensorRT engine.
std::string summarize_engine(const Engine& e, const std::string& path, const InspectModelArgs& args) {
  std::string out = "==== vkgraphy Engine ====\n";
  out += "Name: " + (e.model_name.empty() ? std::string("(unnamed)") : e.model_name) +
         " | Engine format version: " + std::to_string(Engine::kFormatVersion) +
         " | vkgraphy version: " + e.vkgraphy_version + "\n";
  out += "Built on: " + e.device.describe() + "\n\n";

  out += "---- " + std::to_string(e.inputs.size()) + " Engine Input(s) ----\n";
  out += engine_tensor_list(e, e.inputs, "") + "\n\n";
  out += "---- " + std::to_string(e.outputs.size()) + " Engine Output(s) ----\n";
  out += engine_tensor_list(e, e.outputs, "") + "\n\n";

  uint64_t spirv_words = 0;
  for (const auto& [name, words] : e.spirv) spirv_words += words.size();
  out += "---- Memory ----\n";
  out += "Memory slots: " + std::to_string(e.slots.size()) +
         " | Activation memory: " + bytes_text(e.activation_bytes()) +
         " | Weight memory: " + bytes_text(e.weight_bytes()) + "\n";
  out += "Shaders: " + std::to_string(e.spirv.size()) + " (" + bytes_text(spirv_words * 4) + " of SPIR-V)\n\n";

  out += "---- " + std::to_string(e.layers.size()) + " Layer(s) ----";
  for (size_t i = 0; i < e.layers.size(); ++i) out += "\n" + layer_text(e, i, args.shows("layers"));

  if (args.shows("weights")) {
    size_t count = 0;
    for (const EngineLayer& l : e.layers) count += l.plan.weights.size();
    out += "\n\n---- " + std::to_string(count) + " Weight(s), " + bytes_text(e.weight_bytes()) + " ----";
    for (const EngineLayer& l : e.layers) {
      for (size_t w = 0; w < l.plan.weights.size(); ++w) {
        const Tensor& t = l.plan.weights[w];
        out += "\n" + l.name + " weight " + std::to_string(w) + " [dtype=" + dtype_name(t.dtype()) +
               ", shape=" + shape_tuple(t.shape()) + "] | " + bytes_text(t.nbytes());
      }
    }
  }
  if (args.shows("spirv")) {
    out += "\n\n---- " + std::to_string(e.spirv.size()) + " Shader(s) ----";
    for (const auto& [name, words] : e.spirv) {
      std::string text;
      try {
        text = vk::disassemble_spirv(words);
      } catch (const Error& err) {
        VKG_THROW("'" << path << "': shader '" << name << "': " << err.what());
      }
      while (!text.empty() && text.back() == '\n') text.pop_back();
      out += "\nShader: " + name + " (" + std::to_string(words.size()) + " words)\n";
      for (size_t at = 0; at <= text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        out += "    " + text.substr(at, end - at) + "\n";
        at = end + 1;
      }
      out.pop_back();
    }
  }
  return out;
}

void inspect_engine(const InspectModelArgs& args) {
  if (!args.model.input_shapes.empty())
    VKG_WARNING("--input-shapes: an engine has fixed shapes; the option is ignored");
  if (args.shows("attrs")) VKG_WARNING("--show attrs: an engine keeps no node attributes");
  if (args.shows("fp16-risk"))
    VKG_WARNING(
        "--show fp16-risk: the analysis runs the reference backend on an ONNX model; an engine keeps no "
        "nodes to run: inspect the model it was built from");
  const Engine engine = load_engine(args.model.path);
  VKG_INFO(summarize_engine(engine, args.model.path, args));
}

void inspect_model(const InspectModelArgs& args) {
  switch (model_kind(args)) {
    case ModelKind::Onnx:
      inspect_onnx_model(args);
      break;
    case ModelKind::Engine:
      inspect_engine(args);
      break;
  }
}

// Text of one tensor of a data file: statistics, and values or a histogram on request.
std::string tensor_text(const std::string& name, const Tensor& t, const InspectDataArgs& args) {
  std::string out = summarize_tensor(name, t, args.show_values);
  if (args.histogram && t.size() > 0) {
    const std::vector<double> values = t.to_doubles();
    const std::string hist = format_histogram(values, nan_min(values), nan_max(values));
    if (!hist.empty()) {
      out += "\n    ";
      for (char c : hist) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    }
  }
  return out;
}

// "-- Iteration 0 --" headers only when more than one iteration is shown.
template <class Iteration, class Print>
std::string iterations_text(const std::vector<Iteration>& iterations, const InspectDataArgs& args, Print print) {
  const size_t shown = args.all ? iterations.size() : std::min<size_t>(1, iterations.size());
  std::string out;
  for (size_t i = 0; i < shown; ++i) {
    if (shown > 1) out += "-- Iteration " + std::to_string(i) + " --\n";
    out += print(iterations[i]);
  }
  if (shown < iterations.size())
    out += "(showing iteration 0 of " + std::to_string(iterations.size()) + "; use --all to show every iteration)\n\n";
  return out;
}

void inspect_data(const InspectDataArgs& args) {
  const std::string json = read_whole_file(args.path, "data file");
  const size_t first = json.find_first_not_of(" \t\r\n");
  VKG_CHECK(first != std::string::npos, "data file '" << args.path << "' is empty");
  if (json[first] == '{') {
    const RunResults results = run_results_from_json(json, args.path);
    std::string out = "==== Run Results (" + std::to_string(results.runs.size()) + " runners) ====\n\n";
    for (const auto& [runner, iterations] : results.runs) {
      out += "---- " + runner + " (" + std::to_string(iterations.size()) + " iterations) ----\n\n";
      out += iterations_text(iterations, args, [&](const IterationResult& it) {
        std::string text;
        for (const auto& [name, t] : it.outputs) text += tensor_text(name, t, args) + "\n\n";
        return text;
      });
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    VKG_INFO(out);
  } else if (json[first] == '[') {
    const std::vector<TensorMap> inputs = inputs_from_json(json, args.path);
    std::string out = "==== Data (" + std::to_string(inputs.size()) + " iterations) ====\n\n";
    out += iterations_text(inputs, args, [&](const TensorMap& feed) {
      std::string text;
      for (const auto& [name, t] : feed) text += tensor_text(name, t, args) + "\n\n";
      return text;
    });
    while (!out.empty() && out.back() == '\n') out.pop_back();
    VKG_INFO(out);
  } else {
    VKG_THROW("'" << args.path << "' is not a Polygraphy data file: expected the JSON of saved outputs "
                  << "(RunResults) or of saved inputs");
  }
}

}  // namespace

void add_inspect_tool(CLI::App& app) {
  CLI::App* inspect = app.add_subcommand("inspect", "Show what a model or a data file holds");
  inspect->require_subcommand(1);
  inspect->fallthrough();
  add_inspect_device(*inspect);
  add_inspect_tactics(*inspect);
  add_inspect_capability(*inspect);
  add_diff_tactics_tool(*inspect);

  auto model_args = std::make_shared<InspectModelArgs>();
  CLI::App* model =
      inspect->add_subcommand("model", "Show an ONNX model or an engine: inputs, outputs, weights, layers");
  model->fallthrough();
  model_args->model.add_to(*model);
  // inspect shows the model as stored: nothing is folded.
  model->remove_option(model->get_option("--no-fold-constants"));
  model->add_option("--model-type", model_args->model_type, "Kind of model file (default: from the file)")
      ->check(CLI::IsMember({"auto", "onnx", "engine"}));
  model
      ->add_option("--show", model_args->show,
                   "What else to show: layers (every node with its inputs and outputs; for an engine, every "
                   "dispatch), attrs (node attributes), weights (initializer values and statistics; for an engine, "
                   "packed weight shapes and sizes), spirv (an engine's shaders, disassembled), fp16-risk (an ONNX "
                   "model's nodes that see values fp16 cannot hold, from a reference run on the data loader's "
                   "inputs)")
      ->take_all()
      ->check(CLI::IsMember({"layers", "attrs", "weights", "spirv", "fp16-risk"}));
  model_args->data.add_to(*model);
  model->callback([model_args] { inspect_model(*model_args); });

  auto data_args = std::make_shared<InspectDataArgs>();
  CLI::App* data = inspect->add_subcommand("data", "Show the tensors of a saved outputs or inputs file");
  data->fallthrough();
  data->add_option("path", data_args->path, "Outputs (--save-outputs) or inputs (--save-inputs) JSON file")->required();
  data->add_flag("--show-values", data_args->show_values, "Show the values of every tensor");
  data->add_flag("-a,--all", data_args->all, "Show every iteration, not only the first");
  data->add_flag("--histogram", data_args->histogram, "Show a histogram of every tensor's values");
  data->callback([data_args] { inspect_data(*data_args); });
}

}  // namespace vkg::tools
