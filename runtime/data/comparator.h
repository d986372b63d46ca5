// Output comparison and validation with the semantics and report of
// Polygraphy's CompareFunc.simple() and Comparator.validate():
//  - per-output absolute/relative tolerances (default 1e-5 each);
//  - the error statistic that is checked: every element ("elemwise": an element
//    fails only if it exceeds both tolerances), or the max, mean, median or a
//    quantile of the absolute and relative errors (fails only if both exceed);
//  - NaN anywhere in an error is a mismatch; matching infinities compare equal
//    only with infinities_compare_equal;
//  - relative error is |a - b| / |b|, with zeros of b replaced by 2.2e-16;
//  - only outputs present on both sides are compared (with a warning for the
//    others); no common output at all is a failure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/data/run_results.h"

namespace vkg {

enum class ErrorStat { Elemwise, Max, Mean, Median, Quantile };

const char* error_stat_name(ErrorStat stat);  // "elemwise", "max", ...
std::optional<ErrorStat> parse_error_stat(std::string_view name);

struct CompareOptions {
  // Per-output settings; the key "" sets the default for outputs not named.
  std::map<std::string, double> atol;                 // default 1e-5
  std::map<std::string, double> rtol;                 // default 1e-5
  std::map<std::string, ErrorStat> check_error_stat;  // default elemwise
  std::map<std::string, double> error_quantile;       // in [0, 1], default 0.99
  bool fail_fast = false;                             // stop at the first mismatching output
  bool infinities_compare_equal = false;              // equal +-inf give an error of 0 instead of NaN
  bool check_shapes = true;  // false: try to reshape/permute like Polygraphy's --no-shape-check

  double atol_for(const std::string& output) const;
  double rtol_for(const std::string& output) const;
  ErrorStat error_stat_for(const std::string& output) const;
  double error_quantile_for(const std::string& output) const;
};

// max / mean / median / quantile of an error (quantile only computed when checked; else NaN).
struct ErrorMetrics {
  double max = 0, mean = 0, median = 0, quantile = 0;
};

struct OutputComparison {
  std::string name;
  bool passed = false;
  std::string failure;  // set when values could not be compared (e.g. shape mismatch)
  double atol = 0, rtol = 0, quantile = 0;
  ErrorStat stat = ErrorStat::Elemwise;
  ErrorMetrics absdiff, reldiff;
  // Smallest tolerances that pass the checked statistic on their own.
  double required_atol = 0, required_rtol = 0;
  int64_t elements = 0, mismatched_elements = 0;  // element counts (elemwise check)
};

struct CompareResult {
  bool passed = false;
  std::vector<OutputComparison> per_output;  // in the order of the first side's outputs
  std::vector<std::string> skipped;          // outputs that only one side has
};

// Compares the outputs of runner `name_a` (the first side) with those of `name_b`,
// logging Polygraphy's report per output and an overall PASSED/FAILED line.
CompareResult compare_outputs(const std::string& name_a, const TensorMap& a, const std::string& name_b,
                              const TensorMap& b, const CompareOptions& options);
// The same for iteration results (keeps the runner's output order).
CompareResult compare_iteration(const IterationResult& a, const IterationResult& b, const CompareOptions& options);
// The comparison of one output of `a` with `b` without the report: the same
// statistics and verdict as compare_outputs, logging nothing (for callers that
// compare many tensors and keep only the numbers). Shapes with the same element
// count are compared element by element in row-major order; others fail with `failure` set.
OutputComparison measure_output(const std::string& name, const Tensor& a, const Tensor& b,
                                const CompareOptions& options);

// One comparison of compare_accuracy: runner_a against runner_b at one iteration.
struct PairComparison {
  std::string runner_a, runner_b;
  size_t iteration = 0;
  CompareResult result;
};

// Comparator.compare_accuracy: each runner against the next one, iteration by
// iteration (up to the shorter run), with a summary line per pair. True if every
// comparison passed; with fail_fast it stops at the first failed iteration.
// `details`, when given, receives every comparison made, in order.
bool compare_accuracy(const RunResults& results, const CompareOptions& options,
                      std::vector<PairComparison>* details = nullptr);

struct ValidateOptions {
  bool check_nan = true;
  bool check_inf = true;
  bool fail_fast = false;
};

// Comparator.validate (--validate): logs statistics of each output and fails on
// NaN and (by default) infinite values. True if all outputs are valid.
bool validate_outputs(const std::string& runner, const TensorMap& outputs, const ValidateOptions& options = {});

}  // namespace vkg
