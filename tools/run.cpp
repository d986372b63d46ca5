// `vkgraphy run`: runs a model on one or more backends, with generated or loaded
// inputs, and compares the results (Polygraphy's `run`).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iomanip>
#include <set>
#include <sstream>

#include "debug/layer_isolation.h"
#include "runtime/core/logger.h"
#include "runtime/data/accuracy_results.h"
#include "runtime/data/array_stats.h"
#include "runtime/data/comparator.h"
#include "runtime/data/data_loader.h"
#include "runtime/data/run_results.h"
#include "runtime/engine/engine_file.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"
#include "tools/args_builder.h"
#include "tools/args_comparator.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"
#include "tools/args_report.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct RunArgs {
  ModelArgs model;
  DataLoaderArgs data;
  ComparatorArgs compare;
  std::string save_accuracy_results;  // --save-accuracy-results
  BuilderArgs builder;
  ReportArgs report;
  bool ref = false;
  bool vk = false;
  bool profile = false;
  int warm_up = 0;                        // untimed inferences before the timed ones
  double warm_up_ms = 0;                  // ... and at least this long (GPU clocks ramp up under load)
  std::vector<std::string> onnx_outputs;  // names, or "mark all"
  std::vector<std::string> onnx_exclude_outputs;
  std::vector<std::string> vk_outputs;  // names, "mark all", or "mark layers"
  std::vector<std::string> vk_exclude_outputs;
  std::vector<std::string> freeze_inputs;  // inputs that become build-time constants for --vk
  bool isolate_layers = false;
  // Filled by the Vulkan run under --vk-outputs mark layers: the tensors it marked,
  // which the reference then returns too (unless --onnx-outputs says otherwise).
  std::vector<std::string> layer_outputs;
};

// The engine `run --vk` runs: built as the output options say (BuilderArgs::build_for_outputs).
BuildResult build_for_run(RunArgs& args, const Graph& graph, vk::Context& ctx) {
  return args.builder.build_for_outputs(graph, ctx, args.vk_outputs, &args.layer_outputs);
}

// "ref-runner-N0-11/21/26-14:03:07", in the style of Polygraphy's runner names.
std::string runner_name(const std::string& prefix, int index) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%m/%d/%y-%H:%M:%S", &tm);
  return prefix + "-runner-N" + std::to_string(index) + "-" + buf;
}

// The tensors a runner returns: the graph outputs, or the ones the user marked.
std::vector<std::string> requested_outputs(const Graph& graph, const std::vector<std::string>& marked,
                                           const std::vector<std::string>& excluded) {
  std::vector<std::string> names;
  const bool mark_all = is_mark_all(marked);
  if (marked.empty() || mark_all) {
    for (const ValueInfo& o : graph.outputs) names.push_back(o.name);
  }
  if (mark_all) {
    std::set<std::string> seen(names.begin(), names.end());
    for (const std::string& t : graph.node_outputs())
      if (seen.insert(t).second) names.push_back(t);
  } else if (!marked.empty()) {
    const std::vector<std::string> produced = graph.node_outputs();
    std::set<std::string> known(produced.begin(), produced.end());
    for (const ValueInfo& o : graph.outputs) known.insert(o.name);
    for (const auto& [name, t] : graph.initializers) known.insert(name);
    for (const std::string& m : marked) {
      VKG_CHECK(known.count(m), "--onnx-outputs names '" << m << "', which is not a tensor of the model");
      names.push_back(m);
    }
  }
  std::vector<std::string> kept;
  for (const std::string& n : names)
    if (std::find(excluded.begin(), excluded.end(), n) == excluded.end()) kept.push_back(n);
  return kept;
}

std::vector<IterationResult> run_reference(const Graph& graph, const std::vector<TensorMap>& feeds,
                                           const std::vector<std::string>& outputs, const std::string& name) {
  VKG_START("RUNNING | Runner: " << name);
  ReferenceBackend backend(graph);
  std::vector<IterationResult> results;
  double total = 0;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TensorMap out = backend.run(feeds[i], outputs);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total += secs;
    IterationResult r;
    r.runner_name = name;
    r.runtime = secs;
    for (const std::string& o : outputs) r.outputs.emplace_back(o, std::move(out.at(o)));
    VKG_VERBOSE(name << " | iteration " << i << " took " << secs * 1e3 << " ms");
    results.push_back(std::move(r));
  }
  for (const auto& [o, t] : results.front().outputs) VKG_INFO(name << " | Output: '" << o << "' " << t.describe());
  VKG_FINISH("PASSED | Runner: " << name << " | Completed " << feeds.size() << " iteration(s) in " << total * 1e3
                                 << " ms | Average inference time: " << total * 1e3 / double(feeds.size()) << " ms");
  return results;
}

// The value at fraction q (0..1) of sorted `v` (nearest rank).
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = size_t(std::ceil(q * double(v.size()))) - (q > 0 ? 1 : 0);
  return v[std::min(i, v.size() - 1)];
}

std::string latency_text(const std::vector<double>& ms) {
  double mean = 0;
  for (double x : ms) mean += x;
  mean /= double(ms.size());
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << "mean " << mean << " ms, median " << percentile(ms, 0.5) << " ms, p90 "
    << percentile(ms, 0.9) << " ms, p99 " << percentile(ms, 0.99) << " ms, min " << percentile(ms, 0) << " ms, max "
    << percentile(ms, 1) << " ms";
  return s.str();
}

// The precision column of --profile: a reformat's is the storage it converts to ("->f16").
std::string profile_precision(const Engine& engine, const EngineLayer& layer) {
  if (layer.op == "Reformat" && !layer.outputs.empty() && layer.outputs[0] >= 0)
    return std::string("->") + storage_type_name(engine.tensors[size_t(layer.outputs[0])].storage);
  return precision_name(layer.precision);
}

// A loaded engine's tactics were timed on the device it was built for: says so when that is another one.
void warn_if_built_elsewhere(const Engine& engine, vk::Context& ctx) {
  const DeviceIdentity here = device_identity(ctx.device().info());
  if (!(engine.device == here))
    VKG_WARNING("the engine was built for " << engine.device.describe() << " but runs on " << here.describe()
                                            << ": its tactics were timed on the other device");
}

// The tensors `run --vk` returns: every engine output, or the names asked for, minus the excluded ones.
// `loaded`: the engine came from a file, so only the tensors marked when it was built exist.
std::vector<std::string> vulkan_outputs(const RunArgs& args, const Engine& engine, bool loaded) {
  const bool mark_all = is_mark_all(args.vk_outputs) || is_mark_layers(args.vk_outputs);
  std::vector<std::string> outputs;
  if (!args.vk_outputs.empty() && !mark_all) {
    for (const std::string& o : args.vk_outputs) {
      const int32_t t = engine.find_tensor(o);
      VKG_CHECK(t >= 0 && std::find(engine.outputs.begin(), engine.outputs.end(), t) != engine.outputs.end(),
                "--vk-outputs names '" << o << "', which is not an output of the engine"
                                       << (loaded ? " (mark it when building the engine)" : ""));
      outputs.push_back(o);
    }
  } else {
    if (mark_all && loaded)
      VKG_WARNING("--vk-outputs " << args.vk_outputs[1]
                                  << " with an engine file returns only the tensors marked when it was built");
    for (int32_t t : engine.outputs) outputs.push_back(engine.tensors[size_t(t)].name);
  }
  outputs.erase(std::remove_if(outputs.begin(), outputs.end(),
                               [&](const std::string& o) {
                                 return std::find(args.vk_exclude_outputs.begin(), args.vk_exclude_outputs.end(), o) !=
                                        args.vk_exclude_outputs.end();
                               }),
                outputs.end());
  return outputs;
}

// --warm-up / --warm-up-ms: untimed runs on the first feed, at least that many and at least that long.
void warm_up(const RunArgs& args, vk::EngineExecutor& executor, const std::vector<TensorMap>& feeds,
             const std::string& name) {
  if ((args.warm_up > 0 || args.warm_up_ms > 0) && !feeds.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto elapsed_ms = [&] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    int runs = 0;
    while (runs < args.warm_up || elapsed_ms() < args.warm_up_ms) {
      executor.run(feeds.front());
      ++runs;
    }
    VKG_INFO(name << " | " << runs << " warm-up run(s) took " << elapsed_ms() << " ms");
  }
}

// The timed iterations of a Vulkan run: their outputs, and per iteration the host wall time,
// the device time and each layer's device time (layer_ns[layer][iteration]).
struct TimedIterations {
  std::vector<IterationResult> results;
  std::vector<double> device_ms, wall_ms;
  std::vector<std::vector<double>> layer_ns;
};

TimedIterations run_timed_iterations(vk::EngineExecutor& executor, const Engine& engine,
                                     const std::vector<TensorMap>& feeds, const std::vector<std::string>& outputs,
                                     const std::string& name) {
  TimedIterations timed;
  timed.layer_ns.resize(engine.layers.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TensorMap out = executor.run(feeds[i]);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timed.wall_ms.push_back(secs * 1e3);
    timed.device_ms.push_back(executor.last_device_ns() / 1e6);
    for (size_t l = 0; l < executor.last_layer_ns().size(); ++l)
      timed.layer_ns[l].push_back(executor.last_layer_ns()[l]);
    IterationResult r;
    r.runner_name = name;
    r.runtime = secs;
    for (const std::string& o : outputs) r.outputs.emplace_back(o, std::move(out.at(o)));
    VKG_VERBOSE(name << " | iteration " << i << " took " << timed.wall_ms.back() << " ms (device "
                     << timed.device_ms.back() << " ms)");
    timed.results.push_back(std::move(r));
  }
  return timed;
}

// --profile: the table of every layer's median device time and its share of the total.
void log_profile_table(const Engine& engine, const std::vector<std::vector<double>>& layer_ns, size_t dispatches,
                       size_t iterations, const std::string& name) {
  double total = 0;
  std::vector<double> med;
  for (const auto& v : layer_ns) total += med.emplace_back(percentile(v, 0.5));
  // Fused layers are named after all their nodes ("conv1+bn1+relu1"): the column fits them, up to 64.
  size_t width = 32;
  for (const EngineLayer& layer : engine.layers) width = std::max(width, std::min<size_t>(layer.name.size() + 1, 64));
  std::ostringstream table;
  table << name << " | per-layer device time (median of " << iterations << " iteration(s)):\n";
  table << "    " << std::left << std::setw(5) << "#" << std::setw(int(width)) << "layer" << std::setw(20) << "op"
        << std::setw(34) << "tactic" << std::setw(6) << "prec" << std::right << std::setw(6) << "disp" << std::setw(12)
        << "time (ms)" << std::setw(8) << "%";
  for (size_t l = 0; l < engine.layers.size(); ++l) {
    const EngineLayer& layer = engine.layers[l];
    table << "\n    " << std::left << std::setw(5) << l << std::setw(int(width)) << layer.name.substr(0, width - 1)
          << std::setw(20) << layer.op << std::setw(34) << layer.tactic << std::setw(6)
          << profile_precision(engine, layer) << std::right << std::setw(6) << layer.plan.dispatches.size()
          << std::fixed << std::setprecision(4) << std::setw(12) << med[l] / 1e6 << std::setprecision(1) << std::setw(8)
          << (total > 0 ? 100 * med[l] / total : 0);
  }
  table << "\n    total " << std::fixed << std::setprecision(4) << total / 1e6 << " ms | " << dispatches
        << " dispatches, " << std::setprecision(1) << (dispatches ? total / 1e3 / double(dispatches) : 0.0)
        << " us of device time per dispatch";
  VKG_INFO(table.str());
}

// The latency lines that close a Vulkan run, and its PASSED line. `device_timed`: the device
// reports timestamps, so device time and host overhead are known too.
void log_vulkan_latency(const TimedIterations& timed, bool device_timed, size_t iterations, const std::string& name) {
  if (device_timed) {
    VKG_INFO(name << " | Latency (device time, " << iterations << " iteration(s)): " << latency_text(timed.device_ms));
    std::vector<double> overhead_ms;
    for (size_t i = 0; i < timed.wall_ms.size(); ++i)
      overhead_ms.push_back(std::max(0.0, timed.wall_ms[i] - timed.device_ms[i]));
    VKG_INFO(name << " | Host overhead (host wall time minus device time: input/output conversion and transfer, "
                     "submission, wait): "
                  << latency_text(overhead_ms));
  }
  VKG_INFO(name << " | Latency (host wall time, " << iterations << " iteration(s)): " << latency_text(timed.wall_ms));
  double total = 0;
  for (double x : timed.wall_ms) total += x;
  VKG_FINISH("PASSED | Runner: " << name << " | Completed " << iterations << " iteration(s) in " << total
                                 << " ms | Average inference time: " << total / double(iterations) << " ms");
}

std::vector<IterationResult> run_vulkan(RunArgs& args, const Graph* graph, const Engine* loaded,
                                        const std::vector<TensorMap>& feeds, const std::string& name) {
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  BuildResult built;
  const Engine* engine = loaded;
  if (engine == nullptr) {
    built = build_for_run(args, *graph, *ctx);
    engine = &built.engine;
  } else {
    warn_if_built_elsewhere(*engine, *ctx);
  }
  const std::vector<std::string> outputs = vulkan_outputs(args, *engine, loaded != nullptr);

  vk::ExecutorOptions options;
  options.faulty_tactics = vk::faulty_tactics_from_env();
  options.faulty_layers = vk::faulty_layers_from_env();
  options.profile = args.profile;
  VKG_START("RUNNING | Runner: " << name);
  VKG_VERBOSE(name << " | memory path: " << vk::memory_path_name(ctx->device().info().memory_path()));
  vk::EngineExecutor executor(ctx->device(), *engine, options);
  VKG_VERBOSE(name << " | " << executor.recorded_dispatches() << " dispatches recorded with "
                   << executor.recorded_barriers() << " barriers"
                   << (args.profile ? " (one after each layer: --profile)" : " (only between dependent dispatches)"));
  warm_up(args, executor, feeds, name);
  TimedIterations timed = run_timed_iterations(executor, *engine, feeds, outputs, name);
  ctx->check_validation("the run");
  if (args.report.wanted()) {
    args.report.set_device(ctx->device().info());
    args.report.set_engine(*engine, (loaded ? "loaded from " : "built from ") + args.model.path,
                           loaded ? nullptr : &built.replay, timed.layer_ns);
  }
  for (const auto& [o, t] : timed.results.front().outputs)
    VKG_INFO(name << " | Output: '" << o << "' " << t.describe());
  if (args.profile && !timed.layer_ns.empty() && !timed.layer_ns[0].empty())
    log_profile_table(*engine, timed.layer_ns, executor.recorded_dispatches(), feeds.size(), name);
  log_vulkan_latency(timed, executor.last_device_ns() > 0, feeds.size(), name);
  return std::move(timed.results);
}

// --freeze-inputs: the model with those inputs replaced by the value the data gives them
// (the same in every iteration), for the Vulkan builder: conditions and trip counts that
// depend on them fold when the engine is built. `model` is the model as loaded, not yet
// imported. Returns the graph; `feeds` lose the frozen inputs.
Graph frozen_graph(const RunArgs& args, OnnxModel model, const ImportOptions& import, std::vector<TensorMap>& feeds) {
  const std::vector<std::string> names = runtime_input_names(model);
  std::map<std::string, Tensor> frozen;
  for (const std::string& name : args.freeze_inputs) {
    VKG_CHECK(std::find(names.begin(), names.end(), name) != names.end(),
              "--freeze-inputs names '" << name << "', which is not an input of the model");
    const Tensor& value = feeds.at(0).at(name);
    for (size_t i = 1; i < feeds.size(); ++i) {
      const Tensor& other = feeds[i].at(name);
      VKG_CHECK(other.dtype() == value.dtype() && other.shape() == value.shape() &&
                    std::memcmp(other.raw(), value.raw(), value.nbytes()) == 0,
                "--freeze-inputs: input '" << name << "' differs between iterations 0 and " << i
                                           << "; an engine is built for one value of it");
    }
    frozen[name] = value;
    std::string shown;
    for (int64_t i = 0; i < value.size() && i < 8; ++i) {
      std::ostringstream os;
      os << value.get_as_double(i);
      shown += (i ? ", " : "") + os.str();
    }
    VKG_INFO("input '" << name << "' is frozen for the Vulkan engine: " << value.describe() << " [" << shown
                       << (value.size() > 8 ? ", ..." : "") << "]");
  }
  freeze_inputs(model, frozen);
  ImportOptions options = import;
  for (const std::string& name : args.freeze_inputs) {
    options.input_shapes.erase(name);
    for (TensorMap& feed : feeds) feed.erase(name);
  }
  return import_onnx(model, options);
}

// --isolate-layers: builds the engine as `run --vk` does, then runs it one layer
// at a time against the reference (debug/layer_isolation.h) on the first feed.
// Returns the exit code: failed when a layer introduces error over tolerance.
int run_isolation(RunArgs& args, const Graph& graph, const std::vector<TensorMap>& feeds) {
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  const BuildResult built = build_for_run(args, graph, *ctx);
  const Engine& engine = built.engine;
  if (feeds.size() > 1) VKG_WARNING("--isolate-layers uses the first of " << feeds.size() << " iterations");
  vk::ExecutorOptions options;
  options.faulty_tactics = vk::faulty_tactics_from_env();
  options.faulty_layers = vk::faulty_layers_from_env();
  vk::EngineExecutor executor(ctx->device(), engine, options);
  VKG_START("RUNNING | Per-layer isolation: " << engine.layers.size() << " layer(s) against the reference backend");
  const CompareOptions compare = args.compare.options();
  const debug::IsolationResult result = debug::isolate_layers(graph, engine, executor, feeds.at(0), compare);
  ctx->check_validation("the isolation run");
  const ErrorStat stat = compare.error_stat_for("");
  VKG_INFO("Per-layer isolation (" << error_stat_name(stat) << " error"
                                   << "; introduced: the layer on the reference's inputs; inherited: the largest "
                                      "total error of its inputs; total: the layer in the chained run):\n"
                                   << debug::format_isolation_table(result));
  if (args.report.wanted()) {
    args.report.report().title = "vkgraphy run --isolate-layers " + args.model.path;
    args.report.set_device(ctx->device().info());
    args.report.set_engine(engine, "built from " + args.model.path, &built.replay);
    args.report.add_isolation(result, compare.atol_for(""), error_stat_name(stat));
    args.report.report().summary.emplace_back(
        "result",
        result.first_failed < 0 ? "PASSED" : "FAILED at layer " + result.layers[size_t(result.first_failed)].layer);
    args.report.write();
  }
  if (result.first_failed >= 0) {
    const debug::LayerIsolation& bad = result.layers[size_t(result.first_failed)];
    VKG_ERROR("FAILED | First layer over tolerance: '"
              << bad.layer << "' (layer " << result.first_failed << ", tactic " << bad.tactic << ", " << bad.precision
              << "): introduced error " << format_g5(bad.introduced) << " (rel " << format_g5(bad.introduced_rel)
              << ")");
    return kExitFailed;
  }
  VKG_FINISH("PASSED | Every layer's introduced error is within tolerance | Runtime: vkgraphy run " << args.model.path);
  return kExitSuccess;
}

// --isolate-layers: the options it cannot be combined with fail before any work.
void check_isolation_args(const RunArgs& args) {
  VKG_CHECK(args.vk && args.ref, "--isolate-layers compares the Vulkan engine with the reference: give --vk and --ref");
  VKG_CHECK(!looks_like_engine(args.model.path), "--isolate-layers needs the ONNX model (the reference runs it), but '"
                                                     << args.model.path << "' is a vkgraphy engine");
  VKG_CHECK(args.compare.save_outputs_path().empty() && args.compare.load_outputs_paths().empty(),
            "--isolate-layers keeps only per-layer statistics: it cannot be combined with --save-outputs or "
            "--load-outputs");
  VKG_CHECK(args.onnx_outputs.empty() && args.onnx_exclude_outputs.empty(),
            "--isolate-layers compares every layer's outputs with the reference's own: --onnx-outputs and "
            "--onnx-exclude-outputs cannot be combined with it");
  VKG_CHECK(!is_mark_all(args.vk_outputs),
            "--isolate-layers runs the engine as built; --vk-outputs mark all would split its fusions");
}

// The engine file `run` was given, once the options that cannot apply to one are checked.
Engine load_engine_to_run(RunArgs& args) {
  VKG_CHECK(!args.ref, "--ref needs an ONNX model, but '" << args.model.path << "' is a vkgraphy engine");
  VKG_CHECK(args.vk, "'" << args.model.path << "' is a vkgraphy engine: run it with --vk");
  const std::vector<std::string> ignored = args.builder.given();
  if (!ignored.empty()) {
    std::string list;
    for (const std::string& o : ignored) list += (list.empty() ? "" : ", ") + o;
    VKG_WARNING(list << ": builder options have no effect on an engine file, which runs as it was built (build "
                        "another with `vkgraphy convert MODEL.onnx ...`)");
  }
  return load_engine(args.model.path);
}

// The inputs of an engine, as the data loader sees a model's.
std::vector<ValueInfo> engine_input_infos(const Engine& engine) {
  std::vector<ValueInfo> input_infos;
  for (int32_t t : engine.inputs) {
    const EngineTensor& et = engine.tensors[size_t(t)];
    ValueInfo vi;
    vi.name = et.name;
    vi.dtype = et.dtype;
    std::vector<Dim> dims;
    for (int64_t d : et.shape) dims.push_back(Dim{d, ""});
    vi.shape = dims;
    input_infos.push_back(vi);
  }
  return input_infos;
}

// The feeds of every iteration, loaded or generated (and saved with --save-inputs).
std::vector<TensorMap> run_feeds(const RunArgs& args, const std::vector<ValueInfo>& input_infos,
                                 const InputShapes& shapes) {
  DataLoaderOptions data_opts = args.data.options();
  for (const auto& [name, shape] : shapes) data_opts.input_shapes[name] = shape;
  std::vector<TensorMap> feeds = load_or_generate_inputs(input_infos, data_opts);
  if (!args.data.save_inputs_path().empty()) {
    save_inputs(args.data.save_inputs_path(), feeds);
    VKG_INFO("Saving inference input data to " << args.data.save_inputs_path());
  }
  return feeds;
}

// The --vk runner: runs the engine file, or builds from `graph` (from the model with
// --freeze-inputs applied when given: `unimported` is then consumed).
std::vector<IterationResult> run_vulkan_runner(RunArgs& args, const Graph& graph, const std::optional<Engine>& engine,
                                               std::optional<OnnxModel>& unimported, const ImportOptions& import,
                                               const std::vector<TensorMap>& feeds, const std::string& name) {
  VKG_CHECK(args.freeze_inputs.empty() || !engine, "--freeze-inputs applies when an engine is built from a model");
  if (args.freeze_inputs.empty())
    return run_vulkan(args, engine ? nullptr : &graph, engine ? &*engine : nullptr, feeds, name);
  std::vector<TensorMap> vk_feeds = feeds;
  const Graph frozen = frozen_graph(args, std::move(*unimported), import, vk_feeds);
  return run_vulkan(args, &frozen, nullptr, vk_feeds, name);
}

// The tensors the --ref runner returns: under --vk-outputs mark layers (and no --onnx-outputs)
// the ones the engine marked, so the two runners pair up.
std::vector<std::string> reference_outputs(const RunArgs& args, const Graph& graph) {
  const bool pair_layers = args.onnx_outputs.empty() && !args.layer_outputs.empty();
  return requested_outputs(graph, pair_layers ? args.layer_outputs : args.onnx_outputs, args.onnx_exclude_outputs);
}

// --load-outputs: the golden runners join this run's, after it.
void add_golden_runs(RunResults& results, std::vector<std::pair<std::string, RunResults>>& golden,
                     size_t run_iterations) {
  for (auto& [path, loaded] : golden) {
    VKG_INFO("Loaded " << loaded.runs.size() << " runner result(s) from " << path);
    for (auto& [name, iterations] : loaded.runs)
      if (iterations.size() != run_iterations)
        VKG_WARNING("This run has " << run_iterations << " iteration(s) but runner '" << name << "' in " << path
                                    << " has " << iterations.size() << ": only the first "
                                    << std::min(iterations.size(), run_iterations) << " are compared");
    for (auto& r : loaded.runs) results.runs.push_back(std::move(r));
  }
}

// --validate and the comparison of consecutive runners (saved with --save-accuracy-results);
// returns whether all passed.
bool check_run_results(RunArgs& args, const RunResults& results) {
  bool ok = true;
  if (args.compare.validate()) {
    for (const auto& [name, iters] : results.runs)
      for (const IterationResult& it : iters)
        ok = validate_outputs(name, it.to_map(), args.compare.validate_options()) && ok;
  }
  if (results.runs.size() >= 2) {
    // Consecutive runners are compared, iteration by iteration, as Polygraphy does.
    std::vector<PairComparison> comparisons;
    ok = compare_accuracy(results, args.compare.options(), &comparisons) && ok;
    if (!args.save_accuracy_results.empty()) {
      save_accuracy_results(args.save_accuracy_results, accuracy_results_of(comparisons));
      VKG_INFO("Saving accuracy results to " << args.save_accuracy_results);
    }
    args.report.add_comparisons(comparisons);
  } else if (results.runs.empty()) {
    VKG_THROW("nothing to run: choose a backend (--vk, --ref) or give --load-outputs");
  }
  return ok;
}

// Writes the --report and logs the verdict; returns the exit code.
int finish_run(RunArgs& args, bool ok) {
  if (args.report.wanted()) {
    args.report.report().title = "vkgraphy run " + args.model.path;
    args.report.report().summary.emplace_back("result", ok ? "PASSED" : "FAILED");
    args.report.write();
  }
  if (ok) {
    VKG_FINISH("PASSED | Runtime: vkgraphy run " << args.model.path);
  } else {
    VKG_ERROR("FAILED | Runtime: vkgraphy run " << args.model.path);
  }
  return ok ? kExitSuccess : kExitFailed;
}

int run_tool(RunArgs& args) {
  // An engine file runs as it is; a model is imported (and built for --vk).
  std::optional<Engine> engine;
  Graph graph;
  std::vector<ValueInfo> input_infos;
  InputShapes shapes = args.model.shapes();
  ImportOptions import = args.vk ? args.model.builder_import_options() : args.model.import_options();
  std::optional<OnnxModel> unimported;  // for --freeze-inputs: import changes the model in place
  if (args.isolate_layers) check_isolation_args(args);
  // Inputs that can be checked before the long work: the golden files load now.
  std::vector<std::pair<std::string, RunResults>> golden;
  for (const std::string& path : args.compare.load_outputs_paths()) golden.emplace_back(path, load_run_results(path));
  if (args.profile && !args.vk)
    VKG_WARNING("--profile times the Vulkan engine's layers: without --vk it has no effect");
  if (looks_like_engine(args.model.path)) {
    engine = load_engine_to_run(args);
    input_infos = engine_input_infos(*engine);
  } else {
    OnnxModel model = load_onnx_model(args.model.path, import.load_external_data, import.external_data_dir);
    if (args.vk) fix_shapes_from_loaded_inputs(model, args.data.options(), import.input_shapes);
    shapes = import.input_shapes;
    if (args.vk && !args.freeze_inputs.empty()) unimported = copy_onnx_model(model);
    graph = import_onnx(model, import);
    VKG_VERBOSE("loaded " << args.model.path << ": " << graph.nodes.size() << " nodes");
    input_infos = graph.inputs;
  }
  const std::vector<TensorMap> feeds = run_feeds(args, input_infos, shapes);

  if (args.isolate_layers) {
    if (args.freeze_inputs.empty()) return run_isolation(args, graph, feeds);
    // The engine and the reference both see the frozen graph, as the engine was built from it.
    std::vector<TensorMap> vk_feeds = feeds;
    const Graph frozen = frozen_graph(args, std::move(*unimported), import, vk_feeds);
    return run_isolation(args, frozen, vk_feeds);
  }

  RunResults results;
  if (args.vk) {
    const std::string name = runner_name("vk", int(results.runs.size()));
    results.runs.emplace_back(name, run_vulkan_runner(args, graph, engine, unimported, import, feeds, name));
  }
  if (args.ref) {
    const std::string name = runner_name("ref", int(results.runs.size()));
    results.runs.emplace_back(name, run_reference(graph, feeds, reference_outputs(args, graph), name));
  }
  add_golden_runs(results, golden, feeds.size());
  if (!args.compare.save_outputs_path().empty()) {
    save_run_results(args.compare.save_outputs_path(), results);
    VKG_INFO("Saving inference results to " << args.compare.save_outputs_path());
  }
  return finish_run(args, check_run_results(args, results));
}

}  // namespace

void add_run_tool(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run", "Run a model (or an engine) on Vulkan and/or the CPU reference backend and compare results");
  run->fallthrough();
  args->model.add_to(*run);
  run->add_flag("--vk", args->vk, "Run on Vulkan: builds an engine from the model in memory, or runs an engine file");
  run->add_flag("--ref", args->ref, "Run on the CPU reference backend (the trusted oracle)");
  run->add_option("--vk-outputs", args->vk_outputs,
                  "Tensors the Vulkan engine returns: names, 'mark all' for every tensor (fusion is then "
                  "impossible), or 'mark layers' for the output of every layer as built (fusions kept; with --ref "
                  "and no --onnx-outputs the reference returns the same tensors)")
      ->take_all();
  run->add_flag("--isolate-layers", args->isolate_layers,
                "With --vk --ref: run every engine layer on the reference's values of its inputs and compare its "
                "outputs, separating the error each layer introduces from the error it inherits; the built plan "
                "is unchanged, only per-layer statistics are kept (docs/debug.md, Per-layer isolation)");
  run->add_option("--vk-exclude-outputs", args->vk_exclude_outputs, "Tensors the Vulkan runner does not return")
      ->take_all();
  run->add_flag("--profile", args->profile, "Report the device time of every engine layer");
  run->add_option("--warm-up", args->warm_up,
                  "Untimed Vulkan inferences on the first input before the timed iterations (a driver that compiles "
                  "shaders on their first dispatch, as lavapipe does for texel-buffer reads, pays it there)")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--warm-up-ms", args->warm_up_ms,
                  "Untimed Vulkan inferences on the first input until this many milliseconds have passed (as "
                  "trtexec's --warmUp; with --warm-up N, at least N of them): a GPU runs at a low clock until it has "
                  "been busy for a while, so a few inferences of a fast model time the clock, not the engine")
      ->check(CLI::Range(0.0, 3600000.0));
  run->add_option("--onnx-outputs", args->onnx_outputs,
                  "Tensors the reference backend returns: names, or 'mark all' for every tensor")
      ->take_all();
  run->add_option("--onnx-exclude-outputs", args->onnx_exclude_outputs,
                  "Tensors not to return (with --onnx-outputs mark all)")
      ->take_all();
  run->add_option("--freeze-inputs", args->freeze_inputs,
                  "Inputs that become build-time constants of the Vulkan engine, with the value the data gives "
                  "them (--load-inputs, or generated with --val-range; the same in every iteration): If conditions "
                  "that depend on them fold to the branch taken")
      ->take_all();
  args->data.add_to(*run);
  args->compare.add_to(*run);
  run->add_option("--save-accuracy-results", args->save_accuracy_results,
                  "Save each comparison's error statistics and tolerances (Polygraphy's accuracy results) to this "
                  "JSON file, for `check accuracy` with other tolerances");
  args->builder.add_to(*run);
  args->builder.use_data_loader(args->data);
  args->report.add_to(*run, "run");
  run->callback([args] { set_exit_code(run_tool(*args)); });
}

}  // namespace vkg::tools
