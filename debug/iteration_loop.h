// The loop every debug tool runs (Polygraphy's IterativeDebugArgs):
//   make the iteration's artifact -> run the --check -> sort --artifacts,
// with the debug replay, --iter-info, the intermediate artifact's clean-up,
// RUNNING/PASSED/FAILED logs and the final summary line. The tools decide
// what each iteration builds and when to stop (markers, --until); this class
// runs one iteration at a time for them.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "debug/artifact_sorter.h"
#include "debug/check_command.h"
#include "debug/debug_replay.h"

namespace vkg::debug {

struct IterationOptions {
  CheckOptions check;
  std::vector<std::string> artifacts;           // --artifacts
  std::string art_dir = "vkgraphy_artifacts";   // --art-dir
  std::string iter_artifact;                    // --iter-artifact ("" when the tool has none)
  bool remove_intermediate = true;              // false: --no-remove-intermediate
  std::string iter_info;                        // --iter-info ("" for none)
  std::string save_replay = "vkgraphy_debug_replay.json";  // --save-debug-replay ("" for none)
  std::string load_replay;                      // --load-debug-replay
  // A tool's own check, used instead of asking when no --check command was given: whether the
  // iteration's artifact passes. `builtin_check_what` says what it does, for the log.
  std::function<bool()> builtin_check;
  std::string builtin_check_what;
};

// What one iteration did (for --report).
struct IterationRecord {
  int index = 0;
  std::string description;
  bool passed = false;
  bool replayed = false;               // the result came from the loaded debug replay
  std::vector<std::string> artifacts;  // where --artifacts were sorted to
};

class IterationLoop {
 public:
  // Loads the replay to follow (throws Error on a bad one) and refuses an
  // --iter-artifact path that exists (it would be overwritten and removed).
  IterationLoop(std::string tool, IterationOptions options);

  // Runs iteration number iterations(): writes --iter-info, calls `make` (which
  // writes the intermediate artifact), checks it, sorts the artifacts and
  // records the result. `description` says what this iteration tries; a
  // replayed iteration with the same description is not made or checked.
  // `remaining` is the tool's estimate of the iterations left after this one.
  // Returns whether it passed. Throws StopRequested on Ctrl-C or end of
  // interactive input (the replay of the finished iterations is saved).
  bool run(const std::string& description, const std::function<void()>& make, std::optional<int> remaining = {});

  // The same for an iteration made and checked elsewhere (side by side, debug/side_by_side.h),
  // in iteration order: the RUNNING line was logged by log_running() when it started; this sorts
  // its artifacts from `sources` (its copies of --artifacts), saves the replay and logs the result.
  bool record(const std::string& description, bool passed, double seconds, const std::vector<std::string>& sources);
  // The loaded replay's result for iteration `index` if it holds one for this description
  // (a warning when it holds another), which a side-by-side run then records without running.
  std::optional<bool> replayed(int index, const std::string& description) const;
  // Records iteration iterations() from the loaded replay.
  bool record_replayed(const std::string& description, bool passed);
  // Saves the replay with these iterations failed in its '_skip_current' copy (they are being
  // checked: loading that copy after a crash skips past them), or removes the copy when empty.
  void save_skip_file(const std::vector<std::pair<int, std::string>>& checking) const;
  void log_running(int index, const std::string& description, std::optional<int> remaining) const;
  // Writes the --iter-info file of iteration `index` to `path` (nothing when `path` is "").
  void write_iter_info(int index, const std::string& description, const std::string& path,
                       const std::string& artifact) const;

  int iterations() const { return iterations_; }
  int passed() const { return passed_; }
  // "Finished N iteration(s) | Passed: p/N | Pass Rate: x%" (logged once).
  void log_summary() const;
  // The iteration artifact path as the check sees it.
  const std::string& iter_artifact() const { return options_.iter_artifact; }
  const IterationOptions& options() const { return options_; }
  // Every iteration run so far, in order.
  const std::vector<IterationRecord>& records() const { return records_; }

 private:
  void save_replay(const std::string& path) const;
  bool finish(const std::string& description, bool passed, bool replayed, std::vector<std::string> sorted,
              double seconds);

  std::string tool_;
  IterationOptions options_;
  CheckCommand check_;
  ArtifactSorter sorter_;
  DebugReplay loaded_;
  DebugReplay replay_;
  int iterations_ = 0;
  int passed_ = 0;
  double seconds_checked_ = 0;  // time of the iterations that ran a check, for the estimate
  int checked_ = 0;
  std::vector<IterationRecord> records_;
};

// --until of `debug build` and `debug repeat`: stop at the first good, the
// first bad, or after N iterations.
struct Until {
  enum class Kind { Good, Bad, Count } kind = Kind::Count;
  int count = 0;
  int limit = 0;  // at most this many iterations whatever the kind (0: no limit): a search's end
  // Whether to stop after an iteration with this result, `done` iterations in.
  bool stop_after(bool passed, int done) const;
  // Iterations left after the one numbered `index` (known only for a count).
  std::optional<int> remaining_after(int index) const;
};
// Parses "good", "bad" or a positive integer; throws Error otherwise.
Until parse_until(const std::string& text);

// Runs iterations until `until` says stop; `iteration(index)` runs one
// (through loop.run) and returns whether it passed.
void run_until(IterationLoop& loop, const Until& until, const std::function<bool(int)>& iteration);

// Runs `body` with Ctrl-C handling; turns StopRequested into a logged stop.
// Returns false when the loop was stopped.
bool run_interruptible(const std::function<void()>& body);

}  // namespace vkg::debug
