// `vkgraphy inspect`: shows what a model or a data file holds (Polygraphy's
// `inspect model` and `inspect data`).
#include <memory>

#include "runtime/core/logger.h"
#include "runtime/data/array_stats.h"
#include "runtime/core/file_io.h"
#include "runtime/data/run_results.h"
#include "runtime/onnx/model_summary.h"
#include "runtime/onnx/surgeon.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

// The kinds of file `inspect model` can show. A new kind (engine, tactic replay)
// adds a value here, a case in model_kind() and its own inspect function.
enum class ModelKind { Onnx };

struct InspectModelArgs {
  ModelArgs model;
  std::string model_type = "auto";
  std::vector<std::string> show;  // "layers", "attrs", "weights"
};

struct InspectDataArgs {
  std::string path;
  bool show_values = false;
  bool all = false;
  bool histogram = false;
};

// The kind of model file to show: the one --model-type names, or for "auto" the
// one the file looks like. ONNX is the only kind so far, so every file is read as
// ONNX (the loader says clearly when it is not one); engine files will be told
// apart by their magic bytes.
ModelKind model_kind(const std::string& model_type) {
  if (model_type == "onnx") return ModelKind::Onnx;
  return ModelKind::Onnx;
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

  SummaryOptions options;
  for (const auto& s : args.show) {
    if (s == "layers") options.layers = true;
    if (s == "attrs") options.attrs = true;
    if (s == "weights") options.weights = true;
  }
  if (options.attrs && !options.layers)
    VKG_WARNING("--show attrs: attributes are shown with the layers; add --show layers");
  VKG_INFO(summarize_onnx_model(model, options));
}

void inspect_model(const InspectModelArgs& args) {
  switch (model_kind(args.model_type)) {
    case ModelKind::Onnx:
      inspect_onnx_model(args);
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

  auto model_args = std::make_shared<InspectModelArgs>();
  CLI::App* model = inspect->add_subcommand("model", "Show a model: inputs, outputs, weights, layers");
  model->fallthrough();
  model_args->model.add_to(*model);
  // inspect shows the model as stored: nothing is folded.
  model->remove_option(model->get_option("--no-fold-constants"));
  model->add_option("--model-type", model_args->model_type, "Kind of model file (default: from the file)")
      ->check(CLI::IsMember({"auto", "onnx"}));
  model
      ->add_option("--show", model_args->show,
                   "What else to show: layers (every node with its inputs and outputs), attrs (node "
                   "attributes), weights (initializer values and statistics)")
      ->take_all()
      ->check(CLI::IsMember({"layers", "attrs", "weights"}));
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
