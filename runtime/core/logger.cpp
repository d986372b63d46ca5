#include "runtime/core/logger.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>

#include "runtime/core/error.h"

namespace vkg {

bool parse_severity(const std::string& text, Severity* out) {
  std::string t;
  for (char c : text) t += char(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, Severity> names = {
      {"ULTRA_VERBOSE", Severity::UltraVerbose}, {"SUPER_VERBOSE", Severity::SuperVerbose},
      {"EXTRA_VERBOSE", Severity::ExtraVerbose}, {"VERBOSE", Severity::Verbose},
      {"INFO", Severity::Info},                  {"START", Severity::Start},
      {"FINISH", Severity::Finish},              {"WARNING", Severity::Warning},
      {"ERROR", Severity::Error},                {"CRITICAL", Severity::Critical},
  };
  if (auto it = names.find(t); it != names.end()) {
    *out = it->second;
    return true;
  }
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    *out = Severity(std::stoi(t));
    return true;
  }
  return false;
}

const char* severity_letter(Severity s) {
  switch (s) {
    case Severity::UltraVerbose: return "U";
    case Severity::SuperVerbose: return "S";
    case Severity::ExtraVerbose: return "X";
    case Severity::Verbose: return "V";
    case Severity::Info: return "I";
    case Severity::Start: return "I";
    case Severity::Finish: return "I";
    case Severity::Warning: return "W";
    case Severity::Error: return "E";
    case Severity::Critical: return "!";
  }
  return "?";
}

namespace {
const char* color_of(Severity s) {
  if (s >= Severity::Critical) return "\033[1;31m";
  if (s >= Severity::Error) return "\033[31m";
  if (s >= Severity::Warning) return "\033[33m";
  if (s == Severity::Finish) return "\033[32m";
  if (s == Severity::Start) return "\033[1;36m";
  if (s < Severity::Info) return "\033[2m";
  return "";
}
}  // namespace

void Logger::set_log_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "a");
  VKG_CHECK(f, "cannot open log file '" << path << "': " << std::strerror(errno));
  file_.reset(f);
}

bool Logger::enabled(Severity s, const char* file) const {
  if (capture_ && s >= capture_->min_) return true;  // captured whatever the printed severity
  Severity threshold = severity_;
  if (file && !path_severity_.empty()) {
    size_t best = 0;
    for (const auto& [path, sev] : path_severity_) {
      if (std::strstr(file, path.c_str()) && path.size() >= best) {
        best = path.size();
        threshold = sev;
      }
    }
  }
  return int(s) >= int(threshold);
}

void Logger::log(Severity s, const std::string& message, const char* file, int line) {
  if (capture_ && s >= capture_->min_) {
    capture_->messages_.emplace_back(s, message);
    return;
  }
  std::string prefix = std::string("[") + severity_letter(s) + "] ";
  if (timestamp_) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    prefix = std::string("[") + buf + "] " + prefix;
  }
  if (line_info_ && file) {
    const char* base = std::strrchr(file, '/');
    prefix += std::string("[") + (base ? base + 1 : file) + ":" + std::to_string(line) + "] ";
  }
  // Multi-line messages keep the prefix width on continuation lines.
  std::string body;
  const std::string indent(prefix.size(), ' ');
  for (size_t start = 0;;) {
    size_t nl = message.find('\n', start);
    body += (start == 0 ? prefix : indent) + message.substr(start, nl == std::string::npos ? nl : nl - start) + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  FILE* out = stdout;
  const char* color = colors_ ? color_of(s) : "";
  if (*color) {
    std::fprintf(out, "%s%s\033[0m", color, body.substr(0, body.size() - 1).c_str());
    std::fputc('\n', out);
  } else {
    std::fputs(body.c_str(), out);
  }
  std::fflush(out);
  if (file_) {
    std::fputs(body.c_str(), file_.get());
    std::fflush(file_.get());
  }
}

LogCapture::LogCapture(Severity min) : min_(min), outer_(Logger::get().capture_) { Logger::get().capture_ = this; }

LogCapture::~LogCapture() { Logger::get().capture_ = outer_; }

Logger& Logger::get() {
  static Logger logger;
  return logger;
}

}  // namespace vkg
