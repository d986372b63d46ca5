#include "tools/usage_errors.h"

#include <algorithm>

#include "runtime/core/logger.h"

namespace vkg::tools {

namespace {

// Edit distance counting a swap of two neighbouring letters as one edit ("rnu" -> "run").
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The subcommands (by name) the user can type under `app`; option groups are nameless.
std::vector<const CLI::App*> named_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    out.push_back(sub);
  return out;
}

// The deepest subcommand the parser entered ("vkgraphy debug precision").
const CLI::App& deepest_parsed(const CLI::App& app) {
  for (const CLI::App* sub : named_subcommands(app))
    if (sub->parsed()) return deepest_parsed(*sub);
  return app;
}

// "vkgraphy debug precision"
std::string path_of(const CLI::App& app) {
  const std::string name = app.get_name();
  return app.get_parent() ? path_of(*app.get_parent()) + " " + name : std::string("vkgraphy");
}

// Every long option `app` takes: its own, its option groups', and (with
// fallthrough) those of the apps above it.
void collect_options(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& name : o->get_lnames()) out.push_back("--" + name);
  for (const CLI::App* group : app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
    collect_options(*group, out);
}

std::vector<std::string> options_of(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* a = &app; a; a = a->get_parent()) {
    collect_options(*a, out);
    if (!a->get_fallthrough()) break;
  }
  return out;
}

std::string suggestion(const std::string& best) { return best.empty() ? "" : "; did you mean '" + best + "'?"; }

bool unknown_subcommand(const CLI::App& where, const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::App* sub : named_subcommands(where)) names.push_back(sub->get_name());
  if (names.empty()) return false;
  // The words after the subcommand's own name that are no option: the first
  // close to a valid name, else the first at all.
  std::vector<std::string> words;
  bool after = where.get_parent() == nullptr;
  for (const std::string& a : args) {
    if (!after) {
      after = a == where.get_name();
      continue;
    }
    if (!a.empty() && a[0] != '-') words.push_back(a);
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string kind = where.get_parent() ? "subcommand of '" + path_of(where) + "'" : "vkgraphy tool";
  if (words.empty()) {
    VKG_ERROR(path_of(where) << " needs a subcommand: " << list);
    return true;
  }
  std::string word = words.front(), best;
  for (const std::string& w : words) {
    best = closest_word(w, names);
    if (!best.empty()) {
      word = w;
      break;
    }
  }
  VKG_ERROR("'" << word << "' is not a " << kind << suggestion(best) << " (choose from: " << list << ")");
  return true;
}

}  // namespace

std::string closest_word(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const std::string& c : candidates) {
    const bool prefix = word.size() >= 3 && (c.rfind(word, 0) == 0 || word.rfind(c, 0) == 0);
    const size_t d = prefix ? 1 : edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const size_t limit = std::max<size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_distance <= limit ? best : "";
}

bool explain_usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args,
                         const std::vector<std::string>& check_command) {
  const CLI::App& where = deepest_parsed(app);
  const std::vector<const CLI::App*> subcommands = named_subcommands(where);
  const std::vector<std::string> extras = app.remaining(true);
  auto is_option = [](const std::string& word) { return word.rfind('-', 0) == 0; };
  const bool unknown_options = std::any_of(extras.begin(), extras.end(), is_option);
  const bool required = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
  if (required && !unknown_options) {
    if (where.get_require_subcommand_min() > 0 && !subcommands.empty()) return unknown_subcommand(where, args);
    // "--until is required" when --until was written after --check, inside the check command.
    const std::string message = e.what();
    for (const std::string& option : options_of(where)) {
      if (message.find(option + " is required") == std::string::npos) continue;
      if (std::find(check_command.begin(), check_command.end(), option) == check_command.end()) continue;
      VKG_ERROR(option << " is required, and it appears after --check, where everything is part of the check "
                          "command: put "
                       << option << " (and every option of " << path_of(where) << ") before --check");
      return true;
    }
  }
  // An unknown option is the likelier cause of a missing required one (--untill for --until).
  if (dynamic_cast<const CLI::ExtrasError*>(&e) || (required && unknown_options)) {
    const std::vector<std::string> valid = options_of(where);
    bool explained = false;
    for (const std::string& extra : extras) {
      if (!is_option(extra)) continue;
      const std::string flag = extra.substr(0, extra.find('='));
      VKG_ERROR(path_of(where) << ": unknown option '" << flag << "'" << suggestion(closest_word(flag, valid))
                               << " (see " << path_of(where) << " --help)");
      explained = true;
    }
    if (explained) return true;
    if (!extras.empty() && !subcommands.empty()) return unknown_subcommand(where, args);
    std::string list;
    for (const std::string& x : extras) list += (list.empty() ? "'" : ", '") + x + "'";
    VKG_ERROR(path_of(where) << ": unexpected argument(s) " << list << " (see " << path_of(where) << " --help)");
    return true;
  }
  VKG_ERROR(path_of(where) << ": " << e.what() << " (see " << path_of(where) << " --help)");
  return true;
}

}  // namespace vkg::tools
