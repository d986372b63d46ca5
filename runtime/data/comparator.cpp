#include "runtime/data/comparator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "runtime/core/logger.h"
#include "runtime/data/array_stats.h"

namespace vkg {

namespace {

using Outputs = std::vector<std::pair<std::string, const Tensor*>>;

constexpr double kDefaultTolerance = 1e-5;
constexpr double kDefaultQuantile = 0.99;
// Added to zeros of the second output before dividing (Polygraphy's EPSILON).
constexpr double kRelativeEpsilon = 2.220446049250313e-16;
constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();

// Nesting of the report, as Polygraphy's G_LOGGER.indent().
int g_indent = 0;
struct Indent {
  Indent() { ++g_indent; }
  ~Indent() { --g_indent; }
  Indent(const Indent&) = delete;
  Indent& operator=(const Indent&) = delete;
};
std::string ind() { return std::string(size_t(4 * g_indent), ' '); }

// Indents every line of a multi-line block.
std::string ind_block(const std::string& block) {
  std::string out = ind();
  for (char c : block) {
    out += c;
    if (c == '\n') out += ind();
  }
  return out;
}

std::string padded(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string name_list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s + "]";
}

template <class V> V value_for(const std::map<std::string, V>& values, const std::string& output, V fallback) {
  if (auto it = values.find(output); it != values.end()) return it->second;
  if (auto it = values.find(""); it != values.end()) return it->second;
  return fallback;
}

std::string describe(const Tensor& t) {
  return std::string("dtype=") + dtype_name(t.dtype()) + ", shape=" + python_tuple(t.shape());
}

// numpy computes float16/float32 differences in float32 (Polygraphy's cast_up),
// everything else here in float64.
bool in_float32(DType a, DType b) {
  auto small = [](DType d) { return d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16; };
  return small(a) && small(b);
}

bool exceeds(double diff, double tol, bool float32) {
  if (std::isnan(diff)) return true;
  return float32 ? float(diff) > float(tol) : diff > tol;
}

// Transposes `t` by `perm` (output axis i is input axis perm[i]).
Tensor permuted(const Tensor& t, const std::vector<size_t>& perm) {
  Shape shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) shape[i] = t.shape()[perm[i]];
  Tensor out(t.dtype(), shape);
  const auto in_strides = contiguous_strides(t.shape());
  const size_t elem = dtype_size(t.dtype());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < out.size(); ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += index[i] * in_strides[perm[i]];
    std::memcpy(out.raw() + size_t(flat) * elem, t.raw() + size_t(src) * elem, elem);
    for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
      if (++index[size_t(i)] < shape[size_t(i)]) break;
      index[size_t(i)] = 0;
    }
  }
  return out;
}

// Polygraphy's util.try_match_shape: reshape across ranks, permute within a
// rank, then reshape. nullopt if the element counts differ.
std::optional<Tensor> try_match_shape(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  if (num_elements(shape) != t.size()) return std::nullopt;
  Tensor out = t;
  if (t.shape().size() == shape.size()) {
    auto sorted_a = t.shape(), sorted_b = shape;
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    if (sorted_a == sorted_b) {
      std::vector<bool> used(shape.size(), false);
      std::vector<size_t> perm;
      for (int64_t d : shape) {
        for (size_t axis = 0; axis < used.size(); ++axis) {
          if (!used[axis] && t.shape()[axis] == d) {
            used[axis] = true;
            perm.push_back(axis);
            break;
          }
        }
      }
      out = permuted(t, perm);
      VKG_INFO(ind() << "Permuted array of shape: " << python_tuple(t.shape()) << " to: " << python_tuple(shape));
      return out;
    }
  }
  VKG_INFO(ind() << "Reshaped array from shape: " << python_tuple(t.shape()) << " to: " << python_tuple(shape));
  return out.reshaped(shape);
}

struct Errors {
  std::vector<double> abs, rel;
  bool float32 = false;
};

// Element errors of `a` against `b`; warns once per output of runner_b with zeros (runner_b "": never).
Errors compute_errors(const Tensor& a, const Tensor& b, bool infinities_equal, const std::string& runner_b,
                      const std::string& output_b) {
  Errors e;
  e.float32 = in_float32(a.dtype(), b.dtype());
  const bool both_bool = a.dtype() == DType::Bool && b.dtype() == DType::Bool;
  const bool b_floating = is_floating(b.dtype());
  const auto va = a.to_doubles();
  const auto vb = b.to_doubles();
  const double epsilon = e.float32 ? double(float(kRelativeEpsilon)) : kRelativeEpsilon;
  bool zeros = false;
  e.abs.resize(va.size());
  e.rel.resize(va.size());
  for (size_t i = 0; i < va.size(); ++i) {
    double absdiff = 0;
    if (both_bool) {
      absdiff = va[i] != vb[i] ? 1 : 0;
    } else if (e.float32) {
      absdiff = std::fabs(double(float(va[i]) - float(vb[i])));
    } else {
      absdiff = std::fabs(va[i] - vb[i]);
    }
    if (infinities_equal && std::isinf(va[i]) && va[i] == vb[i]) absdiff = 0;
    double denominator = std::fabs(vb[i]);
    if (b_floating && vb[i] == 0) {
      denominator = epsilon;
      zeros = true;
    }
    e.abs[i] = absdiff;
    e.rel[i] = e.float32 ? double(float(absdiff) / float(denominator)) : absdiff / denominator;
  }
  if (zeros && !runner_b.empty()) {
    static std::set<std::string> warned;  // once per output, like Polygraphy's LogMode.ONCE
    if (warned.insert(runner_b + "|" + output_b).second) {
      VKG_WARNING(ind() << padded(runner_b, 35) << " | Output: " << output_b
                        << ": Some values are 0. Will add a small epsilon quantity to these when computing relative "
                           "difference. Note that this may cause some relative differences to be extremely high.");
    }
  }
  return e;
}

ErrorMetrics metrics(const std::vector<double>& values, bool with_quantile, double q) {
  ErrorMetrics m;
  m.max = nan_max(values);
  m.mean = mean_of(values);
  m.median = median_of(values);
  m.quantile = with_quantile ? quantile_of(values, q) : kNotComputed;
  return m;
}

double stat_of(const ErrorMetrics& m, ErrorStat stat) {
  switch (stat) {
    case ErrorStat::Elemwise:
      return m.max;
    case ErrorStat::Max:
      return m.max;
    case ErrorStat::Mean:
      return m.mean;
    case ErrorStat::Median:
      return m.median;
    case ErrorStat::Quantile:
      return m.quantile;
  }
  return m.max;
}

// Logs "<label> | Stats: ..." and a histogram (at INFO when the check failed).
void log_stats(const std::string& label, const Tensor* t, const std::vector<double>& values, const Shape& shape,
               bool failed, double hist_lo, double hist_hi) {
  VKG_INFO(ind() << label << " | Stats: " << format_stats(compute_stats(values, shape)));
  if (t && t->dtype() == DType::Bool) return;  // Polygraphy shows no histogram for bools
  const std::string histogram = format_histogram(values, hist_lo, hist_hi);
  if (histogram.empty()) return;
  Indent indent;
  if (failed) {
    VKG_INFO(ind_block(histogram));
  } else {
    VKG_VERBOSE(ind_block(histogram));
  }
}

// Fills r's statistics and verdict from the element errors (r's tolerances and statistic already set).
// Returns whether the check failed.
bool evaluate(OutputComparison& r, const Errors& e) {
  const bool quantile = r.stat == ErrorStat::Quantile;
  r.absdiff = metrics(e.abs, quantile, r.quantile);
  r.reldiff = metrics(e.rel, quantile, r.quantile);
  r.elements = int64_t(e.abs.size());
  for (size_t i = 0; i < e.abs.size(); ++i) {
    if (exceeds(e.abs[i], r.atol, e.float32) && exceeds(e.rel[i], r.rtol, e.float32)) ++r.mismatched_elements;
  }
  r.required_atol = stat_of(r.absdiff, r.stat);
  r.required_rtol = stat_of(r.reldiff, r.stat);
  bool failed = false;
  if (r.stat == ErrorStat::Elemwise) {
    failed = r.mismatched_elements > 0;
  } else {
    failed = exceeds(r.required_atol, r.atol, e.float32) && exceeds(r.required_rtol, r.rtol, e.float32);
  }
  r.passed = !failed;
  return failed;
}

void compare_values(OutputComparison& r, const Tensor& a, const std::string& runner_a, const Tensor& b,
                    const std::string& runner_b, const std::string& name_b, const CompareOptions& options) {
  const Errors e = compute_errors(a, b, options.infinities_compare_equal, runner_b, name_b);
  const bool failed = evaluate(r, e);

  const auto va = a.to_doubles();
  const auto vb = b.to_doubles();
  const double lo = std::min(nan_min(va), nan_min(vb));
  const double hi = std::max(nan_max(va), nan_max(vb));
  log_stats(runner_a + ": " + r.name, &a, va, a.shape(), failed, lo, hi);
  log_stats(runner_b + ": " + name_b, &b, vb, b.shape(), failed, lo, hi);

  VKG_INFO(ind() << "Error Metrics: " << r.name);
  Indent indent;
  std::string msg = ind() + "Minimum Required Tolerance: " + error_stat_name(r.stat) +
                    " error | [abs=" + format_g5(r.required_atol) + "] OR [rel=" + format_g5(r.required_rtol) + "]";
  if (r.stat == ErrorStat::Elemwise) msg += " (requirements may be lower if both abs/rel tolerances are set)";
  VKG_INFO(msg);
  if (r.stat == ErrorStat::Elemwise && failed) {
    VKG_INFO(ind() << "Mismatched elements: " << r.mismatched_elements << " of " << r.elements << " ("
                   << format_g5(100.0 * double(r.mismatched_elements) / double(r.elements)) << "%)");
  }
  log_stats("Absolute Difference", nullptr, e.abs, a.shape(), failed, nan_min(e.abs), nan_max(e.abs));
  log_stats("Relative Difference", nullptr, e.rel, a.shape(), failed, nan_min(e.rel), nan_max(e.rel));
}

OutputComparison settings_for(const std::string& name, const CompareOptions& options) {
  OutputComparison r;
  r.name = name;
  r.atol = options.atol_for(name);
  r.rtol = options.rtol_for(name);
  r.stat = options.error_stat_for(name);
  r.quantile = options.error_quantile_for(name);
  return r;
}

OutputComparison compare_one(const std::string& name, const Tensor& a, const std::string& runner_a, const Tensor& b,
                             const std::string& runner_b, const CompareOptions& options) {
  OutputComparison r = settings_for(name, options);
  VKG_INFO(ind() << "Tolerance: [abs=" << format_g5(r.atol) << ", rel=" << format_g5(r.rtol) << "] | Checking "
                 << error_stat_name(r.stat) << " error");

  std::optional<Tensor> matched = b;
  if (a.shape() != b.shape()) {
    if (options.check_shapes) {
      r.failure = "shape mismatch: " + python_tuple(a.shape()) + " vs. " + python_tuple(b.shape());
      VKG_ERROR(ind() << "FAILED | Output: '" << name << "' | Will not compare outputs of different shapes.\n"
                      << "Note: Output shapes are " << python_tuple(a.shape()) << " and " << python_tuple(b.shape())
                      << ".\nNote: Use --no-shape-check to attempt to compare values anyway.");
      return r;
    }
    matched = try_match_shape(b, a.shape());
    if (!matched) {
      r.failure = "shapes cannot be matched: " + python_tuple(a.shape()) + " vs. " + python_tuple(b.shape());
      VKG_ERROR(ind() << "FAILED | Output: '" << name << "' | Cannot match shapes " << python_tuple(a.shape())
                      << " and " << python_tuple(b.shape()) << ": the element counts differ.");
      return r;
    }
  }
  compare_values(r, a, runner_a, *matched, runner_b, name, options);
  const std::string tolerances = "(rel=" + python_float_repr(r.rtol) + ", abs=" + python_float_repr(r.atol) + ")";
  if (r.passed) {
    VKG_FINISH(ind() << "PASSED | Output: '" << name << "' | Difference is within tolerance " << tolerances);
  } else {
    VKG_ERROR(ind() << "FAILED | Output: '" << name << "' | Difference exceeds tolerance " << tolerances);
  }
  return r;
}

void warn_unknown_names(const char* option, const std::vector<std::string>& keys, const Outputs& a, const Outputs& b) {
  std::vector<std::string> unknown;
  for (const auto& key : keys) {
    auto named = [&](const auto& entry) { return entry.first == key; };
    if (!key.empty() && std::none_of(a.begin(), a.end(), named) && std::none_of(b.begin(), b.end(), named)) {
      unknown.push_back(key);
    }
  }
  if (!unknown.empty()) VKG_WARNING(ind() << option << " names outputs that neither side has: " << name_list(unknown));
}

template <class V> std::vector<std::string> keys_of(const std::map<std::string, V>& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  return keys;
}

CompareResult compare(const std::string& runner_a, const Outputs& a, const std::string& runner_b, const Outputs& b,
                      const CompareOptions& options) {
  warn_unknown_names("--atol", keys_of(options.atol), a, b);
  warn_unknown_names("--rtol", keys_of(options.rtol), a, b);
  warn_unknown_names("--check-error-stat", keys_of(options.check_error_stat), a, b);
  warn_unknown_names("--error-quantile", keys_of(options.error_quantile), a, b);

  CompareResult result;
  std::vector<std::string> compared, mismatched;
  auto find_b = [&](const std::string& name) -> const Tensor* {
    for (const auto& [n, t] : b) {
      if (n == name) return t;
    }
    return nullptr;
  };
  for (const auto& [name, tensor_a] : a) {
    const Tensor* tensor_b = find_b(name);
    if (!tensor_b) {
      VKG_WARNING(ind() << "For output: '" << name << "' [" << runner_a << "], skipping: " << runner_b
                        << " has no output of that name");
      result.skipped.push_back(name);
      continue;
    }
    VKG_START(ind() << "Comparing Output: '" << name << "' (" << describe(*tensor_a) << ") with '" << name << "' ("
                    << describe(*tensor_b) << ")");
    Indent indent;
    result.per_output.push_back(compare_one(name, *tensor_a, runner_a, *tensor_b, runner_b, options));
    compared.push_back(name);
    if (!result.per_output.back().passed) {
      mismatched.push_back(name);
      if (options.fail_fast) break;
    }
  }
  for (const auto& [name, tensor_b] : b) {
    const bool in_a =
        std::any_of(a.begin(), a.end(), [&name = name](const auto& entry) { return entry.first == name; });
    if (!in_a) {
      VKG_WARNING(ind() << "For output: '" << name << "' [" << runner_b << "], skipping: " << runner_a
                        << " has no output of that name");
      result.skipped.push_back(name);
    }
  }

  if (compared.empty()) {
    std::vector<std::string> names_a, names_b;
    for (const auto& entry : a) names_a.push_back(entry.first);
    for (const auto& entry : b) names_b.push_back(entry.first);
    VKG_ERROR(ind() << "FAILED | No common outputs to compare. Note:\n"
                    << runner_a << " outputs: " << name_list(names_a) << "\n"
                    << runner_b << " outputs: " << name_list(names_b));
    result.passed = false;
    return result;
  }
  result.passed = mismatched.empty();
  if (result.passed) {
    VKG_FINISH(ind() << "PASSED | All outputs matched | Outputs: " << name_list(compared));
  } else {
    VKG_ERROR(ind() << "FAILED | Mismatched outputs: " << name_list(mismatched));
  }
  return result;
}

Outputs ordered(const TensorMap& map) {
  Outputs out;
  for (const auto& [name, tensor] : map) out.emplace_back(name, &tensor);
  return out;
}

Outputs ordered(const IterationResult& result) {
  Outputs out;
  for (const auto& [name, tensor] : result.outputs) out.emplace_back(name, &tensor);
  return out;
}

}  // namespace

const char* error_stat_name(ErrorStat stat) {
  switch (stat) {
    case ErrorStat::Elemwise:
      return "elemwise";
    case ErrorStat::Max:
      return "max";
    case ErrorStat::Mean:
      return "mean";
    case ErrorStat::Median:
      return "median";
    case ErrorStat::Quantile:
      return "quantile";
  }
  return "?";
}

std::optional<ErrorStat> parse_error_stat(std::string_view name) {
  for (ErrorStat s : {ErrorStat::Elemwise, ErrorStat::Max, ErrorStat::Mean, ErrorStat::Median, ErrorStat::Quantile}) {
    if (name == error_stat_name(s)) return s;
  }
  return std::nullopt;
}

double CompareOptions::atol_for(const std::string& output) const { return value_for(atol, output, kDefaultTolerance); }
double CompareOptions::rtol_for(const std::string& output) const { return value_for(rtol, output, kDefaultTolerance); }
ErrorStat CompareOptions::error_stat_for(const std::string& output) const {
  return value_for(check_error_stat, output, ErrorStat::Elemwise);
}
double CompareOptions::error_quantile_for(const std::string& output) const {
  return value_for(error_quantile, output, kDefaultQuantile);
}

CompareResult compare_outputs(const std::string& name_a, const TensorMap& a, const std::string& name_b,
                              const TensorMap& b, const CompareOptions& options) {
  return compare(name_a, ordered(a), name_b, ordered(b), options);
}

OutputComparison measure_output(const std::string& name, const Tensor& a, const Tensor& b,
                                const CompareOptions& options) {
  OutputComparison r = settings_for(name, options);
  if (a.shape() != b.shape()) {
    if (a.size() != b.size()) {
      r.failure = "shapes cannot be matched: " + python_tuple(a.shape()) + " vs. " + python_tuple(b.shape());
      return r;
    }
    evaluate(r, compute_errors(a, b.reshaped(a.shape()), options.infinities_compare_equal, "", name));
    return r;
  }
  evaluate(r, compute_errors(a, b, options.infinities_compare_equal, "", name));
  return r;
}

CompareResult compare_iteration(const IterationResult& a, const IterationResult& b, const CompareOptions& options) {
  return compare(a.runner_name, ordered(a), b.runner_name, ordered(b), options);
}

bool compare_accuracy(const RunResults& results, const CompareOptions& options, std::vector<PairComparison>* details) {
  if (results.runs.size() < 2) {
    VKG_WARNING("Accuracy comparison needs at least two sets of outputs; found " << results.runs.size());
    return true;
  }
  bool all_passed = true;
  const bool several_pairs = results.runs.size() > 2;
  for (size_t i = 0; i + 1 < results.runs.size(); ++i) {
    const auto& [name_a, iterations_a] = results.runs[i];
    const auto& [name_b, iterations_b] = results.runs[i + 1];
    VKG_START(ind() << "Accuracy Comparison | " << name_a << " vs. " << name_b);
    Indent indent;
    const size_t count = std::min(iterations_a.size(), iterations_b.size());
    size_t passed = 0;
    for (size_t k = 0; k < count; ++k) {
      CompareResult result;
      if (count > 1) {
        VKG_INFO(ind() << "Iteration: " << k);
        Indent iteration_indent;
        result = compare_iteration(iterations_a[k], iterations_b[k], options);
      } else {
        result = compare_iteration(iterations_a[k], iterations_b[k], options);
      }
      const bool ok = result.passed;
      if (details) details->push_back(PairComparison{name_a, name_b, k, std::move(result)});
      passed += ok ? 1 : 0;
      all_passed &= ok;
      if (!ok && options.fail_fast) return false;
    }
    if (count > 1 || several_pairs) {
      const double rate = count ? 100.0 * double(passed) / double(count) : 100.0;
      const std::string msg = "Accuracy Summary | " + name_a + " vs. " + name_b +
                              " | Passed: " + std::to_string(passed) + "/" + std::to_string(count) +
                              " iterations | Pass Rate: " + python_float_repr(rate) + "%";
      if (passed == count) {
        VKG_FINISH(ind() << msg);
      } else {
        VKG_ERROR(ind() << msg);
      }
    }
  }
  return all_passed;
}

bool validate_outputs(const std::string& runner, const TensorMap& outputs, const ValidateOptions& options) {
  VKG_START(ind() << "Output Validation | Runners: ['" << runner << "']");
  Indent indent;
  bool all_valid = true;
  for (const auto& [name, tensor] : outputs) {
    VKG_START(ind() << padded(runner, 35) << " | Validating output: " << name
                    << " (check_inf=" << (options.check_inf ? "True" : "False")
                    << ", check_nan=" << (options.check_nan ? "True" : "False") << ")");
    Indent output_indent;
    const auto values = tensor.to_doubles();
    VKG_INFO(ind() << format_stats(compute_stats(values, tensor.shape())));
    const auto nans = std::count_if(values.begin(), values.end(), [](double v) { return std::isnan(v); });
    const auto infs = std::count_if(values.begin(), values.end(), [](double v) { return std::isinf(v); });
    bool valid = true;
    if (options.check_nan && nans > 0) {
      VKG_ERROR(ind() << "NaN Detected | One or more NaNs were encountered in this output (" << nans << " of "
                      << values.size() << " elements)");
      valid = false;
    }
    if (options.check_inf && (infs > 0 || nans > 0)) {
      VKG_ERROR(ind() << "Inf Detected | One or more non-finite values were encountered in this output (" << nans + infs
                      << " of " << values.size() << " elements)");
      valid = false;
    }
    if (valid) {
      VKG_FINISH(ind() << "PASSED | Output: " << name << " is valid");
    } else {
      VKG_ERROR(ind() << "FAILED | Errors detected in output: " << name);
    }
    all_valid &= valid;
    if (!all_valid && options.fail_fast) break;
  }
  if (all_valid) {
    VKG_FINISH(ind() << "PASSED | Output Validation");
  } else {
    VKG_ERROR(ind() << "FAILED | Output Validation");
  }
  return all_valid;
}

}  // namespace vkg
