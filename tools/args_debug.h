// Argument groups of the debug tools (Polygraphy's CheckCmdArgs,
// ArtifactSortArgs and IterativeDebugArgs): the check command and how its
// result is judged, artifact sorting, the intermediate artifact, iteration
// info, --until and the debug replay.
//
// `--check` takes the rest of the command line. CLI11 cannot express that,
// so main() splits it off before parsing (split_check_command) and the
// debug tools read it back with check_command().
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "debug/iteration_loop.h"
#include "debug/side_by_side.h"
#include "debug/slurm_runner.h"

namespace vkg::tools {

// Removes "--check CMD ARGS..." from argv when it follows a "debug" tool name
// and keeps CMD ARGS... for check_command() ("--check -- CMD ARGS..." too: the
// "--" only separates). Returns the new argc. Throws Error when --check has no
// command after it.
int split_check_command(int argc, char** argv);
const std::vector<std::string>& check_command();
// The command line without its --check part (set by main(); argv[0] is the program), which a
// side-by-side job's make command repeats in its worker form.
void set_own_command(int argc, char** argv);
const std::vector<std::string>& own_command();

class DebugArgs {
 public:
  // `iter_artifact_default`: "" when the tool has no intermediate artifact (repeat).
  // `with_until`: the tool takes --until (build, repeat); `jobs`: it takes --jobs, --devices,
  // --executor and the Slurm options (build, repeat, precision).
  enum class Jobs { No, Yes };
  void add_to(CLI::App& app, const std::string& iter_artifact_default, bool with_until, Jobs jobs = Jobs::No);

  debug::IterationOptions options() const;
  debug::Until until() const { return debug::parse_until(until_); }
  int jobs() const { return jobs_; }
  // Whether iterations run as jobs (--jobs above 1, or --executor slurm).
  bool side_by_side() const { return jobs_ > 1 || executor_ != "local"; }
  // Where --jobs run (debug/job_runner.h): on the devices --devices names (or --device picks), or
  // with --executor slurm as Slurm array tasks, as many submitted ahead as `until` may use.
  std::unique_ptr<debug::JobRunner> runner(const debug::Until& until) const;

 private:
  bool with_iter_artifact_ = false;
  debug::CheckOptions check_;
  std::vector<std::string> artifacts_;
  std::string art_dir_ = "vkgraphy_artifacts";
  std::string iter_artifact_;
  bool no_remove_intermediate_ = false;
  std::string iter_info_;
  std::string until_;
  std::string save_replay_ = "vkgraphy_debug_replay.json";
  std::string load_replay_;
  void add_jobs_to(CLI::Option_group& iter);

  int jobs_ = 1;
  std::vector<std::string> devices_;
  std::string executor_ = "local";
  debug::SlurmOptions slurm_;
};

// The worker form of a side-by-side job of `debug build` and `debug precision --mode linear`: the
// same command line with --make-iteration N:PATH, which makes iteration N's artifact at PATH and
// exits. worker_command builds it (its arguments renamed for the job: debug/side_by_side.h);
// iteration_to_make reads N and PATH back (Error for another form).
std::vector<std::string> worker_command(int index, const std::string& artifact,
                                        const std::vector<std::pair<std::string, std::string>>& renames);
std::pair<int, std::string> iteration_to_make(const std::string& text);

// The option `flag` of `app` when the command line gave it, else nullptr.
const CLI::Option* given_option(const CLI::App& app, const char* flag);
// Warns when the --check command's data-loader options (--seed, --val-range, --load-inputs) differ
// from the tool's own: `tool` computes values from its own inputs (`consequence` says which), which
// then differ from what the check feeds.
void warn_data_loader_mismatch(const CLI::App& app, const std::string& tool, const std::string& consequence);

// The exit code of a tool that ran `passed` of `iterations` checks (build, repeat):
// 0 all passed, kExitDebugMixed, kExitDebugAllFailed; kExitInterrupted when stopped.
int iterations_exit_code(int passed, int iterations, bool stopped);

}  // namespace vkg::tools
