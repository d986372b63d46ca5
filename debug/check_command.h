// The --check of every debug tool (Polygraphy's CheckCmdArgs): runs the
// user's check command once per iteration, without a shell, and turns its exit
// status and output into pass or fail. With no command, asks the user.
#pragma once

#include <string>
#include <vector>

namespace vkg::debug {

struct CheckOptions {
  std::vector<std::string> command;        // argv; empty: ask interactively
  std::vector<int> fail_codes;             // --fail-code: only these exit codes fail
  std::vector<int> ignore_fail_codes;      // --ignore-fail-code: these exit codes pass
  std::vector<std::string> fail_regexes;   // --fail-regex: ECMAScript regexes over stdout+stderr
  bool show_output = false;                // --show-output: print the output of passing runs too
  bool hide_fail_output = false;           // --hide-fail-output: do not print the output of failing runs
  double timeout_s = 0;                    // --check-timeout: kill a run after this long (0: no limit)
  std::vector<std::string> env;            // "NAME=VALUE" set for the command (a side-by-side job's device)
  bool survives_interrupt = false;         // not killed on Ctrl-C (scancel, which a Ctrl-C itself runs)
};

// What one run of the check gave.
struct CheckResult {
  bool passed = false;
  int exit_code = 0;         // -1 when killed by a signal or the timeout
  bool timed_out = false;
  std::string output;        // stdout and stderr, interleaved as written
  int signal = 0;            // the signal that ended the command, unless the timeout's; 0 if none
};

// Pass/fail from an exit code and output, as Polygraphy decides it:
// an --ignore-fail-code passes; with --fail-code only those codes fail (and,
// with --fail-regex too, only when a regex also matches); otherwise with
// --fail-regex a match fails (whatever the code), else a non-zero code fails.
bool check_passed(const CheckOptions& options, int exit_code, const std::string& output);

// Thrown when the user ends an interactive session (end of input) or presses
// Ctrl-C during a check: the debug loop stops cleanly.
struct StopRequested {
  std::string why;
};

// Where execvp would find `program`: itself when it names a path, else the first executable PATH
// entry; "" when there is none.
std::string find_program(const std::string& program);

// Runs `options.command` as the check runs (no shell, its own process group, stdin from /dev/null,
// stdout and stderr captured, killed at options.timeout_s or on Ctrl-C), with options.env set, and
// returns its exit code and output; `passed` is left false. Throws Error when it cannot be
// started, StopRequested on Ctrl-C. Safe to call from several threads at once.
CheckResult run_program(const CheckOptions& options);

class CheckCommand {
 public:
  // Compiles the regexes; throws Error naming a bad one.
  explicit CheckCommand(CheckOptions options);

  bool interactive() const { return options_.command.empty(); }
  // Throws Error when the command's program cannot be found or run (checked
  // before a long session starts; run() would fail the same way later).
  void require_runnable() const;
  const CheckOptions& options() const { return options_; }

  // Runs the check for one iteration. `artifact` names the iteration's
  // artifact in the interactive prompt ("Did 'vkgraphy_debug.engine' [p]ass or [f]ail?").
  // Throws Error when the command cannot be started (not found, not executable),
  // StopRequested on end of input or Ctrl-C.
  CheckResult run(const std::string& artifact) const;

 private:
  CheckResult ask(const std::string& artifact) const;

  CheckOptions options_;
};

// Ctrl-C handling for the debug loop: while an InterruptGuard lives, the
// first SIGINT sets a flag (the loop stops at the next safe point and a
// running check is killed); a second one exits at once with code 130.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};
bool interrupt_requested();

}  // namespace vkg::debug
