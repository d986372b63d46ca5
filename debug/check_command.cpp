#include "debug/check_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace {

volatile sig_atomic_t g_interrupts = 0;
struct sigaction g_previous_sigint {};

void on_sigint(int) {
  g_interrupts = g_interrupts + 1;
  if (g_interrupts >= 2) _exit(kExitInterrupted);
  static const char kMessage[] = "\n[W] Interrupted: stopping after cleaning up (press Ctrl-C again to quit at once)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

// "2 s", "0.5 s"
std::string format_seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

// What a failing check printed, in a few lines: the error lines and the
// mismatch counts of a vkgraphy (or Polygraphy) check, else its last lines.
std::string summarize_check_output(const std::string& output) {
  std::vector<std::string> lines, picked;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const std::string& line : lines) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    const std::string_view text(line.data() + start, line.size() - start);
    if (text.rfind("[E]", 0) == 0 || text.rfind("[!]", 0) == 0 || text.find("Mismatched elements:") != text.npos)
      picked.push_back(std::string(text));
  }
  constexpr size_t kTail = 10;
  if (picked.empty()) {
    const size_t from = lines.size() > kTail ? lines.size() - kTail : 0;
    if (from > 0) picked.push_back("... (" + std::to_string(from) + " line(s) before)");
    picked.insert(picked.end(), lines.begin() + long(from), lines.end());
  }
  std::string out;
  for (const std::string& p : picked) out += (out.empty() ? "" : "\n") + p;
  return out.empty() ? "(no output)" : out;
}

std::vector<std::regex> compile_regexes(const std::vector<std::string>& texts) {
  std::vector<std::regex> out;
  for (const std::string& text : texts) {
    try {
      out.emplace_back(text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      VKG_THROW("--fail-regex: '" << text << "' is not a valid regular expression (" << e.what() << ")");
    }
  }
  return out;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    if (!a.empty() && a.find_first_of(" \t\n\"'\\$*?;&|<>()`") == std::string::npos) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}
// The check command's environment: ours, with the entries options.env names replaced by its.
// Made before fork (the child of a threaded process only execs).
std::vector<std::string> check_environment(const CheckOptions& options) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(options.env.begin(), options.env.end(),
                                      [&](const std::string& x) { return x.substr(0, x.find('=')) == name; });
    if (!replaced) env_text.push_back(entry);
  }
  env_text.insert(env_text.end(), options.env.begin(), options.env.end());
  return env_text;
}

// In the forked child: runs the command with its output on out_fd; reports an exec failure's
// errno on exec_fd.
[[noreturn]] void exec_check_command(int out_fd, int exec_fd, char* const* argv, char* const* envp) {
  // Own process group, so a timeout kills everything it started and the
  // terminal's Ctrl-C reaches only vkgraphy (which then stops the check).
  setpgid(0, 0);
  signal(SIGINT, SIG_DFL);
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  execvpe(argv[0], argv, envp);
  const int err = errno;
  [[maybe_unused]] const ssize_t n = write(exec_fd, &err, sizeof(err));
  _exit(127);
}

// Reads the command's output from out_fd into r.output until it ends, --check-timeout passes
// (r.timed_out) or the user interrupts; kills the command's process group in the last two
// cases. Returns whether it was killed for an interrupt.
bool collect_output(const CheckOptions& options, pid_t pid, int out_fd, CheckResult& r) {
  const auto start = std::chrono::steady_clock::now();
  bool killed_for_interrupt = false;
  char buffer[65536];
  for (;;) {
    int wait_ms = 200;
    if (options.timeout_s > 0) {
      const double left =
          options.timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        r.timed_out = true;
        kill_group(pid);
        break;
      }
      wait_ms = std::min(wait_ms, static_cast<int>(left * 1000) + 1);
    }
    if (interrupt_requested() && !options.survives_interrupt) {
      killed_for_interrupt = true;
      kill_group(pid);
      break;
    }
    pollfd p{out_fd, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(out_fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output: the command (and everything holding the pipe) finished
    r.output.append(buffer, static_cast<size_t>(n));
  }
  // Drain what is left without blocking on grandchildren that keep the pipe open.
  fcntl(out_fd, F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = read(out_fd, buffer, sizeof(buffer))) > 0;) r.output.append(buffer, static_cast<size_t>(n));
  return killed_for_interrupt;
}

}  // namespace

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

bool check_passed(const CheckOptions& options, int exit_code, const std::string& output) {
  if (contains(options.ignore_fail_codes, exit_code)) return true;
  std::optional<bool> regex_matched;
  if (!options.fail_regexes.empty()) {
    regex_matched = false;
    for (const std::regex& re : compile_regexes(options.fail_regexes))
      if (std::regex_search(output, re)) regex_matched = true;
  }
  bool failed;
  if (!options.fail_codes.empty())
    failed = contains(options.fail_codes, exit_code) && regex_matched.value_or(true);
  else
    failed = regex_matched.has_value() ? *regex_matched : exit_code != 0;
  return !failed;
}

CheckCommand::CheckCommand(CheckOptions options) : options_(std::move(options)) {
  compile_regexes(options_.fail_regexes);
  VKG_CHECK(options_.timeout_s >= 0, "--check-timeout must not be negative");
  for (int code : options_.fail_codes)
    VKG_CHECK(!contains(options_.ignore_fail_codes, code),
              "exit code " << code << " is given to both --fail-code and --ignore-fail-code");
}

void CheckCommand::require_runnable() const {
  if (options_.command.empty()) return;
  const std::string& program = options_.command[0];
  VKG_CHECK(!find_program(program).empty(),
            "the check command '" << program << "' "
                                  << (program.find('/') != std::string::npos ? "does not exist or is not executable"
                                                                             : "is not found on PATH"));
}

CheckResult CheckCommand::run(const std::string& artifact) const {
  if (interactive()) return ask(artifact);
  VKG_INFO("Running check command: " << join_command(options_.command));
  CheckResult r = run_program(options_);
  r.passed = !r.timed_out && check_passed(options_, r.exit_code, r.output);
  if (r.timed_out)
    VKG_ERROR("The check command ran longer than --check-timeout " << format_seconds(options_.timeout_s)
                                                                   << " and was killed");
  const std::string how = r.timed_out ? "killed by --check-timeout after " + format_seconds(options_.timeout_s)
                                      : "exit code " + std::to_string(r.exit_code);
  const bool verbose = Logger::get().severity() <= Severity::Verbose;
  if (options_.show_output || (!r.passed && !options_.hide_fail_output && verbose)) {
    std::string text = r.output;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    VKG_INFO("========== CHECK OUTPUT (" << how << ") ==========\n" << text);
  } else if (!r.passed && !options_.hide_fail_output) {
    VKG_INFO("Check output (" << how << "), summarised; -v or --show-output shows all of it:\n"
                              << summarize_check_output(r.output));
  }
  return r;
}

CheckResult CheckCommand::ask(const std::string& artifact) const {
  std::cout << ">>> Did '" << (artifact.empty() ? std::string("this iteration") : artifact) << "' [p]ass or [f]ail? "
            << std::flush;
  for (;;) {
    std::string line;
    const bool got = static_cast<bool>(std::getline(std::cin, line));
    if (interrupt_requested()) throw StopRequested{"interrupted"};
    if (!got) {
      std::cout << "\n";
      throw StopRequested{"end of input"};
    }
    const size_t first = line.find_first_not_of(" \t\r");
    const char c = first == std::string::npos ? '\0' : static_cast<char>(std::tolower(line[first]));
    if (c == 'p' || c == 'f') return CheckResult{c == 'p', c == 'p' ? 0 : 1, false, ""};
    std::cout << ">>> Please answer 'p' (pass) or 'f' (fail): " << std::flush;
  }
}

CheckResult run_program(const CheckOptions& options) {
  int out_pipe[2];
  int exec_pipe[2];  // reports an exec failure to the parent (closed on successful exec)
  VKG_CHECK(pipe2(out_pipe, O_CLOEXEC) == 0 && pipe2(exec_pipe, O_CLOEXEC) == 0,
            "cannot create a pipe for the check command: " << std::strerror(errno));
  std::vector<char*> argv;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text = check_environment(options);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    close(out_pipe[0]), close(out_pipe[1]), close(exec_pipe[0]), close(exec_pipe[1]);
    VKG_THROW("cannot start the check command: fork failed: " << std::strerror(errno));
  }
  if (pid == 0) exec_check_command(out_pipe[1], exec_pipe[1], argv.data(), envp.data());
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(exec_pipe[1]);

  CheckResult r;
  const bool killed_for_interrupt = collect_output(options, pid, out_pipe[0], r);
  close(out_pipe[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(exec_pipe[0]);
  VKG_CHECK(!exec_failed, "the command '" << options.command[0] << "' cannot be run: " << std::strerror(exec_errno));
  if (killed_for_interrupt) throw StopRequested{"interrupted"};
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (WIFSIGNALED(status) && !r.timed_out) {
    r.signal = WTERMSIG(status);
    r.output += "\n[check command killed by signal " + std::to_string(r.signal) + "]\n";
  }
  return r;
}

InterruptGuard::InterruptGuard() {
  g_interrupts = 0;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking reads return EINTR so the loop notices
  sigaction(SIGINT, &sa, &g_previous_sigint);
}

InterruptGuard::~InterruptGuard() { sigaction(SIGINT, &g_previous_sigint, nullptr); }

bool interrupt_requested() { return g_interrupts > 0; }

}  // namespace vkg::debug
