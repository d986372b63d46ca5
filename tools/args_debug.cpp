#include "tools/args_debug.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "debug/slurm_runner.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "tools/args_vulkan.h"

namespace vkg::tools {

namespace {
std::vector<std::string> g_check_command;
std::vector<std::string> g_own_command;

// This very binary, which side-by-side jobs run again; "" where /proc cannot say.
std::string own_binary() {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return ec ? "" : self;
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
}  // namespace

void set_own_command(int argc, char** argv) { g_own_command.assign(argv, argv + argc); }

const std::vector<std::string>& own_command() { return g_own_command; }

int split_check_command(int argc, char** argv) {
  bool in_debug = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "debug") == 0) in_debug = true;
    if (!in_debug || std::strcmp(argv[i], "--check") != 0) continue;
    // `--check -- CMD ...`: the "--" only separates.
    const int first = i + 1 < argc && std::strcmp(argv[i + 1], "--") == 0 ? i + 2 : i + 1;
    VKG_CHECK(first < argc, "--check needs a command after it (e.g. --check vkgraphy run vkgraphy_debug.engine --vk ...)");
    g_check_command.assign(argv + first, argv + argc);
    argv[i] = nullptr;
    return i;
  }
  return argc;
}

const std::vector<std::string>& check_command() { return g_check_command; }

void DebugArgs::add_to(CLI::App& app, const std::string& iter_artifact_default, bool with_until, Jobs jobs) {
  CLI::Option_group* check = app.add_option_group("Pass/Fail Reporting", "How each iteration is judged");
  // Never parsed by CLI11 (main() splits it off); listed for --help.
  check->add_flag("--check")->description("Command that checks each iteration (the rest of the command line, run without a "
                             "shell). Exit status 0 passes. Without it, vkgraphy asks after each iteration");
  check->add_option("--fail-code,--fail-returncode", check_.fail_codes,
                    "Exit codes of the check that count as failures (any other code passes)")
      ->expected(1, -1);
  check->add_option("--ignore-fail-code,--ignore-fail-returncode", check_.ignore_fail_codes,
                    "Exit codes of the check that count as passes")
      ->expected(1, -1)
      ->excludes("--fail-code");
  check->add_option("--fail-regex", check_.fail_regexes,
                    "Regular expressions over the check's stdout+stderr that mark a failure (repeatable; any match "
                    "fails; with --fail-code only those codes are searched)")
      ->expected(1, -1);
  auto* show = check->add_flag("--show-output", check_.show_output, "Show the check's output for passing iterations too");
  check->add_flag("--hide-fail-output", check_.hide_fail_output, "Do not show the check's output for failing iterations")
      ->excludes(show);
  check->add_option("--check-timeout", check_.timeout_s,
                    "Seconds a check may run; a check that runs longer is killed and the iteration fails")
      ->check(CLI::PositiveNumber);

  CLI::Option_group* sort = app.add_option_group("Artifact Sorting", "Sorting artifacts into good and bad folders");
  sort->add_option("--artifacts", artifacts_,
                   "Files written each iteration (e.g. a --save-tactics replay) to move into <art-dir>/good or "
                   "<art-dir>/bad, named with the iteration number and a UTC timestamp")
      ->expected(1, -1);
  sort->add_option("--art-dir,--artifacts-dir", art_dir_, "Folder the artifacts are sorted into")->capture_default_str();

  CLI::Option_group* iter = app.add_option_group("Iterative Debugging", "The iteration loop");
  with_iter_artifact_ = !iter_artifact_default.empty();
  if (with_iter_artifact_) {
    iter_artifact_ = iter_artifact_default;
    iter->add_option("--iter-artifact,--intermediate-artifact", iter_artifact_,
                     "Where each iteration writes what the check examines")
        ->capture_default_str();
    iter->add_flag("--no-remove-intermediate", no_remove_intermediate_,
                   "Keep the intermediate artifact after each iteration (the next one still replaces it)");
  }
  iter->add_option("--iter-info,--iteration-info", iter_info_,
                   "Write a JSON file with the iteration number (and what the iteration tries) before each check");
  if (with_until) {
    iter->add_option("--until", until_, "When to stop: 'good' (first passing iteration), 'bad' (first failing one) or "
                                        "a number of iterations")
        ->required()
        ->check([](const std::string& s) {
          try {
            debug::parse_until(s);
            return std::string();
          } catch (const Error& e) {
            return std::string(e.what());
          }
        });
  }
  if (jobs == Jobs::Yes) add_jobs_to(*iter);
  iter->add_option("--save-debug-replay", save_replay_,
                   "Write the result of every iteration here (and, before each check, a '_skip_current' copy with "
                   "that iteration failed, to resume past a crash)")
      ->capture_default_str();
  iter->add_option("--load-debug-replay", load_replay_,
                   "Take the results of the iterations it holds from this debug replay instead of checking them");
}

void DebugArgs::add_jobs_to(CLI::Option_group& iter) {
  iter.add_option("--jobs", jobs_,
                  "Iterations side by side, each with its own copies of the iteration artifact and --artifacts "
                  "(recorded in order, as one at a time records them; docs/debug.md); with --executor slurm, the "
                  "Slurm tasks that run at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  iter.add_option("--devices", devices_,
                  "Devices of the --jobs, in turn (indices or name substrings as --device takes; a GPU takes one "
                  "job, a CPU driver several with its cores divided). Default: the device --device picks")
      ->expected(1, -1);
  iter.add_option("--executor", executor_,
                  "Where --jobs run: 'local' (this machine's devices) or 'slurm' (one Slurm array task per "
                  "iteration, its GPU from Slurm's allocation; docs/debug.md, \"On a Slurm cluster\")")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  iter.add_option("--slurm-gpus-per-task", slurm_.gpus_per_task,
                  "GPUs each Slurm task asks for (sbatch --gres=gpu:N; 0: none, as on a CPU-only partition)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  iter.add_option("--slurm-arg", slurm_.sbatch_args,
                  "An argument for sbatch as it is (repeatable), e.g. --slurm-arg=--partition=gpu "
                  "--slurm-arg=--time=00:20:00")
      ->allow_extra_args(false)
      ->take_all();
  iter.add_option("--slurm-retries", slurm_.retries,
                  "How often a Slurm task that ended without an outcome (node failure, cancelled, time limit) is "
                  "submitted again before its iteration fails")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  iter.add_option("--slurm-dir", slurm_.dir,
                  "Folder of the Slurm tasks' specs, outcomes and logs; every node must see it (as it must the "
                  "working folder and the vkgraphy binary)")
      ->capture_default_str();
}

debug::IterationOptions DebugArgs::options() const {
  debug::IterationOptions o;
  o.check = check_;
  o.check.command = check_command();
  o.artifacts = artifacts_;
  o.art_dir = art_dir_;
  o.iter_artifact = with_iter_artifact_ ? iter_artifact_ : "";
  o.remove_intermediate = !no_remove_intermediate_;
  o.iter_info = iter_info_;
  o.save_replay = save_replay_;
  o.load_replay = load_replay_;
  return o;
}

std::unique_ptr<debug::JobRunner> DebugArgs::runner(const debug::Until& until) const {
  if (executor_ == "local") {
    VKG_CHECK(devices_.empty() || vulkan_args().device.empty(),
              "give the devices of the jobs with --devices, not --device");
    return std::make_unique<debug::LocalRunner>(debug::place_jobs(jobs_, devices_, vulkan_device_options()));
  }
  VKG_CHECK(devices_.empty(), "--devices names this machine's devices; with --executor slurm each task's GPU comes "
                              "from Slurm's allocation (--slurm-gpus-per-task)");
  debug::SlurmOptions o = slurm_;
  o.concurrent = jobs_;
  // Iterations ahead: all of a counted loop, else a few per task (dropped when the loop stops).
  const int ahead = until.kind == debug::Until::Kind::Count ? until.count : 4 * jobs_;
  o.window = size_t(std::clamp(until.limit > 0 ? std::min(ahead, until.limit) : ahead, jobs_, 1000));
  o.program = own_binary();
  VKG_CHECK(!o.program.empty(), "cannot find the vkgraphy binary the Slurm tasks are to run (/proc/self/exe)");
  return std::make_unique<debug::SlurmRunner>(o);
}

int iterations_exit_code(int passed, int iterations, bool stopped) {
  if (stopped) return kExitInterrupted;
  if (passed == iterations) return kExitSuccess;
  return passed == 0 ? kExitDebugAllFailed : kExitDebugMixed;
}

// The iteration and path of the worker form's --make-iteration N:PATH.
std::pair<int, std::string> iteration_to_make(const std::string& text) {
  const size_t colon = text.find(':');
  VKG_CHECK(colon != std::string::npos && colon > 0 && colon < 9 && colon + 1 < text.size() &&
                text.find_first_not_of("0123456789") == colon,
            "--make-iteration takes N:PATH, not '" << text << "'");
  return {std::stoi(text.substr(0, colon)), text.substr(colon + 1)};
}

// The command a side-by-side job runs to make an iteration: this very command line in its worker form.
std::vector<std::string> worker_command(int index, const std::string& artifact,
                                        const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<std::string> argv = debug::renamed_args(own_command(), renames);
  if (const std::string self = own_binary(); !self.empty()) argv.at(0) = self;
  argv.push_back("--make-iteration");
  argv.push_back(std::to_string(index) + ":" + artifact);
  return argv;
}

// The option `flag` of `app` when the command line gave it, else nullptr.
const CLI::Option* given_option(const CLI::App& app, const char* flag) {
  const CLI::Option* o = app.get_option_no_throw(flag);
  return o && o->count() > 0 ? o : nullptr;
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

}  // namespace vkg::tools
