#include "tools/args_logging.h"

#include <unistd.h>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::tools {

void LoggingArgs::add_to(CLI::App& app) {
  auto* g = "Logging";
  app.add_flag("-v,--verbose", verbose, "Increase logging verbosity (repeatable)")->group(g);
  app.add_flag("-q,--quiet", quiet, "Decrease logging verbosity (repeatable)")->group(g);
  app.add_option("--verbosity", verbosity,
                 "Logging verbosity: LEVEL, or PATH:LEVEL for source files whose path contains PATH. Levels: "
                 "ULTRA_VERBOSE, SUPER_VERBOSE, EXTRA_VERBOSE, VERBOSE, INFO, WARNING, ERROR, CRITICAL")
      ->group(g);
  app.add_flag("--silent", silent, "Disable all output")->group(g);
  app.add_option("--log-format", log_format, "Log format: any of timestamp, line-info, no-colors")
      ->check(CLI::IsMember({"timestamp", "line-info", "no-colors"}))
      ->group(g);
  app.add_option("--log-file", log_file, "Also write log messages to this file")->group(g);
}

void LoggingArgs::apply() const {
  Logger& log = Logger::get();
  static const Severity ladder[] = {Severity::UltraVerbose, Severity::SuperVerbose, Severity::ExtraVerbose,
                                    Severity::Verbose,      Severity::Info,         Severity::Warning,
                                    Severity::Error,        Severity::Critical};
  int index = 4 - verbose + quiet;  // INFO by default
  index = std::max(0, std::min(index, int(std::size(ladder)) - 1));
  log.set_severity(ladder[index]);
  for (const std::string& v : verbosity) {
    const auto colon = v.rfind(':');
    const std::string level = colon == std::string::npos ? v : v.substr(colon + 1);
    Severity s;
    VKG_CHECK(parse_severity(level, &s), "unknown verbosity level '" << level << "' in --verbosity " << v);
    if (colon == std::string::npos) {
      log.set_severity(s);
    } else {
      log.set_path_severity(v.substr(0, colon), s);
    }
  }
  if (silent) log.set_severity(Severity(1000));
  bool colors = isatty(STDOUT_FILENO) != 0;
  for (const std::string& f : log_format) {
    if (f == "timestamp") log.set_timestamp(true);
    if (f == "line-info") log.set_line_info(true);
    if (f == "no-colors") colors = false;
  }
  log.set_colors(colors);
  if (!log_file.empty()) log.set_log_file(log_file);
}

}  // namespace vkg::tools
