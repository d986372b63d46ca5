// `vkgraphy debug precision`: finds the layers that must run at a higher precision, with a 1-minimal
// search seeded by an fp16-risk analysis (the default) or Polygraphy's bisect and linear modes
// (debug/precision_search.h does the searches; this file its command line, the candidate layers,
// each iteration's build and the answer). --mode linear runs side by side with --jobs or
// --executor slurm. Exit codes: docs/debug.md.
#include <algorithm>
#include <set>

#include "debug/fp16_risk.h"
#include "debug/precision_search.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
#include "runtime/engine/layer_precisions_file.h"
#include "runtime/onnx/onnx_import.h"
#include "tools/args_builder.h"
#include "tools/args_data_loader.h"
#include "tools/args_debug.h"
#include "tools/args_model.h"
#include "tools/args_report.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct PrecisionArgs {
  ModelArgs model;
  BuilderArgs builder;
  DataLoaderArgs data;  // --validate-tactics
  DebugArgs debug;
  std::string mode = "minimal";
  std::string direction = "forward";
  std::string precision = "float32";
  bool prune = false;
  std::string save_layer_precisions;
  CLI::App* app = nullptr;
  ReportArgs report;
  std::string make_iteration;  // the worker form of a side-by-side job (--mode linear): "N:PATH"
};

// A layer whose precision the tool may set, with the ONNX nodes it runs.
struct PrecisionCandidate {
  std::string layer;
  std::vector<std::string> nodes;
};

// Layers whose precision the tool may set: those a build can run in fp16 as
// well as in fp32 (not integer layers, not layers without an fp16 tactic),
// minus the ones the user pinned. Found with two untimed builds.
std::vector<PrecisionCandidate> precision_candidates(const Graph& graph, BuilderConfig config,
                                                     const vk::DeviceInfo& info) {
  config.optimization_level = 0;
  config.replay = nullptr;
  config.timing_cache = nullptr;
  config.random_seed.reset();
  config.progress = false;
  const std::map<std::string, Precision> user_pins = config.layer_precisions;
  const ScopedSeverity quiet(Severity::Error);
  // Pins speak in node names: a fused layer ("conv1+relu1") is pinned through its nodes.
  auto nodes_of = [](const TacticChoice& layer) {
    return layer.nodes.empty() ? std::vector<std::string>{layer.name} : layer.nodes;
  };
  auto is_node_layer = [](const TacticChoice& layer) { return layer.op != "Reformat" && layer.op != "Constant"; };
  std::vector<PrecisionCandidate> out;
  config.layer_precisions.clear();
  const BuildResult all = build_engine(graph, config, info, device_identity(info), nullptr);
  config.constraints = PrecisionConstraints::Prefer;
  for (const TacticChoice& layer : all.replay.layers)
    if (is_node_layer(layer))
      for (const std::string& node : nodes_of(layer)) config.layer_precisions[node] = Precision::FP16;
  const BuildResult fp16 = build_engine(graph, config, info, device_identity(info), nullptr);
  for (const TacticChoice& layer : fp16.replay.layers) {
    const std::vector<std::string> nodes = nodes_of(layer);
    const bool pinned = std::any_of(nodes.begin(), nodes.end(), [&](const std::string& n) {
      return std::any_of(user_pins.begin(), user_pins.end(),
                         [&](const auto& pin) { return layer_precision_matches(pin.first, n); });
    });
    if (is_node_layer(layer) && layer.precision == Precision::FP16 && !pinned) out.push_back({layer.name, nodes});
  }
  return out;
}

// The fp16-risk score (NodeRisk::score) of each candidate layer: the worst of
// its nodes', from a reference run on the data loader's inputs.
std::vector<double> candidate_risk(const Graph& graph, const std::vector<PrecisionCandidate>& candidates,
                                   PrecisionArgs& args) {
  args.data.set_input_shapes(args.model.shapes());
  const std::vector<TensorMap> feeds = load_or_generate_inputs(graph.inputs, args.data.options());
  const debug::Fp16RiskAnalysis analysis = debug::analyze_fp16_risk(graph, feeds);
  std::map<std::string, const debug::NodeRisk*> by_node;
  for (const debug::NodeRisk& n : analysis.nodes()) by_node[n.node] = &n;
  std::vector<double> risk;
  std::string flagged;
  for (const PrecisionCandidate& c : candidates) {
    double score = 0;
    debug::Fp16Risk worst = debug::Fp16Risk::None;
    for (const std::string& node : c.nodes) {
      auto it = by_node.find(node);
      if (it == by_node.end()) continue;
      score = std::max(score, it->second->score());
      worst = std::max(worst, it->second->risk());
    }
    risk.push_back(score);
    if (worst != debug::Fp16Risk::None) flagged += "\n    " + c.layer + " (" + debug::fp16_risk_name(worst) + ")";
  }
  const size_t at_risk = size_t(std::count_if(risk.begin(), risk.end(), [](double r) { return r > 0; }));
  VKG_INFO("fp16-risk analysis of a reference run (" << feeds.size() << " iteration(s)): " << at_risk << " of "
                                                     << candidates.size() << " candidate layer(s) at risk"
                                                     << (at_risk ? ":" : "") << flagged);
  VKG_VERBOSE(debug::fp16_risk_text(analysis, feeds.size()));
  return risk;
}

// Settles --mode for -p (with -p float16, minimal would always answer "none", so bisect is the
// default) and warns about the options the mode ignores.
void settle_precision_mode(PrecisionArgs& args, Precision high) {
  if (high == Precision::FP16)
    VKG_WARNING(
        "-p float16 marks layers to run in fp16, the lowest precision vkgraphy has; the other candidate "
        "layers run in fp32, so this finds how many layers can run in fp16 and still pass");
  if (high == Precision::FP16 && args.mode == "minimal") {
    VKG_CHECK(!given_option(*args.app, "--mode"),
              "--mode minimal finds the fewest layers to run at the higher precision, which with -p float16 is "
              "always none (every layer in fp32 passes): use --mode bisect or linear");
    args.mode = "bisect";  // the default for -p float16
  }
  if (args.mode == "minimal") {
    for (const char* flag : {"--dir", "--prune"})
      if (given_option(*args.app, flag))
        VKG_WARNING(flag << " has no effect with --mode minimal (the default), which finds a 1-minimal set "
                            "itself; it applies to --mode bisect and linear");
    warn_data_loader_mismatch(*args.app, "debug precision",
                              "the fp16-risk analysis that starts the search runs on debug precision's inputs");
  }
}

std::vector<std::string> candidate_layer_names(const std::vector<PrecisionCandidate>& candidates) {
  std::vector<std::string> layers;
  for (const PrecisionCandidate& c : candidates) layers.push_back(c.layer);
  return layers;
}

// --mode bisect/linear, --dir and --prune as the search takes them.
debug::PrecisionSearchOptions precision_search_options(const PrecisionArgs& args) {
  debug::PrecisionSearchOptions search;
  search.mode = args.mode == "linear" ? debug::SearchMode::Linear : debug::SearchMode::Bisect;
  search.forward = args.direction == "forward";
  search.prune = args.prune;
  return search;
}

// The config of one iteration: the candidates in `marked` pinned to `high`, the other candidates to `low`
// (obeyed unless --precision-constraints says otherwise).
BuilderConfig marked_layers_config(const PrecisionArgs& args, const BuilderConfig& base,
                                   const std::vector<PrecisionCandidate>& candidates, const std::vector<size_t>& marked,
                                   Precision high, Precision low) {
  BuilderConfig c = base;
  if (!args.builder.precision_constraints_given()) c.constraints = PrecisionConstraints::Obey;
  for (const PrecisionCandidate& l : candidates)
    for (const std::string& node : l.nodes) c.layer_precisions[node] = low;
  for (size_t i : marked)
    for (const std::string& node : candidates[i].nodes) c.layer_precisions[node] = high;
  return c;
}

// --report: the candidates, the answer (when one passed) and every iteration's marked layers.
void write_precision_report(PrecisionArgs& args, const vk::DeviceInfo& info, const debug::IterationLoop& loop,
                            const std::vector<std::string>& layers, const std::optional<std::vector<size_t>>& marked,
                            const std::map<int, std::vector<std::string>>& marked_per_iteration, Precision high) {
  args.report.report().title = "vkgraphy debug precision " + args.model.path;
  args.report.set_device(info);
  args.report.report().summary.emplace_back("candidate layers", std::to_string(layers.size()));
  if (marked) {
    std::string names;
    for (size_t i : *marked) names += (names.empty() ? "" : ", ") + layers[i];
    args.report.report().summary.emplace_back("layers to run in " + std::string(precision_name(high)),
                                              names.empty() ? "(none)" : names);
  }
  args.report.set_iterations("debug precision iterations", loop.records(), marked_per_iteration,
                             std::string("layers in ") + precision_name(high));
  args.report.write();
}

// The answer is the configuration that passed: the search's pins and the user's own.
LayerPrecisions passing_precisions(const BuilderConfig& base, const std::vector<PrecisionCandidate>& candidates,
                                   const std::vector<size_t>& marked, Precision high) {
  LayerPrecisions answer;
  answer.constraints = PrecisionConstraints::Obey;
  for (size_t i : marked)
    for (const std::string& node : candidates[i].nodes) answer.layers[node] = high;
  for (const auto& [name, precision] : base.layer_precisions) answer.layers.emplace(name, precision);
  return answer;
}

// The user's own --layer-precisions, as they go on the suggested command line (" NAME:fp32 'pat*:fp16'").
std::string user_pins_flag(const BuilderConfig& base) {
  std::string user_flag;
  for (const auto& [name, precision] : base.layer_precisions) {
    const std::string pin = name + ":" + precision_name(precision);
    user_flag += " " + (is_layer_pattern(name) ? "'" + pin + "'" : pin);
  }
  return user_flag;
}

// Saves the passing configuration (--save-layer-precisions) and logs the layers to pin and the
// flags that pin them; returns the exit code.
int finish_precision_search(const PrecisionArgs& args, const BuilderConfig& base,
                            const std::vector<PrecisionCandidate>& candidates, const std::vector<std::string>& layers,
                            const std::vector<size_t>& marked, Precision high) {
  const LayerPrecisions answer = passing_precisions(base, candidates, marked, high);
  const std::string user_flag = user_pins_flag(base);
  if (!args.save_layer_precisions.empty()) {
    save_layer_precisions(args.save_layer_precisions, answer);
    VKG_INFO("Saved the layer precisions to " << args.save_layer_precisions
                                              << " (build with --fp16 --load-layer-precisions "
                                              << args.save_layer_precisions << ")");
  }
  if (marked.empty()) {
    VKG_FINISH("The check passes with no layer in "
               << precision_name(high) << (user_flag.empty() ? "" : " beyond --layer-precisions" + user_flag));
    return kExitSuccess;
  }
  std::string names, flag;
  for (size_t i : marked) {
    names += (names.empty() ? "" : ", ") + layers[i];
    for (const std::string& node : candidates[i].nodes) flag += " " + node + ":" + precision_name(high);
  }
  VKG_FINISH("To pass the check, run these " << marked.size() << " layer(s) in " << precision_name(high) << ": "
                                             << names);
  VKG_FINISH("Build with: --fp16 --layer-precisions" << flag << user_flag << " --precision-constraints obey");
  return kExitSuccess;
}

// -p: the precision the marked layers run in.
Precision higher_precision(const PrecisionArgs& args) {
  return args.precision == "float16" ? Precision::FP16 : Precision::FP32;
}

// The search's setting that every iteration shares: the candidate layers and the two precisions.
struct PrecisionSetting {
  Precision high = Precision::FP32, low = Precision::FP16;
  BuilderConfig base;
  std::vector<PrecisionCandidate> candidates;
  std::vector<std::string> layers;
};

PrecisionSetting precision_setting(PrecisionArgs& args, const Graph& graph, const vk::DeviceInfo& info) {
  VKG_CHECK(info.fp16(), "device '" << info.name
                                    << "' has no fp16 support (shaderFloat16 and 16-bit storage buffers), so there "
                                       "is no precision to choose per layer");
  PrecisionSetting s;
  s.high = higher_precision(args);
  s.low = s.high == Precision::FP32 ? Precision::FP16 : Precision::FP32;
  s.base = args.builder.config();
  s.candidates = precision_candidates(graph, s.base, info);
  VKG_CHECK(!s.candidates.empty(), "no layer of '" << args.model.path << "' can run in both fp16 and fp32");
  s.layers = candidate_layer_names(s.candidates);
  return s;
}

// The worker form of --mode linear side by side (--make-iteration N:PATH): builds the engine of
// linear iteration N (the first or last N candidate layers marked) into PATH.
int make_precision_iteration(PrecisionArgs& args) {
  const auto [index, path] = iteration_to_make(args.make_iteration);
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  const PrecisionSetting s = precision_setting(args, graph, ctx->device().info());
  VKG_CHECK(size_t(index) <= s.layers.size(),
            "--make-iteration " << index << ": there are only " << s.layers.size() << " candidate layers");
  const std::vector<size_t> marked = debug::select_layers(s.layers.size(), size_t(index), args.direction == "forward");
  const BuilderConfig c = marked_layers_config(args, s.base, s.candidates, marked, s.high, s.low);
  save_engine(path, args.builder.build_with(graph, *ctx, c).engine);
  return kExitSuccess;
}

// --mode linear with --jobs or --executor slurm: iteration N marks N layers, side by side, until
// the first that passes; then --prune one at a time here. Returns the passing marked layers.
std::optional<std::vector<size_t>> linear_side_by_side(PrecisionArgs& args, const PrecisionSetting& s,
                                                       debug::IterationLoop& loop, const debug::MarkLayersFn& make,
                                                       std::map<int, std::vector<std::string>>& marked_per_iteration) {
  const bool forward = args.direction == "forward";
  const std::string high = precision_name(s.high);
  debug::Until until{debug::Until::Kind::Good, 0, int(s.layers.size()) + 1};
  debug::SideBySideTool tool;
  tool.describe = [&](int index) {
    return debug::describe_marked(s.layers, debug::select_layers(s.layers.size(), size_t(index), forward), high);
  };
  tool.make = worker_command;
  tool.own_args = own_command();
  tool.on_recorded = [&](int index, const std::string&) {
    for (size_t i : debug::select_layers(s.layers.size(), size_t(index), forward))
      marked_per_iteration[index].push_back(s.layers[i]);
  };
  VKG_START("Marking one more layer each iteration, " << args.debug.jobs() << " iteration(s) at a time");
  debug::run_side_by_side(loop, until, *args.debug.runner(until), tool);
  if (loop.records().empty() || !loop.records().back().passed) return std::nullopt;
  const std::vector<size_t> marked = debug::select_layers(s.layers.size(), size_t(loop.iterations() - 1), forward);
  VKG_FINISH("The " << (forward ? "first " : "last ") << marked.size() << " layer(s) in " << high << " pass the check");
  return args.prune ? debug::prune_marked(s.layers, high, loop, marked, make) : marked;
}

int debug_precision(PrecisionArgs& args) {
  VKG_CHECK(args.builder.fp16(), "debug precision needs a lower precision to trade against: add --fp16");
  if (!args.make_iteration.empty()) return make_precision_iteration(args);
  settle_precision_mode(args, higher_precision(args));
  const bool minimal = args.mode == "minimal";
  VKG_CHECK(!args.debug.side_by_side() || args.mode == "linear",
            "--jobs and --executor run the iterations of --mode linear side by side; those of "
                << args.mode << " depend each on the last");
  debug::IterationLoop loop("precision", args.debug.options());  // first: a check that cannot run fails now
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  const vk::DeviceInfo& info = ctx->device().info();
  const PrecisionSetting s = precision_setting(args, graph, info);
  VKG_INFO("Layers that can take either precision (" << s.layers.size() << ", in network order):");
  for (const std::string& l : s.layers) VKG_INFO("    " << l);
  const std::vector<double> risk = minimal ? candidate_risk(graph, s.candidates, args) : std::vector<double>{};
  VKG_START("Using " << precision_name(s.high) << " as the higher precision; other candidate layers run in "
                     << precision_name(s.low));

  const debug::PrecisionSearchOptions search = precision_search_options(args);
  std::map<int, std::vector<std::string>> marked_per_iteration;  // --report
  const debug::MarkLayersFn make = [&](const std::vector<size_t>& m) {
    const BuilderConfig c = marked_layers_config(args, s.base, s.candidates, m, s.high, s.low);
    std::vector<std::string>& names = marked_per_iteration[loop.iterations()];
    for (size_t i : m) names.push_back(s.layers[i]);
    const BuildResult built = args.builder.build_with(graph, *ctx, c);
    save_engine(loop.iter_artifact(), built.engine);
  };
  std::optional<std::vector<size_t>> marked;
  const bool finished = debug::run_interruptible([&] {
    if (args.debug.side_by_side())
      marked = linear_side_by_side(args, s, loop, make, marked_per_iteration);
    else
      marked = minimal ? debug::minimal_precision_set(s.layers, risk, precision_name(s.high), loop, make)
                       : debug::search_precision(s.layers, precision_name(s.high), loop, search, make);
  });
  loop.log_summary();
  if (args.report.wanted()) write_precision_report(args, info, loop, s.layers, marked, marked_per_iteration, s.high);
  if (!finished) return kExitInterrupted;
  if (!marked) {
    VKG_ERROR("No configuration passed, not even with all " << s.layers.size() << " candidate layer(s) in "
                                                            << precision_name(s.high));
    return kExitDebugNotFound;
  }
  return finish_precision_search(args, s.base, s.candidates, s.layers, *marked, s.high);
}

}  // namespace

// `debug precision`: finds the layers that need a higher precision.
void add_debug_precision(CLI::App& debug) {
  auto args = std::make_shared<PrecisionArgs>();
  CLI::App* sub = debug.add_subcommand(
      "precision", "Find the layers that must run at a higher precision (bisect or linear over the network)");
  sub->fallthrough();
  args->model.add_to(*sub);
  args->builder.add_to(*sub);
  args->data.add_to(*sub);
  args->builder.use_data_loader(args->data);
  args->debug.add_to(*sub, "vkgraphy_debug.engine", false, DebugArgs::Jobs::Yes);
  sub->add_option("--mode", args->mode,
                  "minimal (a 1-minimal set of layers, starting from an fp16-risk analysis of a reference run on "
                  "the data loader's inputs), or Polygraphy's bisect (binary search over the number of layers) "
                  "and linear (one more layer each iteration)")
      ->check(CLI::IsMember({"minimal", "bisect", "linear"}))
      ->capture_default_str();
  sub->add_option("--dir,--direction", args->direction,
                  "forward (mark layers from the network inputs) or reverse (from the outputs)")
      ->check(CLI::IsMember({"forward", "reverse"}))
      ->capture_default_str();
  sub->add_option("-p,--precision", args->precision, "The higher precision: float32 or float16")
      ->check(CLI::IsMember({"float32", "float16"}))
      ->capture_default_str();
  sub->add_flag("--prune", args->prune,
                "bisect/linear: afterwards, try unmarking each marked layer (one iteration each)");
  sub->add_option("--save-layer-precisions", args->save_layer_precisions,
                  "Write the answer as a layer-precisions file, for convert/run --load-layer-precisions");
  args->app = sub;
  args->report.add_to(*sub, "debug precision");
  // The worker form of a --jobs job of --mode linear (debug/side_by_side.h).
  sub->add_option("--make-iteration", args->make_iteration)->group("");
  sub->callback([args] { set_exit_code(debug_precision(*args)); });
}

}  // namespace vkg::tools
