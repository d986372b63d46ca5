#include "debug/side_by_side.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

std::string iteration_copy(const std::string& path, int iteration) {
  if (path.empty()) return path;
  const fs::path p(path);
  const std::string name = p.filename().string();
  const size_t dot = name.rfind('.');
  const std::string stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
  const std::string ext = dot == std::string::npos || dot == 0 ? "" : name.substr(dot);
  return (p.parent_path() / (stem + ".iter" + std::to_string(iteration) + ext)).string();
}

std::vector<std::string> renamed_args(const std::vector<std::string>& args,
                                      const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<std::string> out = args;
  for (std::string& arg : out)
    for (const auto& [from, to] : renames) {
      if (from.empty()) continue;
      if (arg == from) arg = to;
      const size_t eq = arg.find('=');
      if (eq != std::string::npos && arg.compare(eq + 1, std::string::npos, from) == 0)
        arg = arg.substr(0, eq + 1) + to;
    }
  return out;
}

namespace {

bool names_path(const std::vector<std::string>& args, const std::string& path) {
  return renamed_args(args, {{path, "\x01"}}) != args;
}

// The tool's own arguments but the values of --artifacts (which name the files, not write them).
std::vector<std::string> without_artifacts_option(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool in_artifacts = false;
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) == 0) in_artifacts = arg == "--artifacts";
    if (!in_artifacts && arg.rfind("--artifacts=", 0) != 0) out.push_back(arg);
  }
  return out;
}

void remove_file(const std::string& path) {
  std::error_code ec;
  if (!path.empty()) fs::remove_all(path, ec);
}

// One job's iteration: its files, and what came of it.
struct Job {
  int index = 0;
  size_t slot = 0;
  std::string description;
  std::string artifact, info;        // the job's copies ("" where the tool has none)
  std::vector<std::string> sources;  // its copies of --artifacts
  bool replayed = false;
  bool done = false;
  bool passed = false;
  double seconds = 0;
  std::exception_ptr error;
};

class SideBySide {
 public:
  SideBySide(IterationLoop& loop, const Until& until, JobRunner& runner, const SideBySideTool& tool)
      : loop_(loop),
        o_(loop.options()),
        until_(until),
        runner_(runner),
        tool_(tool),
        busy_(runner.slots(), nullptr),
        next_(loop.iterations()) {}

  void run() {
    for (;;) {
      if (interrupt_requested() && !stopping_) stop_jobs();
      start_jobs();
      collect(runner_.wait(std::chrono::milliseconds(200)));
      record_finished();
      loop_.save_skip_file(checking());
      if (running() == 0 && (stopping_ || !more_to_start()) && !recordable()) break;
    }
    for (auto& [index, job] : jobs_) drop(job);  // started after the iteration that stopped the loop
    loop_.save_skip_file({});
    if (error_) std::rethrow_exception(error_);
    if (interrupt_requested()) throw StopRequested{"interrupted"};
  }

 private:
  bool more_to_start() const {
    return (until_.kind != Until::Kind::Count || next_ < until_.count) && (until_.limit == 0 || next_ < until_.limit);
  }
  size_t running() const {
    return size_t(std::count_if(busy_.begin(), busy_.end(), [](const Job* j) { return j != nullptr; }));
  }
  bool recordable() const {
    auto it = jobs_.find(loop_.iterations());
    return !ended_ && it != jobs_.end() && it->second.done;
  }
  std::vector<std::pair<int, std::string>> checking() const {
    std::vector<std::pair<int, std::string>> out;
    for (const auto& [index, job] : jobs_)
      if (!job.replayed && !job.done) out.emplace_back(index, job.description);
    return out;
  }

  void start_jobs() {
    bool started = false;
    while (!stopping_ && more_to_start()) {
      auto free = std::find(busy_.begin(), busy_.end(), nullptr);
      if (free == busy_.end()) break;
      const int index = next_;
      Job& job = jobs_[next_++];
      job.index = index;
      job.description = tool_.describe(index);
      if (const std::optional<bool> answer = loop_.replayed(index, job.description)) {
        job.replayed = job.done = true;
        job.passed = *answer;
        continue;
      }
      job.slot = size_t(free - busy_.begin());
      *free = &job;
      runner_.start(job.slot, prepare(job));
      started = true;
    }
    if (started) runner_.flush();
  }

  // The job's files (nothing left from an earlier session), its RUNNING line and what it runs.
  JobSpec prepare(Job& job) {
    job.artifact = iteration_copy(o_.iter_artifact, job.index);
    job.info = iteration_copy(o_.iter_info, job.index);
    for (const std::string& a : o_.artifacts) job.sources.push_back(iteration_copy(a, job.index));
    for (const std::string& path : job.sources) remove_file(path);
    loop_.log_running(job.index, job.description + " | " + runner_.where(job.slot), until_.remaining_after(job.index));
    loop_.write_iter_info(job.index, job.description, job.info, job.artifact);
    const std::vector<std::pair<std::string, std::string>> renamed = renames(job);
    JobSpec spec;
    spec.index = job.index;
    spec.artifact = job.artifact;
    spec.make = tool_.make(job.index, job.artifact, renamed);
    spec.check = o_.check;
    spec.check.command = renamed_args(o_.check.command, renamed);
    spec.check.env = runner_.env(job.slot);
    return spec;
  }

  std::vector<std::pair<std::string, std::string>> renames(const Job& job) const {
    std::vector<std::pair<std::string, std::string>> r = {{o_.iter_artifact, job.artifact}, {o_.iter_info, job.info}};
    for (size_t i = 0; i < o_.artifacts.size(); ++i) r.emplace_back(o_.artifacts[i], job.sources[i]);
    return r;
  }

  void collect(const std::vector<JobRunner::Finished>& finished) {
    for (const JobRunner::Finished& f : finished) {
      Job* job = busy_.at(f.slot);
      if (job == nullptr) continue;
      job->done = true;
      job->passed = f.passed;
      job->seconds = f.seconds;
      job->error = f.error;
      busy_[f.slot] = nullptr;
    }
  }

  // Ctrl-C, or --until said stop, or a job failed: no job starts any more; the runner ends the
  // running ones (a local job's commands were killed by the Ctrl-C itself), and those that did
  // not finish are not recorded.
  void stop_jobs() {
    stopping_ = true;
    collect(runner_.stop());
    for (Job*& job : busy_) job = nullptr;
  }

  // Records the finished iterations that come next in order; stops the loop where `until` says.
  void record_finished() {
    for (auto it = jobs_.find(loop_.iterations()); it != jobs_.end() && it->second.done && !ended_;
         it = jobs_.find(loop_.iterations())) {
      Job job = std::move(it->second);
      jobs_.erase(it);
      if (job.error) {  // a make command that failed, or Ctrl-C: nothing after it is recorded
        error_ = job.error;
        ended_ = true;
        drop(job);
        break;
      }
      const bool passed = job.replayed ? loop_.record_replayed(job.description, job.passed)
                                       : loop_.record(job.description, job.passed, job.seconds, job.sources);
      if (tool_.on_recorded && !job.replayed) tool_.on_recorded(job.index, job.artifact);
      if (o_.remove_intermediate) remove_file(job.artifact);
      remove_file(job.info);
      if (until_.stop_after(passed, loop_.iterations())) ended_ = true;
    }
    if (ended_ && !stopping_) stop_jobs();
  }

  void drop(const Job& job) {
    remove_file(job.artifact);
    remove_file(job.info);
    for (const std::string& path : job.sources) remove_file(path);
  }

  IterationLoop& loop_;
  const IterationOptions& o_;
  const Until& until_;
  JobRunner& runner_;
  const SideBySideTool& tool_;
  std::vector<Job*> busy_;   // per slot, its running job
  std::map<int, Job> jobs_;  // started or answered, not yet recorded (std::map: references stay valid)
  int next_;
  bool stopping_ = false;  // start no more jobs
  bool ended_ = false;     // record no more iterations (--until said stop, or a job failed)
  std::exception_ptr error_;
};

}  // namespace

void run_side_by_side(IterationLoop& loop, const Until& until, JobRunner& runner, const SideBySideTool& tool) {
  const IterationOptions& o = loop.options();
  VKG_CHECK(!o.check.command.empty(),
            "--jobs needs a --check command: an interactive check (or a tool's own) "
            "answers one iteration at a time");
  for (const std::string& a : o.artifacts)
    VKG_CHECK(names_path(o.check.command, a) || names_path(without_artifacts_option(tool.own_args), a),
              "--artifacts '" << a
                              << "' is named neither by the --check command nor by this tool's options: "
                                 "side-by-side jobs could not each write their own copy of it (use --jobs 1)");
  SideBySide(loop, until, runner, tool).run();
}

}  // namespace vkg::debug
