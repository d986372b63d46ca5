// Leveled logging in the style of Polygraphy's G_LOGGER: severities, -v/-q
// adjustment, per-path verbosity, optional timestamp and line info, colours
// only when writing to a terminal, and an optional copy into a log file.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace vkg {

enum class Severity : int {
  UltraVerbose = 5,
  SuperVerbose = 10,
  ExtraVerbose = 20,
  Verbose = 30,
  Info = 40,
  Start = 45,   // "[I] RUNNING | ..." lines
  Finish = 48,  // "[I] PASSED | ..." lines
  Warning = 50,
  Error = 60,
  Critical = 70,
};

// Parses "VERBOSE", "info", "warning", ... and numeric levels. Returns false if unknown.
bool parse_severity(const std::string& text, Severity* out);
const char* severity_letter(Severity s);  // "V", "I", "W", "E", "!" ...

class LogCapture;

class Logger {
 public:
  // Messages below this severity are dropped (default Info).
  void set_severity(Severity s) { severity_ = s; }
  Severity severity() const { return severity_; }
  // Per source path verbosity, as `--verbosity path:level` (matched as a substring of __FILE__).
  void set_path_severity(const std::string& path, Severity s) { path_severity_[path] = s; }
  void set_timestamp(bool on) { timestamp_ = on; }
  void set_line_info(bool on) { line_info_ = on; }
  void set_colors(bool on) { colors_ = on; }
  // Also appends every message (without colours) to this file. Throws vkg::Error if it cannot be opened.
  void set_log_file(const std::string& path);

  bool enabled(Severity s, const char* file = nullptr) const;
  void log(Severity s, const std::string& message, const char* file = nullptr, int line = 0);

  // The process-wide logger.
  static Logger& get();

 private:
  Severity severity_ = Severity::Info;
  std::map<std::string, Severity> path_severity_;
  bool timestamp_ = false;
  bool line_info_ = false;
  bool colors_ = false;
  std::unique_ptr<FILE, int (*)(FILE*)> file_{nullptr, &std::fclose};
  LogCapture* capture_ = nullptr;  // the innermost live LogCapture
  friend class LogCapture;
};

// While alive, the messages of at least `min` severity are kept here instead of printed (the
// innermost capture takes them): for a tool that reports what a step said, as `check lint`
// reports the warnings of a model's import and reference run as findings.
class LogCapture {
 public:
  explicit LogCapture(Severity min = Severity::Warning);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  const std::vector<std::pair<Severity, std::string>>& messages() const { return messages_; }

 private:
  friend class Logger;
  Severity min_;
  LogCapture* outer_;
  std::vector<std::pair<Severity, std::string>> messages_;
};

// Sets the process-wide logger's severity for a scope and restores it on any exit.
class ScopedSeverity {
 public:
  explicit ScopedSeverity(Severity s) : saved_(Logger::get().severity()) { Logger::get().set_severity(s); }
  ~ScopedSeverity() { Logger::get().set_severity(saved_); }
  ScopedSeverity(const ScopedSeverity&) = delete;
  ScopedSeverity& operator=(const ScopedSeverity&) = delete;

 private:
  Severity saved_;
};

}  // namespace vkg

#define VKG_LOG(sev, msg)                                                          \
  do {                                                                             \
    if (::vkg::Logger::get().enabled(sev, __FILE__)) {                             \
      std::ostringstream vkg_log_os_;                                              \
      vkg_log_os_ << msg;                                                          \
      ::vkg::Logger::get().log(sev, vkg_log_os_.str(), __FILE__, __LINE__);        \
    }                                                                              \
  } while (0)

#define VKG_VERBOSE(msg) VKG_LOG(::vkg::Severity::Verbose, msg)
#define VKG_EXTRA_VERBOSE(msg) VKG_LOG(::vkg::Severity::ExtraVerbose, msg)
#define VKG_INFO(msg) VKG_LOG(::vkg::Severity::Info, msg)
#define VKG_START(msg) VKG_LOG(::vkg::Severity::Start, msg)
#define VKG_FINISH(msg) VKG_LOG(::vkg::Severity::Finish, msg)
#define VKG_WARNING(msg) VKG_LOG(::vkg::Severity::Warning, msg)
#define VKG_ERROR(msg) VKG_LOG(::vkg::Severity::Error, msg)
#define VKG_CRITICAL(msg) VKG_LOG(::vkg::Severity::Critical, msg)
