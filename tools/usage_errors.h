// Messages for command-line mistakes that name the word at fault and the
// closest valid one, where CLI11 says only "A subcommand is required" or
// "The following arguments were not expected: ...".
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vkg::tools {

// The candidate closest to `word` by edit distance, when it is close enough to
// be a likely misspelling (at most a third of the word's letters, and at least
// one, differ; or one is a prefix of the other); "" otherwise.
std::string closest_word(const std::string& word, const std::vector<std::string>& candidates);

// After `app.parse` threw `e` (an error, not --help): logs it as an [E] line
// naming the (sub)command, and more helpfully for an unknown tool or
// subcommand, an unknown option (with the closest valid one), or a required
// option that was given after --check (where it became part of the check
// command). Returns true when it logged (always, today).
bool explain_usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args,
                         const std::vector<std::string>& check_command);

}  // namespace vkg::tools
