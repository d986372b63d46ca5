// --executor slurm (docs/debug.md, "On a Slurm cluster"): the jobs of a side-by-side debug loop as
// the tasks of Slurm job arrays, one iteration per task, each task given its GPU by Slurm's own
// GPU allocation (--gres=gpu:N). A task runs `vkgraphy debug run-job SPEC` on its node; the spec,
// the outcome, the task's log and the iteration's files live in folders every node sees.
//
// What can go wrong on a cluster is survived: a task that ends without writing its outcome
// (node failure, scancel, time limit, out of memory) is submitted again, up to --slurm-retries
// times, and the run says so; a task Slurm itself requeues (preemption) is noticed when it starts
// again, and the run says so too. At most --jobs tasks run at once: one array at a time, throttled
// ("%N"), plus the single-task arrays of retries. Ctrl-C or a stop of the loop cancels what is
// still queued or running (scancel).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "debug/job_runner.h"

namespace vkg::debug {

struct SlurmOptions {
  int concurrent = 1;                    // --jobs: tasks running at once
  size_t window = 1;                     // iterations submitted ahead of the one recorded next
  int gpus_per_task = 1;                 // --slurm-gpus-per-task (0: ask for none)
  std::vector<std::string> sbatch_args;  // --slurm-arg, each passed to sbatch as it is
  int retries = 2;                       // --slurm-retries: submissions again of a task that ended without outcome
  std::string dir = "vkgraphy_slurm";    // --slurm-dir: specs, outcomes, task logs (every node must see it)
  std::string program;                   // the vkgraphy binary the tasks run (every node must see it)
  std::chrono::milliseconds poll{1000};  // how often squeue is asked
};

class SlurmRunner : public JobRunner {
 public:
  // Throws Error when sbatch, squeue or scancel cannot be found, or the folder cannot be made.
  explicit SlurmRunner(SlurmOptions options);
  ~SlurmRunner() override;  // cancels the tasks still queued or running
  SlurmRunner(const SlurmRunner&) = delete;
  SlurmRunner& operator=(const SlurmRunner&) = delete;

  size_t slots() const override { return options_.window; }
  std::string where(size_t slot) const override;
  std::vector<std::string> env(size_t) const override { return {}; }
  void start(size_t slot, const JobSpec& spec) override;
  void flush() override;
  std::vector<Finished> wait(std::chrono::milliseconds up_to) override;
  std::vector<Finished> stop() override;

 private:
  struct Task {
    size_t slot = 0;
    JobSpec spec;
    std::string job;  // "ARRAYJOBID_TASKID" once submitted
    std::string log;  // its Slurm output file
    int submissions = 0;
    size_t starts_before = 0;  // starts of its earlier submissions
    size_t starts_seen = 0;    // starts of this submission seen so far
  };

  std::string spec_path(int index) const;
  // One array of the tasks of `indices`; `retry`: tasks submitted again, which run beside the
  // current array instead of becoming it.
  void submit(const std::vector<int>& indices, bool retry);
  bool array_running() const;
  // Outcomes written since the last look, as finished jobs (their tasks forgotten).
  std::vector<Finished> collect_outcomes();
  // Tasks squeue no longer lists and that wrote no outcome: submitted again, or failed.
  std::vector<Finished> retry_lost(const std::map<std::string, std::string>& queued);
  void note_restarts(Task& task, int index);
  void wait_until_gone(const std::vector<std::string>& jobs) const;

  SlurmOptions options_;
  std::map<int, Task> tasks_;  // by iteration, submitted or held, not yet finished
  std::vector<int> held_;      // started, not yet submitted (waiting for the last array to finish)
  std::string array_;          // the array job of the last submission that was not a retry
  std::chrono::steady_clock::time_point last_poll_{};
};

// squeue's lines "JOBID_TASK STATE" as a map (pending array tasks one per line: squeue -r).
std::map<std::string, std::string> parse_squeue(const std::string& text);
// "3-5,8": the indices (sorted) as the ranges of sbatch's --array.
std::string array_ranges(const std::vector<int>& indices);

}  // namespace vkg::debug
