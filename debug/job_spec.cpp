#include "debug/job_spec.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace {

using Json = nlohmann::ordered_json;
constexpr int kJobFileVersion = 1;

Json check_json(const CheckOptions& c) {
  return {{"command", c.command},
          {"fail_codes", c.fail_codes},
          {"ignore_fail_codes", c.ignore_fail_codes},
          {"fail_regexes", c.fail_regexes},
          {"show_output", c.show_output},
          {"hide_fail_output", c.hide_fail_output},
          {"timeout_s", c.timeout_s},
          {"env", c.env}};
}

CheckOptions check_from(const Json& j) {
  CheckOptions c;
  j.at("command").get_to(c.command);
  j.at("fail_codes").get_to(c.fail_codes);
  j.at("ignore_fail_codes").get_to(c.ignore_fail_codes);
  j.at("fail_regexes").get_to(c.fail_regexes);
  j.at("show_output").get_to(c.show_output);
  j.at("hide_fail_output").get_to(c.hide_fail_output);
  j.at("timeout_s").get_to(c.timeout_s);
  j.at("env").get_to(c.env);
  return c;
}

Json parse(const std::string& path, const std::string& what) {
  const std::string text = read_whole_file(path, what);
  try {
    Json j = Json::parse(text);
    VKG_CHECK(j.is_object() && j.value("version", 0) == kJobFileVersion,
              what << " '" << path << "' is not version " << kJobFileVersion << " of that file");
    return j;
  } catch (const Json::exception& e) {
    VKG_THROW(what << " '" << path << "' is not valid: " << e.what());
  }
}

// Where a Slurm task was given CPUs, lavapipe's threads are those (unless set): tasks that share
// a node do not each spread over all of its cores.
void add_slurm_threads(CheckOptions& check) {
  const char* cpus = std::getenv("SLURM_CPUS_PER_TASK");
  if (cpus == nullptr || std::getenv("LP_NUM_THREADS") != nullptr) return;
  for (const std::string& e : check.env)
    if (e.rfind("LP_NUM_THREADS=", 0) == 0) return;
  check.env.push_back(std::string("LP_NUM_THREADS=") + cpus);
}

// Each start of a Slurm task appends a line to "<outcome>.starts": a second line tells the
// debug tool that Slurm requeued the task (preemption) and it ran anew.
void note_start(const std::string& outcome) {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr) return;
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  std::ofstream starts(outcome + ".starts", std::ios::app);
  starts << job << " " << (restarts ? restarts : "0") << "\n";
}

// A command of a Slurm task ended by a signal that a scheduler or the system sends (SIGTERM,
// SIGKILL, SIGHUP: scancel, a time limit, preemption, the out-of-memory killer), or a shell's exit
// with 128 + such a signal (the code a shell gives when its command was so ended). Slurm signals
// every process of the task, the check first or its task first as it happens: whichever, the
// iteration has no outcome and runs again (a check's own crash is SIGSEGV or SIGABRT: a failure).
struct EndedFromOutside {
  int signal = 0;
  const char* what = "";
};

bool outside_signal(int signal) { return signal == SIGTERM || signal == SIGKILL || signal == SIGHUP; }

// The signal that ended `r` from outside, or 0.
int ended_from_outside(const CheckResult& r) {
  if (outside_signal(r.signal)) return r.signal;
  if (r.exit_code > 128 && outside_signal(r.exit_code - 128)) return r.exit_code - 128;
  return 0;
}

bool run_job_in(const JobSpec& spec, bool in_task) {
  if (!spec.make.empty()) {
    CheckOptions make;
    make.command = spec.make;
    make.env = spec.check.env;
    const CheckResult made = run_program(make);
    if (const int signal = ended_from_outside(made); in_task && signal != 0) throw EndedFromOutside{signal, "make"};
    VKG_CHECK(made.exit_code == 0, "iteration " << spec.index << " could not be made (exit code " << made.exit_code
                                                << " of " << spec.make.front() << "):\n"
                                                << made.output);
  }
  const CheckResult checked = CheckCommand(spec.check).run(spec.artifact);
  if (const int signal = ended_from_outside(checked); in_task && signal != 0) throw EndedFromOutside{signal, "check"};
  return checked.passed;
}

}  // namespace

bool run_job(const JobSpec& spec) { return run_job_in(spec, /*in_task=*/false); }

void save_job_spec(const std::string& path, const JobSpec& spec) {
  const Json j = {{"version", kJobFileVersion}, {"index", spec.index},     {"make", spec.make},
                  {"artifact", spec.artifact},  {"outcome", spec.outcome}, {"check", check_json(spec.check)}};
  write_file_atomically(path, j.dump(2) + "\n", "job spec");
}

JobSpec load_job_spec(const std::string& path) {
  const Json j = parse(path, "job spec");
  try {
    JobSpec spec;
    j.at("index").get_to(spec.index);
    j.at("make").get_to(spec.make);
    j.at("artifact").get_to(spec.artifact);
    j.at("outcome").get_to(spec.outcome);
    spec.check = check_from(j.at("check"));
    VKG_CHECK(!spec.check.command.empty(), "job spec '" << path << "' has no check command");
    VKG_CHECK(!spec.outcome.empty(), "job spec '" << path << "' names no outcome file");
    return spec;
  } catch (const Json::exception& e) {
    VKG_THROW("job spec '" << path << "' is not valid: " << e.what());
  }
}

void save_job_outcome(const std::string& path, int index, const JobOutcome& outcome) {
  Json j = {{"version", kJobFileVersion}, {"index", index}, {"passed", outcome.passed}, {"seconds", outcome.seconds}};
  if (outcome.error) j["error"] = *outcome.error;
  write_file_atomically(path, j.dump(2) + "\n", "job outcome");
}

std::optional<JobOutcome> load_job_outcome(const std::string& path, int index) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const Json j = parse(path, "job outcome");
  try {
    VKG_CHECK(j.at("index").get<int>() == index,
              "job outcome '" << path << "' is of iteration " << j.at("index") << ", not " << index);
    JobOutcome o;
    j.at("passed").get_to(o.passed);
    j.at("seconds").get_to(o.seconds);
    if (j.contains("error")) o.error = j.at("error").get<std::string>();
    return o;
  } catch (const Json::exception& e) {
    VKG_THROW("job outcome '" << path << "' is not valid: " << e.what());
  }
}

int run_job_file(const std::string& spec_path) {
  JobSpec spec = load_job_spec(spec_path);
  add_slurm_threads(spec.check);
  note_start(spec.outcome);
  const InterruptGuard guard;
  const auto start = std::chrono::steady_clock::now();
  JobOutcome outcome;
  try {
    outcome.passed = run_job_in(spec, /*in_task=*/true);
  } catch (const StopRequested&) {
    return 130;
  } catch (const EndedFromOutside& e) {
    VKG_WARNING("The " << e.what << " command was ended by signal " << e.signal
                       << " from outside the task (scancel, a time limit, preemption or the out-of-memory killer): "
                          "no outcome, so the iteration runs again");
    return 128 + e.signal;
  } catch (const Error& e) {
    outcome.error = e.what();
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  save_job_outcome(spec.outcome, spec.index, outcome);
  return 0;
}

}  // namespace vkg::debug
