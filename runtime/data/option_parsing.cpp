#include "runtime/data/option_parsing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "runtime/core/error.h"

namespace vkg {

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class V, class Parse> std::map<std::string, V> parse_list(const std::vector<std::string>& args, Parse parse) {
  std::map<std::string, V> out;
  for (const auto& arg : args) {
    const NamedValue nv = split_named_value(arg);
    out[nv.name] = parse(nv.value, arg);
  }
  return out;
}

}  // namespace

NamedValue split_named_value(std::string_view arg) {
  const size_t colon = arg.rfind(':');
  if (colon == std::string_view::npos) return {"", std::string(arg)};
  return {std::string(arg.substr(0, colon)), std::string(arg.substr(colon + 1))};
}

double parse_number(std::string_view text, const std::string& option) {
  const std::string t = trim(text);
  const std::string l = lower(t);
  if (l == "inf" || l == "+inf" || l == "infinity") return std::numeric_limits<double>::infinity();
  if (l == "-inf" || l == "-infinity") return -std::numeric_limits<double>::infinity();
  if (l == "nan") return std::numeric_limits<double>::quiet_NaN();
  const bool plausible = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  char* end = nullptr;
  const double v = plausible ? std::strtod(t.c_str(), &end) : 0.0;
  VKG_CHECK(plausible && end == t.c_str() + t.size(), option << ": '" << std::string(text) << "' is not a number");
  return v;
}

std::pair<double, double> parse_range(std::string_view text, const std::string& option) {
  const std::string t = trim(text);
  const bool bracketed =
      t.size() >= 2 && ((t.front() == '[' && t.back() == ']') || (t.front() == '(' && t.back() == ')'));
  const size_t comma = t.find(',');
  VKG_CHECK(bracketed && comma != std::string::npos && t.find(',', comma + 1) == std::string::npos,
            option << ": '" << std::string(text) << "' is not a range; expected [min,max]");
  const double lo = parse_number(std::string_view(t).substr(1, comma - 1), option);
  const double hi = parse_number(std::string_view(t).substr(comma + 1, t.size() - comma - 2), option);
  VKG_CHECK(!(lo > hi), option << ": range '" << std::string(text) << "' has its minimum above its maximum");
  return {lo, hi};
}

std::map<std::string, double> parse_tolerances(const std::vector<std::string>& args, const std::string& option) {
  return parse_list<double>(args, [&](const std::string& value, const std::string& arg) {
    const double v = parse_number(value, option + " '" + arg + "'");
    VKG_CHECK(v >= 0, option << ": tolerance in '" << arg << "' must be a non-negative number");
    return v;
  });
}

std::map<std::string, double> parse_quantiles(const std::vector<std::string>& args, const std::string& option) {
  return parse_list<double>(args, [&](const std::string& value, const std::string& arg) {
    const double v = parse_number(value, option + " '" + arg + "'");
    VKG_CHECK(v >= 0 && v <= 1, option << ": quantile in '" << arg << "' must be between 0 and 1");
    return v;
  });
}

std::map<std::string, ErrorStat> parse_error_stats(const std::vector<std::string>& args, const std::string& option) {
  return parse_list<ErrorStat>(args, [&](const std::string& value, const std::string& arg) {
    const auto stat = parse_error_stat(trim(value));
    VKG_CHECK(stat, option << ": '" << arg
                           << "' names no error statistic; choose from elemwise, max, mean, median, quantile");
    return *stat;
  });
}

std::map<std::string, std::pair<double, double>> parse_value_ranges(const std::vector<std::string>& args,
                                                                    const std::string& option) {
  return parse_list<std::pair<double, double>>(args, [&](const std::string& value, const std::string& arg) {
    return parse_range(value, option + " '" + arg + "'");
  });
}

}  // namespace vkg
