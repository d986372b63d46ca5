// Small CLI11 helpers shared by the data loader and comparator argument groups.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "runtime/core/error.h"

namespace vkg {

// Lists take up to this many values per flag. A finite limit with allow_extra_args(false)
// keeps CLI11 from splitting bracketed values such as "[0,1]" at their commas.
inline constexpr int kMaxListValues = 4096;

// Makes `option` a list option: `--flag a b c`, repeatable, values kept verbatim.
inline CLI::Option* as_list(CLI::Option* option) {
  return option->expected(1, kMaxListValues)->allow_extra_args(false);
}

// A CLI11 validator that runs a vkgraphy parser on each value and turns its Error into
// CLI11's ValidationError. CLI11 names the option itself, so the parser's own
// "<option>" prefix is dropped from the message.
inline CLI::Validator checked_by(const std::string& option, const std::string& syntax,
                                 std::function<void(const std::string&)> parse) {
  return CLI::Validator(
      [option, parse](std::string& arg) -> std::string {
        try {
          parse(arg);
          return {};
        } catch (const Error& e) {
          std::string message = e.what();
          if (message.rfind(option, 0) == 0) {
            message.erase(0, option.size());
            message.erase(0, message.find_first_not_of(": "));
          }
          return message;
        }
      },
      syntax, syntax);
}

}  // namespace vkg
