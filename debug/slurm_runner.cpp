#include "debug/slurm_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

namespace {

// The states of a task that may still write its outcome: queued, running, suspended (preemption by
// suspension), requeued or held after a requeue. Finished ones (COMPLETED, FAILED, CANCELLED,
// TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED) stay listed until MinJobAge with `-t all`: asked
// for by name, a task that ended without an outcome is seen at once.
constexpr const char* kAliveStates =
    "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,RESIZING,SIGNALING,"
    "STAGE_OUT,STOPPED";

// Runs a Slurm client command; its output, or Error naming the command and what it said.
std::string slurm_command(const std::vector<std::string>& argv, bool may_fail = false, int* exit_code = nullptr) {
  CheckOptions run;
  run.command = argv;
  run.timeout_s = 60;
  run.survives_interrupt = true;  // a Ctrl-C cancels the tasks with scancel, which must then run
  const CheckResult r = run_program(run);
  if (exit_code) *exit_code = r.exit_code;
  VKG_CHECK(may_fail || r.exit_code == 0, argv.front() << " failed (exit code " << r.exit_code << "): " << r.output);
  return r.output;
}

std::string tail_of(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  return size_t(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace

std::map<std::string, std::string> parse_squeue(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string id, state;
    if (words >> id >> state) out[id] = state;
  }
  return out;
}

std::string array_ranges(const std::vector<int>& indices) {
  std::vector<int> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return out;
}

SlurmRunner::SlurmRunner(SlurmOptions options) : options_(std::move(options)) {
  for (const char* program : {"sbatch", "squeue", "scancel"})
    VKG_CHECK(!find_program(program).empty(), "--executor slurm needs Slurm's client commands, and '"
                                                  << program << "' is not on PATH (run on a Slurm login node)");
  VKG_CHECK(options_.window >= 1 && options_.concurrent >= 1, "--executor slurm needs --jobs of 1 or more");
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  VKG_CHECK(!ec, "cannot make the Slurm folder '" << options_.dir << "': " << ec.message());
  options_.dir = fs::absolute(options_.dir).string();
  // The script every task runs: its iteration's spec, by its array index.
  write_file_atomically(options_.dir + "/run-job.sh",
                        "#!/bin/sh\nexec '" + options_.program + "' debug run-job '" + options_.dir +
                            "'/iter\"$SLURM_ARRAY_TASK_ID\".json\n",
                        "Slurm task script");
}

SlurmRunner::~SlurmRunner() {
  try {
    stop();
  } catch (const Error& e) {
    VKG_WARNING("Could not cancel the Slurm tasks still queued: " << e.what());
  } catch (const StopRequested&) {
  }
}

std::string SlurmRunner::where(size_t) const { return "Slurm array task"; }

std::string SlurmRunner::spec_path(int index) const {
  return options_.dir + "/iter" + std::to_string(index) + ".json";  // as run-job.sh names it
}

void SlurmRunner::start(size_t slot, const JobSpec& spec) {
  Task task;
  task.slot = slot;
  task.spec = spec;
  const std::string stem = options_.dir + "/iter" + std::to_string(spec.index);
  task.spec.outcome = stem + ".outcome.json";
  task.log = stem + ".log";
  std::error_code ec;
  for (const char* suffix : {".outcome.json", ".starts", ".log"}) fs::remove(stem + suffix, ec);
  save_job_spec(spec_path(spec.index), task.spec);
  tasks_[spec.index] = std::move(task);
  held_.push_back(spec.index);
}

bool SlurmRunner::array_running() const {
  return !array_.empty() && std::any_of(tasks_.begin(), tasks_.end(),
                                        [&](const auto& t) { return t.second.job.rfind(array_ + "_", 0) == 0; });
}

void SlurmRunner::flush() {
  if (held_.empty() || array_running()) return;  // one array at a time: at most --jobs tasks run
  submit(std::exchange(held_, {}), false);
}

void SlurmRunner::submit(const std::vector<int>& indices, bool retry) {
  std::vector<std::string> argv = {"sbatch",
                                   "--parsable",
                                   "--job-name=vkgraphy-debug",
                                   "--array=" + array_ranges(indices) + "%" + std::to_string(options_.concurrent),
                                   "--output=" + options_.dir + "/iter%a.log",
                                   "--open-mode=append",
                                   "--chdir=" + fs::current_path().string()};
  if (options_.gpus_per_task > 0) argv.push_back("--gres=gpu:" + std::to_string(options_.gpus_per_task));
  argv.insert(argv.end(), options_.sbatch_args.begin(), options_.sbatch_args.end());
  argv.push_back(options_.dir + "/run-job.sh");
  const std::string out = slurm_command(argv);
  // --parsable prints "JOBID" or "JOBID;CLUSTER" on a line of its own; warnings may come around it.
  std::string id;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::string first = line.substr(0, line.find(';'));
    if (!first.empty() && first.find_first_not_of("0123456789") == std::string::npos) id = first;
  }
  VKG_CHECK(!id.empty(), "sbatch answered '" << out << "', not a job id");
  for (int index : indices) {
    Task& task = tasks_.at(index);
    task.job = id + "_" + std::to_string(index);
    ++task.submissions;
    task.starts_before = lines_in(task.spec.outcome + ".starts");  // those of earlier submissions
  }
  if (!retry) array_ = id;
  VKG_INFO("Submitted iteration(s) " << array_ranges(indices) << " to Slurm as job array " << id << " (at most "
                                     << options_.concurrent << " at once; logs in " << options_.dir << ")");
}

void SlurmRunner::note_restarts(Task& task, int index) {
  const size_t starts = lines_in(task.spec.outcome + ".starts") - task.starts_before;
  if (starts > 1 && starts > task.starts_seen)
    VKG_WARNING("Iteration " << index << ": Slurm task " << task.job
                             << " started again (requeued by Slurm, as on preemption); its iteration runs anew");
  task.starts_seen = std::max(task.starts_seen, starts);
}

std::vector<JobRunner::Finished> SlurmRunner::collect_outcomes() {
  std::vector<Finished> done;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    Task& task = it->second;
    if (task.job.empty()) {
      ++it;
      continue;
    }
    note_restarts(task, it->first);
    const std::optional<JobOutcome> outcome = load_job_outcome(task.spec.outcome, it->first);
    if (!outcome) {
      ++it;
      continue;
    }
    Finished f;
    f.slot = task.slot;
    f.passed = outcome->passed;
    f.seconds = outcome->seconds;
    if (outcome->error)
      f.error = std::make_exception_ptr(Error(*outcome->error));
    else if (const std::string said = tail_of(task.log, 4000); !said.empty())
      VKG_INFO("Iteration " << it->first << " (Slurm task " << task.job << ") said:\n" << said);
    done.push_back(std::move(f));
    std::error_code ec;  // the task's log stays (iterN.log)
    for (const std::string& path : {task.spec.outcome, task.spec.outcome + ".starts", spec_path(it->first)})
      fs::remove(path, ec);
    it = tasks_.erase(it);
  }
  return done;
}

std::vector<JobRunner::Finished> SlurmRunner::retry_lost(const std::map<std::string, std::string>& queued) {
  std::vector<Finished> failed;
  std::vector<int> again, lost;
  for (auto& [index, task] : tasks_) {
    if (task.job.empty() || queued.count(task.job)) continue;
    if (load_job_outcome(task.spec.outcome, index)) continue;  // finished since the last look
    if (task.submissions > options_.retries) {
      Finished f;
      f.slot = task.slot;
      f.error = std::make_exception_ptr(Error("iteration " + std::to_string(index) +
                                              ": its Slurm task ended without an outcome " +
                                              std::to_string(task.submissions) + " time(s) (last " + task.job +
                                              "); its log " + task.log + " ends:\n" + tail_of(task.log, 2000)));
      failed.push_back(std::move(f));
      lost.push_back(index);
      continue;
    }
    VKG_WARNING("Iteration " << index << ": Slurm task " << task.job
                             << " ended without an outcome (failed, cancelled or its node lost); submitting it again ("
                             << task.submissions + 1 << " of " << options_.retries + 1 << " tries)");
    again.push_back(index);
  }
  for (int index : lost) tasks_.erase(index);
  if (!again.empty()) submit(again, true);
  return failed;
}

std::vector<JobRunner::Finished> SlurmRunner::wait(std::chrono::milliseconds up_to) {
  std::this_thread::sleep_for(std::min(up_to, options_.poll));
  std::vector<Finished> done = collect_outcomes();
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ >= options_.poll) {
    last_poll_ = now;
    std::set<std::string> arrays;
    for (const auto& [index, task] : tasks_)
      if (!task.job.empty()) arrays.insert(task.job.substr(0, task.job.find('_')));
    std::string ids;
    for (const std::string& a : arrays) ids += (ids.empty() ? "" : ",") + a;
    if (!ids.empty()) {
      int code = 0;
      const std::string out =
          slurm_command({"squeue", "-h", "-r", "-t", kAliveStates, "-o", "%i %T", "-j", ids}, true, &code);
      // squeue refuses a single job id that slurmctld no longer holds: then none is queued.
      if (code == 0 || out.find("Invalid job id") != std::string::npos) {
        std::vector<Finished> failed = retry_lost(code == 0 ? parse_squeue(out) : std::map<std::string, std::string>{});
        done.insert(done.end(), failed.begin(), failed.end());
      } else {
        VKG_WARNING("squeue failed (exit code " << code << "), asking again later: " << out);
      }
    }
  }
  flush();
  return done;
}

// Until squeue lists none of `jobs` alive (at most Slurm's default KillWait, 30 s): a cancelled task
// may still be starting or running its check, and the files it writes must not outlive the loop's
// removal of the iterations' copies.
void SlurmRunner::wait_until_gone(const std::vector<std::string>& jobs) const {
  std::string ids;
  for (const std::string& j : jobs) ids += (ids.empty() ? "" : ",") + j;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int code = 0;
    const std::string out =
        slurm_command({"squeue", "-h", "-r", "-t", kAliveStates, "-o", "%i", "-j", ids}, true, &code);
    if (code != 0 || out.find_first_not_of(" \n") == std::string::npos) return;  // none left (or none known)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  VKG_WARNING("Slurm task(s) " << ids << " still alive 30 s after scancel");
}

std::vector<JobRunner::Finished> SlurmRunner::stop() {
  held_.clear();
  std::vector<std::string> jobs;
  for (const auto& [index, task] : tasks_)
    if (!task.job.empty()) jobs.push_back(task.job);
  std::vector<Finished> done;
  if (!jobs.empty()) {
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), jobs.begin(), jobs.end());
    slurm_command(argv, true);
    VKG_INFO("Cancelled " << jobs.size() << " Slurm task(s) of iterations not needed or not finished");
    wait_until_gone(jobs);
    done = collect_outcomes();
  }
  tasks_.clear();
  return done;
}

}  // namespace vkg::debug
