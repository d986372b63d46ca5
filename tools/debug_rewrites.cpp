// `vkgraphy debug rewrites`: finds the graph rewrite (fusion) of the builder that makes the engine
// wrong, by bisecting over the rewrites a build applied, kinds first (debug/rewrite_search.h does
// the search; this file its command line, its iterations and its answer). Exit codes: docs/debug.md.
#include <memory>
#include <optional>

#include "debug/reference_check.h"
#include "debug/rewrite_search.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/engine_file.h"
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

struct RewritesArgs {
  ModelArgs model;
  BuilderArgs builder;
  DataLoaderArgs data;     // the default check's inputs, --validate-tactics
  ComparatorArgs compare;  // the default check's tolerances
  DebugArgs debug;
  ReportArgs report;
};

// "--disable-rewrite a --disable-rewrite b:n"
std::string disable_flags(const std::vector<RewriteSwitch>& disabled) {
  std::string flags;
  for (const RewriteSwitch& s : disabled) flags += (flags.empty() ? "" : " ") + ("--disable-rewrite " + rewrite_switch_text(s));
  return flags;
}

// "a, b:n"
std::string switch_list(const std::vector<RewriteSwitch>& switches) {
  std::string list;
  for (const RewriteSwitch& s : switches) list += (list.empty() ? "" : ", ") + rewrite_switch_text(s);
  return list;
}

// What one iteration of the search builds, for its log line and the debug replay.
std::string rewrites_description(const std::vector<RewriteSwitch>& disabled, bool all_off) {
  if (all_off) return "every rewrite off (--no-fusion)";
  return disabled.empty() ? "every rewrite on" : "rewrites off: " + switch_list(disabled);
}

// Logs the answer of the search; returns the exit code.
int report_rewrite_search(const debug::RewriteSearchResult& result, const std::vector<std::string>& failed_outputs,
                          bool builtin_check, int builds) {
  using Outcome = debug::RewriteSearchResult::Outcome;
  const std::string used = " (" + std::to_string(builds) + " build(s))";
  switch (result.outcome) {
    case Outcome::NoFailure:
      VKG_ERROR((builtin_check ? "The engine agrees with the reference" : "The engine passes the check")
                << " with every rewrite on: nothing to find" << used);
      return kExitDebugNoFailure;
    case Outcome::NotRewrite:
      VKG_ERROR("The engine fails with every rewrite off (--no-fusion) too: the failure is not caused by a rewrite"
                << used << ". Look at the tactics (debug build, run --isolate-layers) or the precision (debug precision)");
      return kExitDebugNotFound;
    case Outcome::NotFound:
      VKG_ERROR("No set of rewrites explains the failure: the build with every rewrite off passes, but disabling "
                "them kind by kind did not (does the check give the same answer every time? try debug repeat)"
                << used);
      return kExitDebugNotFound;
    case Outcome::KindsOnly: {
      std::vector<RewriteSwitch> kinds;
      for (RewriteKind k : result.kinds) kinds.push_back({k, ""});
      VKG_FINISH("The failure follows the rewrite kind(s) " << switch_list(kinds)
                                                            << ", but no set of their instances does" << used
                                                            << ": build with `" << disable_flags(kinds) << "`");
      return kExitSuccess;
    }
    case Outcome::Found: break;
  }
  std::string outputs;
  for (const std::string& o : failed_outputs) outputs += (outputs.empty() ? "" : ", ") + ("'" + o + "'");
  const std::string differ =
      outputs.empty() ? " makes the engine fail the check"
                      : " makes output" + std::string(failed_outputs.size() > 1 ? "s " : " ") + outputs + " differ";
  std::vector<RewriteSwitch> flags;
  for (const AppliedRewrite& r : result.culprits) flags.push_back({r.kind, r.subject});
  if (result.culprits.size() == 1) {
    VKG_FINISH("Rewrite " << result.culprits[0].describe() << differ << ": build with `" << disable_flags(flags)
                          << "` to avoid it" << used);
  } else {
    VKG_FINISH("No single rewrite is to blame: these " << result.culprits.size()
                                                       << " rewrites together" << differ
                                                       << " (disabling all of them passes, leaving any one on fails):");
    for (const AppliedRewrite& r : result.culprits) VKG_FINISH("    " << r.describe());
    VKG_FINISH("Build with `" << disable_flags(flags) << "` to avoid them" << used);
  }
  return kExitSuccess;
}

int debug_rewrites(RewritesArgs& args) {
  VKG_CHECK(args.compare.save_outputs_path().empty() && args.compare.load_outputs_paths().empty() &&
                !args.compare.validate(),
            "debug rewrites compares each engine with the reference itself (without --check): --save-outputs, "
            "--load-outputs and --validate do not apply; give a --check command for other comparisons");
  debug::IterationOptions options = args.debug.options();
  const bool builtin_check = options.check.command.empty();
  std::unique_ptr<vk::Context> ctx;
  std::optional<debug::ReferenceCheck> reference;
  Engine engine;  // the iteration's, for the default check
  if (builtin_check) {
    options.builtin_check = [&] { return reference->check(*ctx, engine); };
    options.builtin_check_what = "running the engine and the reference backend on the same inputs and comparing them "
                                 "(--atol, --rtol, --check-error-stat)";
  }
  debug::IterationLoop loop("rewrites", options);  // first: a check that cannot run fails before any work
  const Graph graph = import_onnx(args.model.path, args.model.builder_import_options());
  ctx = open_vulkan();
  if (builtin_check) {
    args.data.set_input_shapes(args.model.shapes());
    reference.emplace(graph, load_or_generate_inputs(graph.inputs, args.data.options()), args.compare.options());
  }
  const BuilderConfig base = args.builder.config();
  VKG_CHECK(base.fusion, "debug rewrites looks for the rewrite to blame among those fusion applies: drop --no-fusion");
  std::vector<std::string> failed_outputs;  // of the build with every rewrite on
  const debug::RewriteTrialFn trial = [&](const std::vector<RewriteSwitch>& disabled, bool all_off) {
    BuilderConfig config = base;
    config.disabled_rewrites.insert(config.disabled_rewrites.end(), disabled.begin(), disabled.end());
    config.fusion = !all_off;
    const bool first = disabled.empty() && !all_off;
    debug::RewriteTrial t;
    bool built = false;
    t.passed = loop.run(rewrites_description(disabled, all_off), [&] {
      BuildResult r = args.builder.build_with(graph, *ctx, config);
      save_engine(loop.iter_artifact(), r.engine);
      t.applied = std::move(r.rewrites);
      engine = std::move(r.engine);
      built = true;
    });
    if (first && !built) t.applied = args.builder.build_with(graph, *ctx, config, false).rewrites;  // from the replay
    if (first && reference) failed_outputs = reference->failed_outputs();
    return t;
  };
  debug::RewriteSearchResult result;
  const bool finished = debug::run_interruptible([&] { result = debug::find_faulty_rewrites(trial); });
  loop.log_summary();
  if (args.report.wanted()) {
    args.report.report().title = "vkgraphy debug rewrites " + args.model.path;
    args.report.set_device(ctx->device().info());
    args.report.report().summary.emplace_back("rewrites applied with every rewrite on",
                                              std::to_string(result.applied.size()));
    std::string culprits;
    for (const AppliedRewrite& r : result.culprits) culprits += (culprits.empty() ? "" : "; ") + r.describe();
    if (!culprits.empty()) args.report.report().summary.emplace_back("rewrites to blame", culprits);
    args.report.set_iterations("debug rewrites iterations", loop.records());
    args.report.write();
  }
  if (!finished) return kExitInterrupted;
  VKG_INFO("The build with every rewrite on applied " << result.applied.size() << " rewrite(s)");
  return report_rewrite_search(result, failed_outputs, builtin_check, loop.iterations());
}

}  // namespace

void add_debug_rewrites(CLI::App& debug) {
  auto args = std::make_shared<RewritesArgs>();
  CLI::App* sub = debug.add_subcommand(
      "rewrites",
      "Find the graph rewrite (fusion) of the builder that makes the engine wrong: bisect over the "
      "rewrites applied, kinds first (docs/debug.md)");
  sub->fallthrough();
  args->model.add_to(*sub);
  args->builder.add_to(*sub);
  args->data.add_to(*sub);
  args->builder.use_data_loader(args->data);
  args->compare.add_to(*sub);
  args->debug.add_to(*sub, "vkgraphy_debug.engine", false);
  args->report.add_to(*sub, "debug rewrites");
  sub->callback([args] { set_exit_code(debug_rewrites(*args)); });
}

}  // namespace vkg::tools
