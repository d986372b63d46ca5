// Statistics, histograms and number formatting for comparison reports, in the
// format of Polygraphy's comparator (numpy semantics: NaN propagates, the
// median averages the two middle values, quantiles interpolate linearly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace vkg {

struct ArrayStats {
  double mean = 0, std_dev = 0, var = 0, median = 0, min = 0, max = 0, avg_magnitude = 0;
  double p90 = 0, p95 = 0, p99 = 0;
  Shape argmin, argmax;  // multi-dimensional index of the first min / max
};

// Statistics of `values` (row-major elements of an array of `shape`). All zero when empty.
ArrayStats compute_stats(const std::vector<double>& values, const Shape& shape);

// "mean=0.5, std-dev=0.25, var=0.0625, median=0.5, min=0 at (0, 1), max=1 at (1, 0),
//  avg-magnitude=0.5, p90=0.9, p95=0.95, p99=0.99"
std::string format_stats(const ArrayStats& stats);

// Polygraphy's 10-bin histogram over [lo, hi] (one string, several lines), or ""
// when the range is not finite or there is nothing to count.
std::string format_histogram(const std::vector<double>& values, double lo, double hi);

// numpy's quantile (linear interpolation) of values sorted ascending; NaN if any is NaN.
double sorted_quantile(const std::vector<double>& sorted, double q);
// max / mean / median / q-quantile with numpy's NaN propagation; 0 when empty.
double nan_max(const std::vector<double>& values);
double nan_min(const std::vector<double>& values);
double mean_of(const std::vector<double>& values);
double quantile_of(std::vector<double> values, double q);
double median_of(std::vector<double> values);

// Python's format(x, ".5g") and repr(float): "1e-05", "0.001", "nan", "inf".
std::string format_g5(double value);
std::string python_float_repr(double value);
// Python's repr of a shape tuple: "()", "(3,)", "(1, 3)".
std::string python_tuple(const Shape& shape);

}  // namespace vkg
