// --jobs and --devices of `debug build` and `debug repeat` (docs/debug.md, "Iterations side by
// side"): several iterations at once, each in a job on its own place (a device, and on a CPU device
// shared by several jobs its share of the cores), recorded in iteration order exactly as a serial
// run records them (the same RUNNING/PASSED/FAILED results, sorted artifacts, debug replay).
//
// A job makes its iteration with a command of its own (for `debug build` the same command line
// in its worker form: it builds iteration N and exits) and runs the --check. Each iteration has
// its own copies of the iteration artifact, --iter-info and --artifacts, "<stem>.iter<N><ext>": the
// arguments of the check and of the make command that name them are rewritten, and the copies
// are sorted under the original names. The place reaches every command through the
// environment: VKGRAPHY_DEVICE (the --device default) and LP_NUM_THREADS (lavapipe's threads).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "debug/iteration_loop.h"
#include "runtime/vulkan/device_info.h"

namespace vkg::debug {

struct JobPlace {
  std::string device;    // the device's index in `inspect device` ("" for the default device)
  std::string name;      // for the log
  unsigned threads = 0;  // LP_NUM_THREADS for its commands (0: left as it is)
};

// Places `jobs` jobs on `devices` in turn (selectors as --device takes them: indices or name
// substrings; none: the device --device or the default picks). Throws Error for a selector that
// names no device, and for two jobs on one GPU (two timing builds there time each other); a CPU
// device takes several, its cores divided between them.
std::vector<JobPlace> place_jobs(int jobs, const std::vector<std::string>& devices, const vk::DeviceOptions& options);

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

// Runs iterations, one per place at a time, until `until` says stop, recording each through
// `loop` in order; iterations the loaded replay answers are recorded without running. With
// --until good or bad, iterations started after the one that stops the loop are dropped, their
// files removed. `own_args`: the tool's command line, which may name --artifacts it writes.
// Throws Error when the options cannot run side by side (no --check command, an --artifacts path
// neither the check nor the tool names), and what a job threw (a failed make command: Error
// with its output; Ctrl-C: StopRequested), once the running jobs ended and the finished
// iterations before it are recorded.
void run_side_by_side(IterationLoop& loop, const Until& until, const std::vector<JobPlace>& places,
                      const std::function<std::string(int)>& describe, const MakeCommand& make,
                      const std::vector<std::string>& own_args);

}  // namespace vkg::debug
