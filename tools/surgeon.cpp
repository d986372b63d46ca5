// `vkgraphy surgeon`: changes ONNX models (Polygraphy's `surgeon extract`, `sanitize`, `insert`,
// `weight-strip` and `weight-reconstruct`). The result is written whole or not at all.
#include "runtime/onnx/surgeon.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/onnx/surgeon_insert.h"
#include "runtime/onnx/weight_strip.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct ExtractArgs {
  ModelArgs model;  // --model-input-shapes: fixes the model's input shapes before inference
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string output_path;
};

struct SanitizeArgs {
  ModelArgs model;  // --override-input-shapes
  bool fold_constants = false;
  int num_passes = -1;
  std::string fold_size_threshold;
  bool cleanup = false;
  bool toposort = false;
  std::string output_path;
};

struct InsertArgs {
  ModelArgs model;
  InsertNodeSpec node;
  std::vector<std::string> attrs;  // name=value
  bool shape_inference = false;
  std::string output_path;
};

struct WeightArgs {
  ModelArgs model;
  std::string exclude_list;  // weight-strip
  uint64_t seed = 1;         // weight-reconstruct
  std::string output_path;
};

// Loads and validates a model for surgery; ops ONNX does not define are refused,
// since neither shape inference nor folding could handle them.
OnnxModel load_for_surgery(const ModelArgs& args) {
  OnnxModel model = load_onnx_model(args.path, true, args.external_data_dir);
  const std::vector<std::string> unknown = validate_onnx_model(model);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
    VKG_THROW("model '" << args.path << "' uses ops that ONNX opset " << default_opset(model)
                        << " does not define: " << list << "; surgeon works on standard ONNX ops only");
  }
  return model;
}

// `checker_passed`: whether the source model passed ONNX's checker (then the result must too).
void save(const OnnxModel& model, const std::string& path, const std::string& what, bool checker_passed) {
  check_model_before_saving(model, what, checker_passed);
  save_onnx_model(model, path);
  VKG_INFO("Saved ONNX model to: " << path);
}

void run_extract(const ExtractArgs& args) {
  VKG_START("RUNNING | Command: vkgraphy surgeon extract " << args.model.path);
  OnnxModel model = load_for_surgery(args.model);
  const bool checker_passed = onnx_checker_problem(model).empty();
  const InputShapes shapes = args.model.shapes();
  if (!shapes.empty()) {
    override_input_shapes(model, shapes);
    clear_inferred_shapes(model);
  }
  const bool shape_inference = !args.model.no_shape_inference;
  if (shape_inference) infer_shapes(model, /*strict=*/true);

  std::vector<TensorSpec> inputs, outputs;
  bool retype = false;  // a given shape or dtype may change what the nodes after it compute
  for (const auto& text : args.inputs) {
    inputs.push_back(parse_input_spec(text));
    retype = retype || inputs.back().shape || inputs.back().dtype;
  }
  for (const auto& text : args.outputs) outputs.push_back(parse_output_spec(text));
  const ExtractReport report = extract_subgraph(model, inputs, outputs);
  if (retype && shape_inference) {
    clear_inferred_shapes(model);
    infer_shapes(model, /*strict=*/false);
  }
  VKG_INFO("Extracted " << report.nodes_kept << " of " << report.nodes_before << " node(s), with " << report.inputs
                        << " input(s) and " << report.outputs << " output(s)");
  save(model, args.output_path, "the extracted model", checker_passed);
  VKG_FINISH("PASSED | Command: vkgraphy surgeon extract " << args.model.path);
}

void run_sanitize(const SanitizeArgs& args) {
  VKG_START("RUNNING | Command: vkgraphy surgeon sanitize " << args.model.path);
  OnnxModel model = load_for_surgery(args.model);
  const bool checker_passed = onnx_checker_problem(model).empty();
  SanitizeOptions options;
  options.input_shapes = args.model.shapes();
  options.shape_inference = !args.model.no_shape_inference;
  options.fold_constants = args.fold_constants;
  options.num_passes = args.num_passes;
  if (!args.fold_size_threshold.empty()) options.fold_size_threshold = parse_byte_size(args.fold_size_threshold);
  options.cleanup = args.cleanup;
  options.toposort = args.toposort;
  if (!args.fold_constants && (args.num_passes >= 0 || !args.fold_size_threshold.empty()))
    VKG_WARNING("--num-passes and --fold-size-threshold are ignored without --fold-constants");

  const SanitizeReport report = sanitize_model(model, options);
  if (args.fold_constants) VKG_INFO("Folded " << report.nodes_folded << " node(s)");
  if (report.nodes_removed > 0) VKG_INFO("Removed " << report.nodes_removed << " dead node(s)");
  VKG_INFO("The model has " << report.nodes_after << " node(s) (" << report.nodes_before << " before)");
  save(model, args.output_path, "the sanitized model", checker_passed);
  VKG_FINISH("PASSED | Command: vkgraphy surgeon sanitize " << args.model.path);
}

// The model argument and --external-data-dir only: the tool neither reshapes, infers nor folds.
void add_model_only(CLI::App& cmd, ModelArgs& model) {
  model.add_to(cmd, "--override-input-shapes");
  for (const char* unused : {"--override-input-shapes", "--no-fold-constants", "--no-shape-inference"})
    cmd.remove_option(cmd.get_option(unused));
}

void add_output_option(CLI::App& cmd, std::string& path) {
  cmd.add_option("-o,--output", path, "Path of the ONNX model to write")->required();
}

void run_insert(const InsertArgs& args) {
  VKG_START("RUNNING | Command: vkgraphy surgeon insert " << args.model.path);
  OnnxModel model = load_for_surgery(args.model);
  const bool checker_passed = onnx_checker_problem(model).empty();
  InsertNodeSpec spec = args.node;
  for (const std::string& text : args.attrs) {
    const size_t eq = text.find('=');
    VKG_CHECK(eq != std::string::npos && eq > 0, "--attrs: expected name=value, got '" << text << "'");
    spec.attrs.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
  const size_t removed = insert_node(model, spec);
  // A node of an op ONNX does not define (a plugin's) cannot pass the checker; it is saved with a warning.
  const bool known_op = is_onnx_op(model, spec.op);
  try {
    validate_onnx_model(model);
  } catch (const Error& e) {
    VKG_THROW("the model with the new " << spec.op << " node would be invalid: " << e.what());
  }
  // A graph output the new node writes has no shape yet: inferred, so that the checker passes.
  const auto& outputs = model.proto->graph().output();
  const bool output_shape_unknown = std::any_of(outputs.begin(), outputs.end(), [](const auto& v) {
    return v.type().has_tensor_type() && !v.type().tensor_type().has_shape();
  });
  if (args.shape_inference || (output_shape_unknown && known_op)) infer_shapes(model, /*strict=*/false);
  VKG_INFO("Inserted a " << spec.op << " node" << (removed > 0 ? ", replacing " + std::to_string(removed) + " node(s)" : ""));
  save(model, args.output_path, "the model with the inserted node", checker_passed && known_op);
  VKG_FINISH("PASSED | Command: vkgraphy surgeon insert " << args.model.path);
}

// The model for weight-strip and weight-reconstruct: ops ONNX does not define (plugins) are welcome.
void load_for_weights(const WeightArgs& args, OnnxModel& model) {
  model = load_onnx_model(args.model.path, true, args.model.external_data_dir);
  validate_onnx_model(model);
}

std::set<std::string> read_exclude_list(const std::string& path) {
  std::set<std::string> names;
  if (path.empty()) return names;
  std::istringstream lines(read_whole_file(path, "exclude list"));
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) names.insert(line);
  }
  return names;
}

void run_weight_strip(const WeightArgs& args) {
  VKG_START("RUNNING | Command: vkgraphy surgeon weight-strip " << args.model.path);
  OnnxModel model;
  load_for_weights(args, model);
  const StripReport report = strip_weights(model, read_exclude_list(args.exclude_list));
  if (!report.excluded_not_found.empty()) {
    std::string list;
    for (const std::string& n : report.excluded_not_found) list += (list.empty() ? "" : ", ") + n;
    VKG_WARNING("these weights of the exclude list were not found among those stripped: " << list);
  }
  // ONNX's checker refuses initializers without data, so it is not run: weight-reconstruct makes
  // the model whole again.
  save_onnx_model(model, args.output_path);
  VKG_INFO("Saved ONNX model to: " << args.output_path);
  VKG_FINISH("Finished stripping " << report.stripped << " weights");
}

void run_weight_reconstruct(const WeightArgs& args) {
  VKG_START("RUNNING | Command: vkgraphy surgeon weight-reconstruct " << args.model.path);
  OnnxModel model;
  load_for_weights(args, model);
  const size_t filled = reconstruct_weights(model, args.seed);
  // Whether the model passed ONNX's checker before it was stripped is not known here: a problem
  // the checker finds is a warning.
  try {
    validate_onnx_model(model);
  } catch (const Error& e) {
    VKG_THROW("the reconstructed model would be invalid: " << e.what());
  }
  if (const std::string problem = onnx_checker_problem(model); !problem.empty())
    VKG_WARNING("the reconstructed model does not pass ONNX's checker: " << problem);
  save_onnx_model(model, args.output_path);
  VKG_INFO("Saved ONNX model to: " << args.output_path);
  VKG_FINISH("Finished reconstructing " << filled << " weights");
}

void add_weight_tools(CLI::App& surgeon) {
  auto strip_args = std::make_shared<WeightArgs>();
  CLI::App* strip = surgeon.add_subcommand(
      "weight-strip", "Remove the weights' data from a model (names, types and shapes stay), to share it");
  strip->fallthrough();
  add_model_only(*strip, strip_args->model);
  strip->add_option("--exclude-list", strip_args->exclude_list, "A text file of initializer names to keep, one a line")
      ->check(CLI::ExistingFile);
  add_output_option(*strip, strip_args->output_path);
  strip->callback([strip_args] { run_weight_strip(*strip_args); });

  auto reconstruct_args = std::make_shared<WeightArgs>();
  CLI::App* reconstruct = surgeon.add_subcommand(
      "weight-reconstruct", "Fill the weights weight-strip removed with proxy values, so that the model builds and runs");
  reconstruct->fallthrough();
  add_model_only(*reconstruct, reconstruct_args->model);
  reconstruct->add_option("--seed", reconstruct_args->seed, "Seed of the proxy values")->capture_default_str();
  add_output_option(*reconstruct, reconstruct_args->output_path);
  reconstruct->callback([reconstruct_args] { run_weight_reconstruct(*reconstruct_args); });
}

void add_insert(CLI::App& surgeon) {
  auto args = std::make_shared<InsertArgs>();
  CLI::App* insert = surgeon.add_subcommand(
      "insert", "Insert one node between given tensors; what computed its outputs before is removed");
  insert->fallthrough();
  add_model_only(*insert, args->model);
  insert->add_option("--inputs", args->node.inputs, "The new node's input tensors, in order")->required()->take_all();
  insert
      ->add_option("--outputs", args->node.outputs,
                   "The new node's output tensors, in order; one that is also an input gets a new tensor")
      ->required()
      ->take_all();
  insert->add_option("--op", args->node.op, "The ONNX op of the new node")->required();
  insert->add_option("--name", args->node.name, "The new node's name");
  insert
      ->add_option("--attrs", args->attrs,
                   "Attributes as name=value: an integer, a float (with a point), a string (quoted to force "
                   "one: name='53'), or a list in brackets, e.g. axes=[0,1]")
      ->take_all();
  insert->add_flag("--shape-inference,--do-shape-inference", args->shape_inference,
                   "Infer shapes of the result before saving it");
  add_output_option(*insert, args->output_path);
  insert->callback([args] { run_insert(*args); });
}

}  // namespace

void add_surgeon_tool(CLI::App& app) {
  CLI::App* surgeon = app.add_subcommand("surgeon", "Change ONNX models: extract subgraphs, sanitize, insert nodes, strip and reconstruct weights");
  surgeon->require_subcommand(1);
  surgeon->fallthrough();

  auto extract_args = std::make_shared<ExtractArgs>();
  CLI::App* extract = surgeon->add_subcommand("extract", "Extract the subgraph between given tensors");
  extract->fallthrough();
  extract_args->model.add_to(*extract, "--model-input-shapes");
  extract->remove_option(extract->get_option("--no-fold-constants"));  // extract never folds
  extract
      ->add_option("--inputs", extract_args->inputs,
                   "Subgraph inputs as name:shape:dtype, e.g. x:[1,3,224,224]:float32 y:auto:auto "
                   "(default: the model's inputs)")
      ->take_all();
  extract
      ->add_option("--outputs", extract_args->outputs,
                   "Subgraph outputs as name:dtype, e.g. y:float32 z:auto (default: the model's outputs)")
      ->take_all();
  add_output_option(*extract, extract_args->output_path);
  extract->callback([extract_args] { run_extract(*extract_args); });

  auto sanitize_args = std::make_shared<SanitizeArgs>();
  CLI::App* sanitize = surgeon->add_subcommand("sanitize", "Fold constants, override input shapes, clean up");
  sanitize->fallthrough();
  sanitize_args->model.add_to(*sanitize, "--override-input-shapes");
  sanitize->remove_option(sanitize->get_option("--no-fold-constants"));  // folding is opt-in here
  sanitize->add_flag("--fold-constants", sanitize_args->fold_constants,
                     "Fold nodes whose values do not depend on runtime inputs into initializers");
  sanitize
      ->add_option("--num-passes", sanitize_args->num_passes,
                   "Constant folding rounds at most (default: until nothing changes)")
      ->check(CLI::NonNegativeNumber);
  sanitize->add_option("--fold-size-threshold", sanitize_args->fold_size_threshold,
                       "Do not fold nodes whose outputs take more bytes than this (suffixes K, M, G), e.g. 16M");
  sanitize->add_flag("--cleanup", sanitize_args->cleanup, "Remove nodes and initializers no output depends on");
  sanitize->add_flag("--toposort", sanitize_args->toposort, "Sort the nodes topologically");
  add_output_option(*sanitize, sanitize_args->output_path);
  sanitize->callback([sanitize_args] { run_sanitize(*sanitize_args); });
  add_insert(*surgeon);
  add_weight_tools(*surgeon);
}

}  // namespace vkg::tools
