#include "debug/iteration_loop.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

namespace {

std::string seconds_text(double s) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(s < 10 ? 2 : 1) << s << " s";
  return os.str();
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  if (!path.empty() && fs::exists(fs::symlink_status(path, ec))) {
    fs::remove_all(path, ec);
    if (ec) VKG_WARNING("Could not remove " << path << ": " << ec.message());
  }
}

}  // namespace

IterationLoop::IterationLoop(std::string tool, IterationOptions options)
    : tool_(std::move(tool)),
      options_(std::move(options)),
      check_(options_.check),
      sorter_(options_.artifacts, options_.art_dir) {
  replay_.tool = tool_;
  if (!options_.load_replay.empty()) {
    loaded_ = load_debug_replay(options_.load_replay);
    if (loaded_.tool != tool_)
      VKG_WARNING("Debug replay " << options_.load_replay << " was written by 'debug " << loaded_.tool
                                  << "', not 'debug " << tool_ << "': its entries may not apply");
    VKG_INFO("Loaded debug replay " << options_.load_replay << " (" << loaded_.iterations.size() << " iteration(s))");
  }
  if (!options_.iter_artifact.empty()) {
    VKG_CHECK(!fs::exists(fs::symlink_status(options_.iter_artifact)),
              "'" << options_.iter_artifact
                  << "' already exists; refusing to overwrite it. Remove it or choose another path with --iter-artifact");
  }
  // A replay may answer every iteration without running the check; otherwise a missing program fails now.
  if (options_.load_replay.empty()) check_.require_runnable();
  if (check_.interactive() && options_.builtin_check)
    VKG_START("No --check command was given: each iteration is checked by " << options_.builtin_check_what);
  else if (check_.interactive())
    VKG_START("Starting an interactive debugging session since no --check command was given");
}

void IterationLoop::log_running(int index, const std::string& description, std::optional<int> remaining) const {
  std::ostringstream os;
  os << "RUNNING | Iteration " << index;
  if (!description.empty()) os << " | " << description;
  if (remaining) {
    os << " | about " << *remaining << " iteration(s) remaining";
    if (checked_ > 0 && *remaining > 0) os << " (~" << seconds_text(seconds_checked_ / checked_ * *remaining) << ")";
  }
  VKG_START(os.str());
}

void IterationLoop::save_replay(const std::string& path) const {
  if (path.empty()) return;
  save_debug_replay(path, replay_);
}

std::optional<bool> IterationLoop::replayed(int index, const std::string& description) const {
  const ReplayEntry* entry = loaded_.find(index);
  if (!entry) return std::nullopt;
  if (!entry->description.empty() && entry->description != description) {
    VKG_WARNING("Debug replay entry for iteration " << index << " was for '" << entry->description
                                                    << "', not for this iteration: checking it again");
    return std::nullopt;
  }
  return entry->passed;
}

bool IterationLoop::record_replayed(const std::string& description, bool passed) {
  VKG_INFO("Result from debug replay " << options_.load_replay << ": " << (passed ? "passed" : "failed"));
  replay_.set(ReplayEntry{iterations_, passed, description});
  save_replay(options_.save_replay);
  return finish(description, passed, true, {}, 0);
}

void IterationLoop::write_iter_info(int index, const std::string& description, const std::string& path,
                                    const std::string& artifact) const {
  if (path.empty()) return;
  nlohmann::ordered_json info = {{"iteration", index}, {"tool", tool_}, {"description", description}};
  if (!artifact.empty()) info["iter_artifact"] = artifact;
  write_file_atomically(path, info.dump(2) + "\n", "iteration info");
}

void IterationLoop::save_skip_file(const std::vector<std::pair<int, std::string>>& checking) const {
  if (options_.save_replay.empty()) return;
  if (checking.empty()) {
    remove_quietly(skip_current_path(options_.save_replay));
    return;
  }
  DebugReplay skip = replay_;
  for (const auto& [index, description] : checking) skip.set(ReplayEntry{index, false, description});
  save_debug_replay(skip_current_path(options_.save_replay), skip);
}

bool IterationLoop::record(const std::string& description, bool passed, double seconds,
                           const std::vector<std::string>& sources) {
  std::vector<std::string> sorted = sorter_.sort(passed, iterations_, sources);
  replay_.set(ReplayEntry{iterations_, passed, description});
  save_replay(options_.save_replay);
  seconds_checked_ += seconds;
  ++checked_;
  return finish(description, passed, false, std::move(sorted), seconds);
}

bool IterationLoop::finish(const std::string& description, bool passed, bool replayed, std::vector<std::string> sorted,
                           double seconds) {
  records_.push_back(IterationRecord{iterations_, description, passed, replayed, std::move(sorted)});
  const int index = iterations_++;
  if (passed) ++passed_;
  const std::string duration = seconds_text(seconds);
  if (passed)
    VKG_FINISH("PASSED | Iteration " << index << " | Duration " << duration);
  else
    VKG_ERROR("FAILED | Iteration " << index << " | Duration " << duration);
  return passed;
}

bool IterationLoop::run(const std::string& description, const std::function<void()>& make,
                        std::optional<int> remaining) {
  if (interrupt_requested()) throw StopRequested{"interrupted"};
  const int index = iterations_;
  log_running(index, description, remaining);
  if (const std::optional<bool> answer = replayed(index, description)) return record_replayed(description, *answer);
  const auto start = std::chrono::steady_clock::now();
  struct Cleanup {
    const IterationOptions& o;
    ~Cleanup() {
      if (o.remove_intermediate) remove_quietly(o.iter_artifact);
      remove_quietly(o.iter_info);
    }
  } cleanup{options_};
  write_iter_info(index, description, options_.iter_info, options_.iter_artifact);
  make();
  if (interrupt_requested()) throw StopRequested{"interrupted"};
  // Written first with this iteration failed: if the check crashes the
  // machine or hangs, loading this replay skips past it.
  save_skip_file({{index, description}});
  const bool passed = check_.interactive() && options_.builtin_check ? options_.builtin_check()
                                                                     : check_.run(options_.iter_artifact).passed;
  // The check ended (it did not take the machine down): the real replay record() saves supersedes the skip file.
  save_skip_file({});
  return record(description, passed, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                options_.artifacts);
}

void IterationLoop::log_summary() const {
  std::ostringstream rate;
  rate << std::fixed << std::setprecision(1) << (iterations_ ? 100.0 * passed_ / iterations_ : 0.0);
  VKG_FINISH("Finished " << iterations_ << " iteration(s) | Passed: " << passed_ << "/" << iterations_
                         << " | Pass Rate: " << rate.str() << "%");
}

bool Until::stop_after(bool passed, int done) const {
  if (limit > 0 && done >= limit) return true;
  switch (kind) {
    case Kind::Good: return passed;
    case Kind::Bad: return !passed;
    case Kind::Count: return done >= count;
  }
  return true;
}

std::optional<int> Until::remaining_after(int index) const {
  if (kind == Kind::Count) return std::max(0, count - index - 1);
  if (limit > 0) return std::max(0, limit - index - 1);
  return std::nullopt;
}

Until parse_until(const std::string& text) {
  if (text == "good") return {Until::Kind::Good, 0};
  if (text == "bad") return {Until::Kind::Bad, 0};
  const bool digits = !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
  VKG_CHECK(digits && std::stoi(text) > 0,
            "--until must be 'good', 'bad' or a number of iterations above 0, not '" << text << "'");
  return {Until::Kind::Count, std::stoi(text)};
}

void run_until(IterationLoop& loop, const Until& until, const std::function<bool(int)>& iteration) {
  for (;;) {
    const bool passed = iteration(loop.iterations());
    if (until.stop_after(passed, loop.iterations())) return;
  }
}

bool run_interruptible(const std::function<void()>& body) {
  InterruptGuard guard;
  try {
    body();
    return true;
  } catch (const StopRequested& stop) {
    VKG_WARNING("Stopped (" << stop.why << "): artifacts sorted so far and the debug replay are kept");
    return false;
  }
}

}  // namespace vkg::debug
