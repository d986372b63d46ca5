// Parsing of the per-tensor command-line values that the data loader and
// comparator options take, in Polygraphy's syntax:
//   --atol 1e-5 out0:1e-3        --val-range [0,1] input0:[-1,1]
//   --check-error-stat median y:max
// A value may be prefixed by "<tensor name>:"; without a name it is the default
// for all tensors (stored under the key ""). The name is everything before the
// last ':', so names that contain ':' work too. Every bad value is an Error
// that quotes the offending argument.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/data/comparator.h"

namespace vkg {

struct NamedValue {
  std::string name;  // "" when the argument has no "name:" prefix
  std::string value;
};

NamedValue split_named_value(std::string_view arg);

// A number: decimal or scientific, or inf, -inf, nan (any case).
double parse_number(std::string_view text, const std::string& option);

// "[min,max]" (or "(min,max)"), min <= max.
std::pair<double, double> parse_range(std::string_view text, const std::string& option);

// Lists of "[name:]value" arguments.
std::map<std::string, double> parse_tolerances(const std::vector<std::string>& args, const std::string& option);
std::map<std::string, double> parse_quantiles(const std::vector<std::string>& args, const std::string& option);
std::map<std::string, ErrorStat> parse_error_stats(const std::vector<std::string>& args, const std::string& option);
std::map<std::string, std::pair<double, double>> parse_value_ranges(const std::vector<std::string>& args,
                                                                    const std::string& option);

}  // namespace vkg
