// `vkgraphy check`: Polygraphy's check tools.
//   check lint MODEL [-o REPORT.json]   the model's faults, node by node (debug/model_lint.h);
//                                       exits 1 when any finding is an exception
//   check accuracy RESULTS.json         a run's saved error statistics against other tolerances
//                                       (runtime/data/accuracy_results.h); exits 1 when one fails
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "debug/model_lint.h"
#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/data/accuracy_results.h"
#include "tools/args_comparator.h"
#include "tools/args_data_loader.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {
namespace {

struct LintArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string external_data_dir;
  DataLoaderArgs data;
  std::string output;
};

void run_lint(const LintArgs& args) {
  debug::LintOptions options;
  options.input_shapes = parse_input_shapes(args.input_shapes);
  options.data = args.data.options();
  options.external_data_dir = args.external_data_dir;
  VKG_START("RUNNING | Linting " << args.model);
  const debug::LintReport report = debug::lint_model_file(args.model, options);
  if (!args.output.empty()) {
    write_file_atomically(args.output, report.to_json().dump(4) + "\n", "lint report");
    VKG_INFO("Saved the lint report to " << args.output);
  }
  const bool valid = report.valid();
  VKG_FINISH((valid ? "PASSED" : "FAILED") << " | " << report.passing.size() << " node(s) passing, "
                                           << report.failing.size() << " failing, " << report.entries.size()
                                           << " finding(s)");
  if (!valid) set_exit_code(kExitFailed);
}

void add_lint(CLI::App& check) {
  auto args = std::make_shared<LintArgs>();
  CLI::App* cmd = check.add_subcommand(
      "lint", "Lint an ONNX model: the checker, each node run on the reference backend, names, unused nodes "
              "and inputs; a JSON report with -o");
  cmd->fallthrough();
  cmd->add_option("model", args->model, "Path to the ONNX model")->required();
  cmd->add_option("--input-shapes", args->input_shapes, "Input shapes, e.g. input0:[1,3,224,224]")->take_all();
  cmd->add_option("--external-data-dir,--ext", args->external_data_dir,
                  "Folder of the model's external data files (default: the model's folder)");
  args->data.add_to(*cmd);
  cmd->add_option("-o,--output", args->output, "Path of the JSON report");
  cmd->callback([args] { run_lint(*args); });
}

struct AccuracyArgs {
  std::string path;
  ComparatorArgs tolerances;  // --atol, --rtol, --check-error-stat
  bool check_average = false;
  std::string save;
};

void run_accuracy(const AccuracyArgs& args) {
  VKG_START("RUNNING | Checking the accuracy results in " << args.path);
  AccuracyResults results = load_accuracy_results(args.path);
  rethreshold(results, args.tolerances.options(), args.check_average);
  log_accuracy_summary(results);
  if (!args.save.empty()) {
    save_accuracy_results(args.save, results);
    VKG_INFO("Saved the accuracy results to " << args.save);
  }
  const bool passed = std::all_of(results.begin(), results.end(), [](const AccuracyResult& r) { return r.passed(); });
  if (passed) {
    VKG_FINISH("PASSED | Accuracy results passed the requested thresholds.");
  } else {
    VKG_ERROR("FAILED | Accuracy results did not pass the requested thresholds.");
    set_exit_code(kExitFailed);
  }
}

void add_accuracy(CLI::App& check) {
  auto args = std::make_shared<AccuracyArgs>();
  CLI::App* cmd = check.add_subcommand(
      "accuracy", "Check saved accuracy results (run --save-accuracy-results, or Polygraphy's) against other "
                  "tolerances, without running anything");
  cmd->fallthrough();
  cmd->add_option("path", args->path, "Accuracy results file")->required();
  // elemwise, the default statistic, needs every element, which the file does not hold: name another.
  args->tolerances.add_tolerances_to(*cmd);
  cmd->add_flag("--check-average", args->check_average,
                "Check each output's statistics averaged over the iterations instead of every iteration");
  cmd->add_option("--save-accuracy-results", args->save, "Save the results checked again to this JSON file");
  cmd->callback([args] { run_accuracy(*args); });
}

}  // namespace

void add_check_tool(CLI::App& app) {
  CLI::App* check = app.add_subcommand("check", "Check a model for faults (Polygraphy's check tools)");
  check->require_subcommand(1);
  check->fallthrough();
  add_lint(*check);
  add_accuracy(*check);
}

}  // namespace vkg::tools
