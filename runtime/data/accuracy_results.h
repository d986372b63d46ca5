// Polygraphy's accuracy results file (`run --save-accuracy-results`, `check accuracy`): for each
// comparison, each pair of runners and each iteration, every output's error statistics and the
// tolerances they were checked against, so that a run's verdict can be checked again against other
// tolerances without running anything:
//   {"lst": [{"lst": [[[runner_a, runner_b], [{output: OutputCompareResult | false}, ...]], ...],
//             "aggregation": "per_sample" | "average", "polygraphy_class": "AccuracyResult"}, ...],
//    "polygraphy_class": "AccuracyResults"}
// An OutputCompareResult holds {max,mean,median,quantile}_{absdiff,reldiff} (quantile null unless it
// was the checked statistic), "thresholds" {check_error_stat, atol, rtol} and "passed" (the stored
// verdict of the elemwise check, whose per-element verdict no statistic gives; null otherwise). A
// bare false is an output that could not be compared (shapes). vkgraphy compares with Polygraphy's
// `simple` function only: files of its other functions (l2, psnr, ...) are refused by name.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/data/comparator.h"

namespace vkg {

struct SimpleThreshold {
  ErrorStat stat = ErrorStat::Elemwise;
  double atol = 1e-5, rtol = 1e-5;
};

struct OutputAccuracy {
  bool comparable = true;  // false: nothing to check (stored as a bare false)
  // Indexed by statistic: max, mean, median, quantile (ErrorStat minus one). NaN is a mismatch.
  std::array<std::optional<double>, 4> absdiff, reldiff;
  SimpleThreshold threshold;
  std::optional<bool> stored_passed;  // the elemwise verdict

  bool passed() const;
};

struct RunnerPairAccuracy {
  std::string runner_a, runner_b;
  std::vector<std::vector<std::pair<std::string, OutputAccuracy>>> iterations;  // outputs in order
};

struct AccuracyResult {
  bool average = false;  // "average": each output's statistics averaged over iterations are checked
  std::vector<RunnerPairAccuracy> pairs;

  // Per output, the statistics averaged over the pair's iterations (NaN stays NaN). Throws Error for
  // an output that could not be compared in some iteration.
  std::vector<std::pair<std::string, OutputAccuracy>> averaged(const RunnerPairAccuracy& pair) const;
  bool passed() const;
};

using AccuracyResults = std::vector<AccuracyResult>;

// The results of a run's comparisons (compare_accuracy's details), one AccuracyResult.
AccuracyResults accuracy_results_of(const std::vector<PairComparison>& comparisons);

// Checks every stored output against `options` (per output: tolerances and statistic), averaged
// over iterations when `average`. Throws Error for the elemwise statistic (not in a file), a
// statistic the file lacks (quantile unless it was checked), or an output with nothing to check.
void rethreshold(AccuracyResults& results, const CompareOptions& options, bool average);

// Logs Polygraphy's summary: per pair, iterations passed (or, averaged, each output's line).
void log_accuracy_summary(const AccuracyResults& results);

AccuracyResults load_accuracy_results(const std::string& path);
// Written whole or not at all.
void save_accuracy_results(const std::string& path, const AccuracyResults& results);

}  // namespace vkg
