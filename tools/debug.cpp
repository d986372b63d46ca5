// `vkgraphy debug`: the iterative debug tools (Polygraphy's `debug`):
//   build      rebuild the engine every iteration and sort the results
//   repeat     run the check again and again and sort the results
//   precision  (tools/debug_precision.cpp) find the layers that need a higher precision
//   reduce     shrink a failing ONNX model to the smallest failing subgraph
//   rewrites   (tools/debug_rewrites.cpp) find the graph rewrite of the builder that makes the engine wrong
//   diff-tactics  (also `inspect diff-tactics`) the tactics to blame
// Exit codes: docs/debug.md, "Exit codes".
#include <map>
#include <memory>
#include <optional>

#include "debug/job_spec.h"
#include "debug/reduce.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
#include "runtime/onnx/onnx_import.h"
#include "tools/args_builder.h"
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
// `device`: where the builds ran, when they ran in this process (nullptr: in side-by-side jobs,
// whose engines keep no candidate timings).
void write_build_report(BuildArgs& args, const vk::DeviceInfo* device, const debug::IterationLoop& loop,
                        const std::optional<BuildResult>& first, const std::map<int, TacticReplay>& choices) {
  const bool built_here = device != nullptr;
  args.report.report().title = "vkgraphy debug build " + args.model.path;
  if (built_here) args.report.set_device(*device);
  std::map<int, std::vector<std::string>> changes;
  if (first) {
    args.report.set_engine(first->engine,
                           std::string(built_here ? "the first build of the session, from "
                                                  : "the first engine the session's jobs built, from ") +
                               args.model.path,
                           built_here ? &first->replay : nullptr);
    for (const auto& [index, replay] : choices) changes[index] = tactic_changes(first->replay, replay);
  }
  args.report.set_iterations("debug build iterations", loop.records(), changes,
                             "tactics that differ from the first build");
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
  if (args.report.wanted()) write_build_report(args, nullptr, loop, first, choices);
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
  if (args.report.wanted()) write_build_report(args, &ctx->device().info(), loop, first, choices);
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
      return loop.run(
          describe(index), [] {}, until.remaining_after(index));
    });
  });
  loop.log_summary();
  if (args.report.wanted()) {
    args.report.set_iterations("debug repeat iterations", loop.records());
    args.report.write();
  }
  return iterations_exit_code(loop.passed(), loop.iterations(), !finished);
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

// `debug run-job SPEC`: what a Slurm array task runs (debug/job_spec.h); not for users.
void add_debug_run_job(CLI::App& debug) {
  auto spec = std::make_shared<std::string>();
  CLI::App* sub = debug.add_subcommand("run-job",
                                       "Run one iteration of a side-by-side debug loop from its spec file "
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
