// `vkgraphy debug`: the iterative debug tools (Polygraphy's `debug`):
//   build      rebuild the engine every iteration and sort the results
//   repeat     run the check again and again and sort the results
//   precision  find the layers that need a higher precision
//   reduce     shrink a failing ONNX model to the smallest failing subgraph
//   rewrites   (tools/debug_rewrites.cpp) find the graph rewrite of the builder that makes the engine wrong
//   diff-tactics  (also `inspect diff-tactics`) the tactics to blame
// Exit codes: docs/debug.md, "Exit codes".
#include <algorithm>
#include <filesystem>
#include <set>

#include "debug/fp16_risk.h"
#include "debug/job_spec.h"
#include "debug/precision_search.h"
#include "debug/reduce.h"
#include "debug/reference_check.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
#include "runtime/engine/layer_precisions_file.h"
#include "runtime/onnx/onnx_import.h"
#include "tools/args_builder.h"
#include "tools/args_comparator.h"
#include "tools/args_data_loader.h"
#include "tools/args_debug.h"
#include "tools/args_model.h"
#include "tools/args_report.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

// ---- build ---------------------------------------------------------------

struct BuildArgs {
  ModelArgs model;
  BuilderArgs builder;
  DataLoaderArgs data;  // --validate-tactics
  DebugArgs debug;
  ReportArgs report;
  std::string make_iteration;  // the worker form of a side-by-side job: "N:PATH"
};

// What build iteration `index` tries ("build 3 (random tactics, seed 8)"); its config's seed is
// --tactic-selection random[:SEED] plus the index: each iteration draws anew, reproducibly.
std::string build_iteration(BuilderArgs& builder, int index, BuilderConfig* config_out = nullptr) {
  BuilderConfig config = builder.config();
  if (config.random_seed) *config.random_seed += static_cast<uint64_t>(index);
  const std::string what =
      "build " + std::to_string(index) +
      (config.random_seed ? " (random tactics, seed " + std::to_string(*config.random_seed) + ")" : "");
  if (config_out) *config_out = std::move(config);
  return what;
}

// The iteration and path of the worker form's --make-iteration N:PATH.
std::pair<int, std::string> iteration_to_make(const std::string& text) {
  const size_t colon = text.find(':');
  VKG_CHECK(colon != std::string::npos && colon > 0 && colon < 9 && colon + 1 < text.size() &&
                text.find_first_not_of("0123456789") == colon,
            "--make-iteration takes N:PATH, not '" << text << "'");
  return {std::stoi(text.substr(0, colon)), text.substr(colon + 1)};
}

// The worker form (--make-iteration N:PATH): builds iteration N's engine into PATH and exits.
int make_build_iteration(BuildArgs& args) {
  const auto [index, path] = iteration_to_make(args.make_iteration);
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  BuilderConfig config;
  build_iteration(args.builder, index, &config);
  save_engine(path, args.builder.build_with(graph, *ctx, config).engine);
  return kExitSuccess;
}

// The command a side-by-side job runs to make an iteration: this very command line in its worker form.
std::vector<std::string> worker_command(int index, const std::string& artifact,
                                        const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<std::string> argv = debug::renamed_args(own_command(), renames);
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!ec) argv.at(0) = self;
  argv.push_back("--make-iteration");
  argv.push_back(std::to_string(index) + ":" + artifact);
  return argv;
}

// The choices an engine file holds (a layer's tactic and precision, no timings): what --report
// compares across the iterations of a side-by-side run, whose builds ran elsewhere.
TacticReplay choices_of(const Engine& engine) {
  TacticReplay replay;
  for (const EngineLayer& l : engine.layers)
    replay.layers.push_back({l.name, l.op, l.signature, l.tactic, l.precision, {}, l.nodes});
  return replay;
}

// --report of debug build: the first build's engine and choices, and per iteration the tactics that
// differ from them.
void write_build_report(BuildArgs& args, const vk::DeviceInfo* device, const debug::IterationLoop& loop,
                        const std::optional<BuildResult>& first, const std::map<int, TacticReplay>& choices,
                        bool built_here) {
  args.report.report().title = "vkgraphy debug build " + args.model.path;
  if (device) args.report.set_device(*device);
  std::map<int, std::vector<std::string>> changes;
  if (first) {
    args.report.set_engine(first->engine,
                           std::string(built_here ? "the first build of the session, from "
                                                  : "the first engine the session's jobs built, from ") +
                               args.model.path,
                           built_here ? &first->replay : nullptr);
    for (const auto& [index, replay] : choices) changes[index] = tactic_changes(first->replay, replay);
  }
  args.report.set_iterations("debug build iterations", loop.records(), changes, "tactics that differ from the first build");
  args.report.write();
}

int debug_build_side_by_side(BuildArgs& args, const debug::Until& until, debug::IterationLoop& loop) {
  const std::unique_ptr<debug::JobRunner> runner = args.debug.runner(until);
  std::optional<BuildResult> first;     // --report: the first engine a job built, read back
  std::map<int, TacticReplay> choices;  // --report: each iteration's choices, from its engine
  debug::SideBySideTool tool;
  tool.describe = [&](int index) { return build_iteration(args.builder, index); };
  tool.make = worker_command;
  tool.own_args = own_command();
  if (args.report.wanted())
    tool.on_recorded = [&](int index, const std::string& artifact) {
      Engine engine = load_engine(artifact);
      choices[index] = choices_of(engine);
      if (first) return;
      first.emplace();
      first->engine = std::move(engine);
      first->replay = choices[index];
    };
  const bool finished = debug::run_interruptible([&] { debug::run_side_by_side(loop, until, *runner, tool); });
  loop.log_summary();
  if (args.report.wanted()) write_build_report(args, nullptr, loop, first, choices, false);
  return iterations_exit_code(loop.passed(), loop.iterations(), !finished);
}

int debug_build(BuildArgs& args) {
  if (!args.make_iteration.empty()) return make_build_iteration(args);
  const debug::Until until = args.debug.until();
  debug::IterationLoop loop("build", args.debug.options());  // first: a check that cannot run fails before any work
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  if (args.debug.side_by_side()) return debug_build_side_by_side(args, until, loop);
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  std::optional<BuildResult> first;     // --report: the first build's engine and choices
  std::map<int, TacticReplay> choices;  // --report: each built iteration's choices
  const bool finished = debug::run_interruptible([&] {
    debug::run_until(loop, until, [&](int index) {
      BuilderConfig config;
      const std::string what = build_iteration(args.builder, index, &config);
      return loop.run(
          what,
          [&] {
            BuildResult built = args.builder.build_with(graph, *ctx, config);
            save_engine(loop.iter_artifact(), built.engine);
            if (!args.report.wanted()) return;
            choices[index] = built.replay;
            if (!first) first = std::move(built);
          },
          until.remaining_after(index));
    });
  });
  loop.log_summary();
  if (args.report.wanted()) write_build_report(args, &ctx->device().info(), loop, first, choices, true);
  return iterations_exit_code(loop.passed(), loop.iterations(), !finished);
}

// ---- repeat --------------------------------------------------------------

struct RepeatArgs {
  DebugArgs debug;
  ReportArgs report;
};

int debug_repeat(RepeatArgs& args) {
  const debug::Until until = args.debug.until();
  debug::IterationLoop loop("repeat", args.debug.options());
  auto describe = [](int index) { return "repeat " + std::to_string(index); };
  const bool finished = debug::run_interruptible([&] {
    if (args.debug.side_by_side()) {
      debug::SideBySideTool tool;
      tool.describe = describe;
      tool.make = [](int, const std::string&, const auto&) { return std::vector<std::string>{}; };
      tool.own_args = own_command();
      debug::run_side_by_side(loop, until, *args.debug.runner(until), tool);
      return;
    }
    debug::run_until(loop, until, [&](int index) {
      return loop.run(describe(index), [] {}, until.remaining_after(index));
    });
  });
  loop.log_summary();
  if (args.report.wanted()) {
    args.report.set_iterations("debug repeat iterations", loop.records());
    args.report.write();
  }
  return iterations_exit_code(loop.passed(), loop.iterations(), !finished);
}

// ---- precision -----------------------------------------------------------

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

// The data-loader options the check command line gives a `vkgraphy run` (or
// any tool using the same flags), as text per flag.
std::map<std::string, std::vector<std::string>> data_loader_flags(const std::vector<std::string>& argv) {
  static const std::set<std::string> kFlags = {"--seed", "--val-range", "--load-inputs", "--load-input-data"};
  std::map<std::string, std::vector<std::string>> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string flag = argv[i], value;
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (!kFlags.count(flag)) continue;
    if (flag == "--load-input-data") flag = "--load-inputs";
    std::vector<std::string>& values = out[flag];
    if (!value.empty()) values.push_back(value);
    for (size_t j = i + 1; j < argv.size() && argv[j].rfind("--", 0) != 0; ++j, ++i) values.push_back(argv[j]);
  }
  return out;
}

// The option `flag` of `app` when the command line gave it, else nullptr.
const CLI::Option* given_option(const CLI::App& app, const char* flag) {
  const CLI::Option* o = app.get_option_no_throw(flag);
  return o && o->count() > 0 ? o : nullptr;
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

// Warns when the --check command's data-loader options differ from the tool's
// own: `tool` computes values (frozen branches, the fp16-risk run) from its own
// inputs, which then differ from what the check feeds.
void warn_data_loader_mismatch(const CLI::App& app, const std::string& tool, const std::string& consequence) {
  if (check_command().empty()) return;
  std::map<std::string, std::vector<std::string>> ours;
  for (const char* flag : {"--seed", "--val-range", "--load-inputs"})
    if (const CLI::Option* o = given_option(app, flag)) ours[flag] = o->results();
  const auto theirs = data_loader_flags(check_command());
  for (const char* flag : {"--seed", "--val-range", "--load-inputs"}) {
    const auto a = ours.find(flag);
    const auto b = theirs.find(flag);
    const std::vector<std::string> va = a == ours.end() ? std::vector<std::string>{} : a->second;
    const std::vector<std::string> vb = b == theirs.end() ? std::vector<std::string>{} : b->second;
    if (va == vb) continue;
    auto text = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
      return s.empty() ? std::string("(default)") : s;
    };
    VKG_WARNING("The --check command has " << flag << " " << text(vb) << " but " << tool << " has " << flag << " "
                                           << text(va) << ": " << consequence << ", so give " << tool
                                           << " the same data-loader options (before --check)");
  }
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
  s.high = args.precision == "float16" ? Precision::FP16 : Precision::FP32;
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
  VKG_CHECK(size_t(index) <= s.layers.size(), "--make-iteration " << index << ": there are only " << s.layers.size()
                                                                  << " candidate layers");
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
  settle_precision_mode(args, args.precision == "float16" ? Precision::FP16 : Precision::FP32);
  const bool minimal = args.mode == "minimal";
  VKG_CHECK(!args.debug.side_by_side() || args.mode == "linear",
            "--jobs and --executor run the iterations of --mode linear side by side; those of " << args.mode
                                                                                                << " depend each on the last");
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

// ---- reduce --------------------------------------------------------------

struct ReduceArgs {
  ModelArgs model;
  DataLoaderArgs data;
  DebugArgs debug;
  std::string output;
  std::string min_good;
  std::string mode = "bisect";
  bool no_reduce_inputs = false;
  bool no_reduce_outputs = false;
  bool no_prune = false;
  bool force_fallback = false;
  CLI::App* app = nullptr;
  ReportArgs report;
};

int debug_reduce(ReduceArgs& args) {
  VKG_CHECK(!args.output.empty() || !args.min_good.empty(),
            "debug reduce needs -o/--output (where to write the reduced model) and/or --min-good");
  warn_data_loader_mismatch(*args.app, "debug reduce",
                            "branches that reduce freezes hold values computed from reduce's inputs, and would not "
                            "match what the check feeds");
  debug::ReducePrepOptions prep;
  prep.input_shapes = args.model.shapes();
  prep.shape_inference = !args.model.no_shape_inference;
  prep.force_fallback = args.force_fallback;
  args.data.set_input_shapes(prep.input_shapes);
  prep.data = args.data.options();
  debug::IterationLoop loop("reduce", args.debug.options());  // first: a check that cannot run fails now
  const OnnxModel model = load_onnx_model(args.model.path, true, args.model.external_data_dir);
  const debug::ReductionGraph graph(model, prep);
  if (graph.has_dynamic_shapes())
    VKG_WARNING("Some tensor shapes of '" << args.model.path
                                          << "' are unknown or dynamic; give the input shapes with "
                                             "--model-input-shapes, or use --force-fallback-shape-inference");

  debug::ReduceOptions options;
  options.mode = args.mode == "linear" ? debug::SearchMode::Linear : debug::SearchMode::Bisect;
  options.reduce_inputs = !args.no_reduce_inputs;
  options.reduce_outputs = !args.no_reduce_outputs;
  options.prune = !args.no_prune;
  debug::ReduceResult result;
  const bool finished = debug::run_interruptible([&] { result = debug::reduce_model(graph, loop, options); });
  loop.log_summary();
  if (args.report.wanted()) {
    args.report.report().title = "vkgraphy debug reduce " + args.model.path;
    if (result.bad) args.report.report().summary.emplace_back("minimum failing subgraph", graph.describe(*result.bad));
    args.report.set_iterations("debug reduce iterations", loop.records());
    args.report.write();
  }
  if (!finished) return kExitInterrupted;
  if (!result.original_fails) {
    VKG_ERROR("The original model '" << args.model.path
                                     << "' passes the check, so there is nothing to reduce. Check the --check command "
                                        "and its pass/fail options (--fail-code, --fail-regex)");
    return kExitDebugNoFailure;
  }
  if (!result.bad) {
    VKG_ERROR("No failing subgraph was found");
    return kExitDebugNotFound;
  }
  const size_t original_nodes = graph.num_nodes();
  VKG_FINISH("Minimum failing subgraph: " << graph.describe(*result.bad));
  if (!args.output.empty()) {
    debug::save_reduced_model(graph.materialize(*result.bad), args.output);
    VKG_INFO("Saved the reduced model to " << args.output);
    if (options.mode == debug::SearchMode::Bisect && result.bad_nodes > 1 && result.bad_nodes * 4 >= original_nodes)
      VKG_WARNING("The model could perhaps be reduced further: reduce " << args.output << " again with --mode linear");
  }
  if (!args.min_good.empty()) {
    if (result.good) {
      debug::save_reduced_model(graph.materialize(*result.good), args.min_good);
      VKG_INFO("Saved a passing model close in size (" << graph.describe(*result.good) << ") to " << args.min_good);
    } else {
      VKG_WARNING("No passing subgraph close in size to the reduced model was found; " << args.min_good
                                                                                       << " was not written");
    }
  }
  return kExitSuccess;
}

// `debug build`: rebuilds the engine every iteration.
void add_debug_build(CLI::App& debug) {
  auto args = std::make_shared<BuildArgs>();
  CLI::App* sub = debug.add_subcommand("build", "Rebuild the engine every iteration and sort good and bad results");
  sub->fallthrough();
  args->model.add_to(*sub);
  args->builder.add_to(*sub);
  args->data.add_to(*sub);
  args->builder.use_data_loader(args->data);
  args->debug.add_to(*sub, "vkgraphy_debug.engine", true, DebugArgs::Jobs::Yes);
  args->report.add_to(*sub, "debug build");
  // The worker form of a --jobs job (debug/side_by_side.h): builds iteration N into PATH.
  sub->add_option("--make-iteration", args->make_iteration)->group("");
  sub->callback([args] { set_exit_code(debug_build(*args)); });
}

// `debug repeat`: runs the check again and again.
void add_debug_repeat(CLI::App& debug) {
  auto args = std::make_shared<RepeatArgs>();
  CLI::App* sub = debug.add_subcommand("repeat", "Run the check repeatedly and sort the artifacts of each run");
  sub->fallthrough();
  args->debug.add_to(*sub, "", true, DebugArgs::Jobs::Yes);
  args->report.add_to(*sub, "debug repeat");
  sub->callback([args] { set_exit_code(debug_repeat(*args)); });
}

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

// `debug run-job SPEC`: what a Slurm array task runs (debug/job_spec.h); not for users.
void add_debug_run_job(CLI::App& debug) {
  auto spec = std::make_shared<std::string>();
  CLI::App* sub = debug.add_subcommand("run-job", "Run one iteration of a side-by-side debug loop from its spec file "
                                                  "(what an --executor slurm task runs)");
  sub->group("");
  sub->add_option("spec", *spec, "The job's spec file")->required();
  sub->callback([spec] { set_exit_code(debug::run_job_file(*spec)); });
}

// `debug reduce`: shrinks a failing ONNX model.
void add_debug_reduce(CLI::App& debug) {
  auto args = std::make_shared<ReduceArgs>();
  CLI::App* sub = debug.add_subcommand("reduce", "Reduce a failing ONNX model to the smallest failing subgraph");
  sub->fallthrough();
  args->app = sub;
  args->model.add_to(*sub, "--model-input-shapes,--model-inputs", /*with_fold_option=*/false);
  args->data.add_to(*sub);
  args->debug.add_to(*sub, "vkgraphy_debug.onnx", false);
  sub->add_option("-o,--output", args->output, "Where to write the reduced (failing) model");
  sub->add_option("--min-good,--minimal-good", args->min_good,
                  "Where to write a passing model close in size to the reduced one (when one was seen)");
  sub->add_option("--mode", args->mode, "bisect (binary search) or linear (every node; slower, better with branches)")
      ->check(CLI::IsMember({"bisect", "linear"}))
      ->capture_default_str();
  auto* no_in = sub->add_flag("--no-reduce-inputs", args->no_reduce_inputs,
                              "Keep the graph inputs: only find the earliest failing outputs");
  sub->add_flag("--no-reduce-outputs", args->no_reduce_outputs,
                "Keep the graph outputs: only find the latest failing inputs")
      ->excludes(no_in);
  sub->add_flag("--no-prune", args->no_prune,
                "Skip the last phase, which removes single edge nodes while the model still fails");
  sub->add_flag("--force-fallback-shape-inference", args->force_fallback,
                "Take every tensor's shape from a reference-backend run instead of ONNX shape inference");
  args->report.add_to(*sub, "debug reduce");
  sub->callback([args] { set_exit_code(debug_reduce(*args)); });
}

}  // namespace

void add_debug_tool(CLI::App& app) {
  CLI::App* debug = app.add_subcommand("debug",
                                       "Iterative debugging: find flaky tactics, layers that need fp32 and "
                                       "minimal failing subgraphs");
  debug->require_subcommand(1);
  debug->fallthrough();
  add_debug_build(*debug);
  add_debug_repeat(*debug);
  add_debug_precision(*debug);
  add_debug_reduce(*debug);
  add_debug_rewrites(*debug);
  add_debug_run_job(*debug);
  add_diff_tactics_tool(*debug);
}

}  // namespace vkg::tools
