// `vkgraphy run`: runs a model on one or more backends, with generated or loaded
// inputs, and compares the results (Polygraphy's `run`).
#include <chrono>
#include <ctime>
#include <set>

#include "runtime/core/logger.h"
#include "runtime/data/comparator.h"
#include "runtime/data/data_loader.h"
#include "runtime/data/run_results.h"
#include "runtime/reference/reference_backend.h"
#include "tools/args_comparator.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct RunArgs {
  ModelArgs model;
  DataLoaderArgs data;
  ComparatorArgs compare;
  bool ref = false;
  std::vector<std::string> onnx_outputs;          // names, or "mark all"
  std::vector<std::string> onnx_exclude_outputs;
};

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
  const bool mark_all = marked.size() == 2 && marked[0] == "mark" && marked[1] == "all";
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
  VKG_FINISH("PASSED | Runner: " << name << " | Completed " << feeds.size() << " iteration(s) in "
                                 << total * 1e3 << " ms | Average inference time: "
                                 << total * 1e3 / double(feeds.size()) << " ms");
  return results;
}

int run_tool(RunArgs& args) {
  Graph graph = import_onnx(args.model.path, args.model.import_options());
  VKG_VERBOSE("loaded " << args.model.path << ": " << graph.nodes.size() << " nodes");

  DataLoaderOptions data_opts = args.data.options();
  for (const auto& [name, shape] : args.model.shapes()) data_opts.input_shapes[name] = shape;
  const std::vector<TensorMap> feeds = load_or_generate_inputs(graph.inputs, data_opts);
  if (!args.data.save_inputs_path().empty()) {
    save_inputs(args.data.save_inputs_path(), feeds);
    VKG_INFO("Saving inference input data to " << args.data.save_inputs_path());
  }

  RunResults results;
  if (args.ref) {
    const std::string name = runner_name("ref", int(results.runs.size()));
    const auto outputs = requested_outputs(graph, args.onnx_outputs, args.onnx_exclude_outputs);
    results.runs.emplace_back(name, run_reference(graph, feeds, outputs, name));
  }
  for (const std::string& path : args.compare.load_outputs_paths()) {
    RunResults loaded = load_run_results(path);
    VKG_INFO("Loaded " << loaded.runs.size() << " runner result(s) from " << path);
    for (auto& r : loaded.runs) results.runs.push_back(std::move(r));
  }
  if (!args.compare.save_outputs_path().empty()) {
    save_run_results(args.compare.save_outputs_path(), results);
    VKG_INFO("Saving inference results to " << args.compare.save_outputs_path());
  }

  bool ok = true;
  if (args.compare.validate()) {
    for (const auto& [name, iters] : results.runs)
      for (const IterationResult& it : iters) ok = validate_outputs(name, it.to_map(), args.compare.validate_options()) && ok;
  }
  if (results.runs.size() >= 2) {
    // Consecutive runners are compared, iteration by iteration, as Polygraphy does.
    ok = compare_accuracy(results, args.compare.options()) && ok;
  } else if (results.runs.empty()) {
    VKG_THROW("nothing to run: choose a backend (--ref) or give --load-outputs");
  }
  if (ok) {
    VKG_FINISH("PASSED | Runtime: vkgraphy run " << args.model.path);
  } else {
    VKG_ERROR("FAILED | Runtime: vkgraphy run " << args.model.path);
  }
  return ok ? kExitSuccess : kExitFailed;
}

}  // namespace

void add_run_tool(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run a model on the reference backend (and later Vulkan) and compare results");
  run->fallthrough();
  args->model.add_to(*run);
  run->add_flag("--ref", args->ref, "Run on the CPU reference backend (the trusted oracle)");
  run->add_option("--onnx-outputs", args->onnx_outputs,
                  "Tensors the reference backend returns: names, or 'mark all' for every tensor")
      ->take_all();
  run->add_option("--onnx-exclude-outputs", args->onnx_exclude_outputs,
                  "Tensors not to return (with --onnx-outputs mark all)")
      ->take_all();
  args->data.add_to(*run);
  args->compare.add_to(*run);
  run->callback([args] { set_exit_code(run_tool(*args)); });
}

}  // namespace vkg::tools
