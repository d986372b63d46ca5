// Where the jobs of a side-by-side debug loop run (debug/side_by_side.h): on threads of the debug
// tool, one per place (a device, or a share of a CPU device's cores), or as the tasks of Slurm
// job arrays (debug/slurm_runner.h). The loop asks for jobs to start in iteration order, collects
// the finished ones in any order and records them in order; it never learns where they ran.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "debug/job_spec.h"
#include "runtime/vulkan/device_info.h"

namespace vkg::debug {

class JobRunner {
 public:
  struct Finished {
    size_t slot = 0;
    bool passed = false;
    double seconds = 0;
    std::exception_ptr error;  // Error: the iteration could not be made or checked; StopRequested: Ctrl-C
  };

  virtual ~JobRunner() = default;
  // How many jobs may be started before one has finished.
  virtual size_t slots() const = 0;
  // Where a job in `slot` runs, for the RUNNING line ("job 1 on llvmpipe ...").
  virtual std::string where(size_t slot) const = 0;
  // The environment the commands of a job in `slot` get (the job's device and threads).
  virtual std::vector<std::string> env(size_t slot) const = 0;
  // Starts the job in a free `slot` (a runner may hold it until flush()).
  virtual void start(size_t slot, const JobSpec& spec) = 0;
  // Starts what start() held (one Slurm array for the jobs of one round).
  virtual void flush() {}
  // The jobs that finished since the last call, waiting up to `up_to` for one.
  virtual std::vector<Finished> wait(std::chrono::milliseconds up_to) = 0;
  // Ends the jobs still running (or, for local ones, waits for them) and returns those that
  // finished; the others are not reported.
  virtual std::vector<Finished> stop() = 0;
};

// --jobs on this machine (docs/debug.md, "Iterations side by side").
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

// Runs each job on a thread of its own, one per place. A job's commands are killed on Ctrl-C
// (run_program), so stop() only waits.
class LocalRunner : public JobRunner {
 public:
  explicit LocalRunner(std::vector<JobPlace> places);
  ~LocalRunner() override;

  size_t slots() const override { return places_.size(); }
  std::string where(size_t slot) const override;
  std::vector<std::string> env(size_t slot) const override;
  void start(size_t slot, const JobSpec& spec) override;
  std::vector<Finished> wait(std::chrono::milliseconds up_to) override;
  std::vector<Finished> stop() override;

 private:
  std::vector<JobPlace> places_;
  std::vector<std::thread> threads_;  // per place, its current or last job
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Finished> finished_;
};

}  // namespace vkg::debug
