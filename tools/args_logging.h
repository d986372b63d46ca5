// Argument group: the global logging options every tool takes (Polygraphy's
// LoggerArgs): -v/-q (repeatable), --verbosity, --silent, --log-format, --log-file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vkg::tools {

struct LoggingArgs {
  int verbose = 0;
  int quiet = 0;
  std::vector<std::string> verbosity;  // [path:]LEVEL
  bool silent = false;
  std::vector<std::string> log_format;  // timestamp, line-info, no-colors
  std::string log_file;

  void add_to(CLI::App& app);
  // Configures Logger::get(); throws Error on bad values.
  void apply() const;
};

}  // namespace vkg::tools
