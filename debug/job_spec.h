// One iteration of a debug loop as a job that can run anywhere (debug/side_by_side.h): the
// command that makes its artifact, the --check that judges it, and where its outcome goes.
// A local job runs it on a thread of the debug tool; a Slurm array task runs it in
// `vkgraphy debug run-job SPEC` on whatever node Slurm gives it (debug/slurm_runner.h), reading
// the spec from, and writing the outcome to, a folder both machines see.
//
// Spec file (JSON, version 1): {"version", "index", "make": [argv], "artifact", "outcome",
// "check": {"command", "fail_codes", "ignore_fail_codes", "fail_regexes", "show_output",
// "hide_fail_output", "timeout_s", "env"}}. Outcome file (JSON, written whole or not at all):
// {"version", "index", "passed", "seconds", "error"} ("error": why the iteration could not be
// made or checked; absent when it was).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "debug/check_command.h"

namespace vkg::debug {

struct JobSpec {
  int index = 0;
  std::vector<std::string> make;  // empty: the iteration makes nothing (repeat)
  CheckOptions check;             // command and env already the job's own
  std::string artifact;           // the job's copy of the iteration artifact ("" for none)
  std::string outcome;            // where run-job writes the outcome ("" when run in process)
};

struct JobOutcome {
  bool passed = false;
  double seconds = 0;
  std::optional<std::string> error;  // the iteration could not be made or checked
};

// Makes the iteration (its make command must exit 0) and runs the check. Throws Error when the
// make command fails (with its output) or the check cannot start, StopRequested on Ctrl-C.
bool run_job(const JobSpec& spec);

void save_job_spec(const std::string& path, const JobSpec& spec);
// Throws Error naming the file and what is wrong.
JobSpec load_job_spec(const std::string& path);

void save_job_outcome(const std::string& path, int index, const JobOutcome& outcome);
// nullopt when the file does not exist yet; throws Error when it exists but is not an outcome of
// iteration `index`.
std::optional<JobOutcome> load_job_outcome(const std::string& path, int index);

// `vkgraphy debug run-job SPEC`: runs the job and writes its outcome (an Error becomes the
// outcome's error). Returns 0 when the outcome was written, 130 on Ctrl-C and 128 + the signal
// when a command of the job was ended from outside (no outcome: the iteration did not finish,
// and the Slurm runner submits it again). Outside a task, in a local job, such a signal is the
// check's failure, as in Polygraphy: there nothing else ends it.
int run_job_file(const std::string& spec_path);

}  // namespace vkg::debug
