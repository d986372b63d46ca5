#include "debug/side_by_side.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

std::vector<JobPlace> place_jobs(int jobs, const std::vector<std::string>& devices, const vk::DeviceOptions& options) {
  VKG_CHECK(jobs >= 1, "--jobs must be at least 1, not " << jobs);
  const std::vector<vk::DeviceInfo> all = vk::list_devices(options);
  const std::vector<std::string> selectors = devices.empty() ? std::vector<std::string>{options.device} : devices;
  std::vector<size_t> chosen;
  std::map<size_t, unsigned> jobs_on;
  for (int k = 0; k < jobs; ++k) {
    chosen.push_back(vk::select_device(all, selectors[size_t(k) % selectors.size()]));
    ++jobs_on[chosen.back()];
  }
  std::vector<JobPlace> places;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (size_t index : chosen) {
    const vk::DeviceInfo& info = all[index];
    const bool cpu = info.type == DeviceType::Cpu;
    VKG_CHECK(cpu || jobs_on[index] == 1,
              jobs_on[index] << " jobs on GPU " << index << " (" << info.name
                             << "): two timing builds on one GPU time each other; give each job its own device "
                                "with --devices, or fewer --jobs");
    places.push_back({std::to_string(index), info.name, cpu && jobs_on[index] > 1 ? std::max(1u, cores / jobs_on[index]) : 0});
  }
  return places;
}

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
      if (eq != std::string::npos && arg.compare(eq + 1, std::string::npos, from) == 0) arg = arg.substr(0, eq + 1) + to;
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
  size_t place = 0;
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
  SideBySide(IterationLoop& loop, const Until& until, const std::vector<JobPlace>& places,
             const std::function<std::string(int)>& describe, const MakeCommand& make)
      : loop_(loop), o_(loop.options()), until_(until), places_(places), describe_(describe), make_(make),
        busy_(places.size(), false), threads_(places.size()), next_(loop.iterations()) {}

  void run() {
    std::unique_lock lock(m_);
    for (;;) {
      if (interrupt_requested()) stopping_ = true;
      start_jobs(lock);
      record_finished();
      loop_.save_skip_file(checking());
      if (running() == 0 && (stopping_ || !more_to_start()) && !recordable()) break;
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    lock.unlock();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
    for (auto& [index, job] : jobs_) drop(job);  // started after the iteration that stopped the loop
    loop_.save_skip_file({});
    if (error_) std::rethrow_exception(error_);
    if (interrupt_requested()) throw StopRequested{"interrupted"};
  }

 private:
  bool more_to_start() const {
    return until_.kind != Until::Kind::Count || next_ < until_.count;
  }
  size_t running() const {
    return size_t(std::count(busy_.begin(), busy_.end(), true));
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

  void start_jobs(std::unique_lock<std::mutex>& lock) {
    while (!stopping_ && more_to_start()) {
      auto free = std::find(busy_.begin(), busy_.end(), false);
      if (free == busy_.end()) return;
      const int index = next_;
      const std::string description = describe_(index);
      if (const std::optional<bool> answer = loop_.replayed(index, description)) {
        Job& job = jobs_[next_++];
        job.index = index;
        job.description = description;
        job.replayed = job.done = true;
        job.passed = *answer;
        continue;
      }
      const size_t place = size_t(free - busy_.begin());
      *free = true;
      Job& job = jobs_[next_++];
      job.index = index;
      job.place = place;
      job.description = description;
      job.artifact = iteration_copy(o_.iter_artifact, index);
      job.info = iteration_copy(o_.iter_info, index);
      for (const std::string& a : o_.artifacts) job.sources.push_back(iteration_copy(a, index));
      loop_.log_running(index, description + " | job " + std::to_string(place) + " on " + places_[place].name,
                        until_.remaining_after(index));
      lock.unlock();
      if (threads_[place].joinable()) threads_[place].join();  // the place's last job, finished
      threads_[place] = std::thread([this, &job] { work(job); });
      lock.lock();
    }
  }

  std::vector<std::pair<std::string, std::string>> renames(const Job& job) const {
    std::vector<std::pair<std::string, std::string>> r = {{o_.iter_artifact, job.artifact}, {o_.iter_info, job.info}};
    for (size_t i = 0; i < o_.artifacts.size(); ++i) r.emplace_back(o_.artifacts[i], job.sources[i]);
    return r;
  }

  std::vector<std::string> env(const Job& job) const {
    const JobPlace& place = places_[job.place];
    std::vector<std::string> e;
    if (!place.device.empty()) e.push_back("VKGRAPHY_DEVICE=" + place.device);
    if (place.threads > 0) e.push_back("LP_NUM_THREADS=" + std::to_string(place.threads));
    return e;
  }

  // On the job's thread: make the iteration, then check it.
  void work(Job& job) {
    const auto start = std::chrono::steady_clock::now();
    bool passed = false;
    std::exception_ptr error;
    try {
      for (const std::string& path : job.sources) remove_file(path);  // nothing left from an earlier session
      loop_.write_iter_info(job.index, job.description, job.info, job.artifact);
      const std::vector<std::string> make = make_(job.index, job.artifact, renames(job));
      if (!make.empty()) {
        CheckOptions run;
        run.command = make;
        run.env = env(job);
        const CheckResult made = run_program(run);
        VKG_CHECK(made.exit_code == 0, "iteration " << job.index << " could not be made (exit code " << made.exit_code
                                                    << " of " << make.front() << "):\n" << made.output);
      }
      CheckOptions check = o_.check;
      check.command = renamed_args(o_.check.command, renames(job));
      check.env = env(job);
      passed = CheckCommand(check).run(job.artifact).passed;
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard guard(m_);
    job.done = true;
    job.passed = passed;
    job.error = error;
    job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    busy_[job.place] = false;
    cv_.notify_all();
  }

  // Records the finished iterations that come next in order; stops the loop where `until` says.
  void record_finished() {
    for (auto it = jobs_.find(loop_.iterations()); it != jobs_.end() && it->second.done && !ended_;
         it = jobs_.find(loop_.iterations())) {
      Job job = std::move(it->second);
      jobs_.erase(it);
      if (job.error) {  // a make command that failed, or Ctrl-C: nothing after it is recorded
        error_ = job.error;
        stopping_ = ended_ = true;
        drop(job);
        return;
      }
      const bool passed = job.replayed ? loop_.record_replayed(job.description, job.passed)
                                       : loop_.record(job.description, job.passed, job.seconds, job.sources);
      if (o_.remove_intermediate) remove_file(job.artifact);
      remove_file(job.info);
      if (until_.stop_after(passed, loop_.iterations())) stopping_ = ended_ = true;
    }
  }

  void drop(const Job& job) {
    remove_file(job.artifact);
    remove_file(job.info);
    for (const std::string& path : job.sources) remove_file(path);
  }

  IterationLoop& loop_;
  const IterationOptions& o_;
  const Until& until_;
  const std::vector<JobPlace>& places_;
  const std::function<std::string(int)>& describe_;
  const MakeCommand& make_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<bool> busy_;
  std::map<int, Job> jobs_;  // started or answered, not yet recorded (std::map: references stay valid)
  std::vector<std::thread> threads_;  // per place, its current or last job
  int next_;
  bool stopping_ = false;  // start no more jobs
  bool ended_ = false;     // record no more iterations (--until said stop, or a job failed)
  std::exception_ptr error_;
};

}  // namespace

void run_side_by_side(IterationLoop& loop, const Until& until, const std::vector<JobPlace>& places,
                      const std::function<std::string(int)>& describe, const MakeCommand& make,
                      const std::vector<std::string>& own_args) {
  const IterationOptions& o = loop.options();
  VKG_CHECK(!o.check.command.empty(), "--jobs needs a --check command: an interactive check (or a tool's own) "
                                      "answers one iteration at a time");
  for (const std::string& a : o.artifacts)
    VKG_CHECK(names_path(o.check.command, a) || names_path(without_artifacts_option(own_args), a),
              "--artifacts '" << a << "' is named neither by the --check command nor by this tool's options: "
                                 "side-by-side jobs could not each write their own copy of it (use --jobs 1)");
  SideBySide(loop, until, places, describe, make).run();
}

}  // namespace vkg::debug
