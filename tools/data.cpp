// `vkgraphy data`: Polygraphy's data tools over its input and output files.
//   data concat PATHS... -o OUT   the iterations of several files of one kind in one file
//   data merge PATHS... -o OUT    inputs and outputs in one inputs file for --load-inputs
#include <memory>

#include "runtime/core/logger.h"
#include "runtime/data/data_tools.h"
#include "tools/tools.h"

namespace vkg::tools {
namespace {

struct DataArgs {
  std::vector<std::string> paths;
  std::string output;
};

std::vector<NamedDataFile> load_all(const std::vector<std::string>& paths) {
  std::vector<NamedDataFile> files;
  for (const std::string& path : paths) files.push_back({path, load_data_file(path)});
  return files;
}

void run_concat(const DataArgs& args) {
  const DataFile joined = concat_data(load_all(args.paths));
  if (joined.holds_outputs) {
    save_run_results(args.output, joined.outputs);
    size_t iterations = 0;
    for (const auto& [runner, its] : joined.outputs.runs) iterations += its.size();
    VKG_INFO("Saved an output file of " << joined.outputs.runs.size() << " runner(s), " << iterations
                                        << " iteration(s) in all, to " << args.output);
  } else {
    save_inputs(args.output, joined.inputs);
    VKG_INFO("Saved an input file of " << joined.inputs.size() << " iteration(s) to " << args.output);
  }
}

void run_merge(const DataArgs& args) {
  const std::vector<TensorMap> merged = merge_data(load_all(args.paths));
  save_inputs(args.output, merged);
  VKG_INFO("Saved an input file of " << merged.size() << " iteration(s) to " << args.output);
}

CLI::App* add_data_subcommand(CLI::App& data, const char* name, const char* about, const char* paths_help,
                              void (*run)(const DataArgs&)) {
  auto args = std::make_shared<DataArgs>();
  CLI::App* cmd = data.add_subcommand(name, about);
  cmd->fallthrough();
  cmd->add_option("paths", args->paths, paths_help)->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->output, "Path of the file to write")->required();
  cmd->callback([args, run] { run(*args); });
  return cmd;
}

}  // namespace

void add_data_tool(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Combine input and output data files (Polygraphy's data tools)");
  data->require_subcommand(1);
  data->fallthrough();
  add_data_subcommand(*data, "concat", "Concatenate the iterations of one or more input or output files into one file",
                      "Input or output files from vkgraphy or Polygraphy, all of one kind", run_concat);
  add_data_subcommand(*data, "merge",
                      "Combine input and output files into one input file usable with --load-inputs "
                      "(iteration i of each file into iteration i)",
                      "Input or output files from vkgraphy or Polygraphy; an output file should hold one "
                      "runner, or a later runner's tensors replace an earlier one's",
                      run_merge);
}

}  // namespace vkg::tools
