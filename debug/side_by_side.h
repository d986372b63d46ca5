// --jobs, --devices and --executor of `debug build`, `debug repeat` and `debug precision --mode
// linear` (docs/debug.md, "Iterations side by
// side"): several iterations at once, each in a job on its own place (a device, and on a CPU device
// shared by several jobs its share of the cores), recorded in iteration order exactly as a serial
// run records them (the same RUNNING/PASSED/FAILED results, sorted artifacts, debug replay).
//
// A job makes its iteration with a command of its own (for `debug build` the same command line
// in its worker form: it builds iteration N and exits) and runs the --check. Each iteration has
// its own copies of the iteration artifact, --iter-info and --artifacts, "<stem>.iter<N><ext>": the
// arguments of the check and of the make command that name them are rewritten, and the copies
// are sorted under the original names. Where the jobs run is the JobRunner's business
// (debug/job_runner.h: on this machine's devices, or as Slurm array tasks).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "debug/iteration_loop.h"
#include "debug/job_runner.h"

namespace vkg::debug {

// Iteration N's copy of `path`: "<stem>.iter<N><ext>" in the same folder ("" stays "").
std::string iteration_copy(const std::string& path, int iteration);

// `args` with every argument that names one of `renames`' first paths (alone, or after '=' in
// "--option=path") naming the second instead.
std::vector<std::string> renamed_args(const std::vector<std::string>& args,
                                      const std::vector<std::pair<std::string, std::string>>& renames);

// The command that makes iteration `index` and writes its artifact to `artifact`, its other
// arguments already renamed for the job by `renames` (the tool calls renamed_args); empty when an
// iteration makes nothing (repeat).
using MakeCommand = std::function<std::vector<std::string>(
    int index, const std::string& artifact, const std::vector<std::pair<std::string, std::string>>& renames)>;

// What the tool running side by side gives the loop.
struct SideBySideTool {
  std::function<std::string(int)> describe;  // what iteration N tries (the debug replay's key)
  MakeCommand make;
  std::vector<std::string> own_args;  // the tool's command line, which may name --artifacts it writes
  // Called as each iteration (not one the replay answered) is recorded, in order, before its
  // copy of the iteration artifact is removed (--report reads it).
  std::function<void(int index, const std::string& artifact)> on_recorded;
};

// Runs iterations, as many at a time as the runner has slots, until `until` says stop,
// recording each through `loop` in order; iterations the loaded replay answers are recorded
// without running. With --until good or bad, iterations started after the one that stops the
// loop are ended and dropped, their files removed. Throws Error when the options cannot run side
// by side (no --check command, an --artifacts path neither the check nor the tool names), and
// what a job threw (a failed make command: Error with its output; Ctrl-C: StopRequested), once
// the running jobs ended and the finished iterations before it are recorded.
void run_side_by_side(IterationLoop& loop, const Until& until, JobRunner& runner, const SideBySideTool& tool);

}  // namespace vkg::debug
