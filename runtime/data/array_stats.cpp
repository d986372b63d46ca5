#include "runtime/data/array_stats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace vkg {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool any_nan(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); });
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
    const int64_t d = shape[size_t(i)];
    if (d > 0) {
      index[size_t(i)] = flat % d;
      flat /= d;
    }
  }
  return index;
}

// numpy's argmax/argmin: the first NaN wins, else the first extreme value.
int64_t arg_extreme(const std::vector<double>& values, bool want_max) {
  int64_t best = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) return int64_t(i);
    if (want_max ? values[i] > values[size_t(best)] : values[i] < values[size_t(best)]) best = int64_t(i);
  }
  return best;
}

std::string format_3g(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", value);
  return buf;
}

// Where numpy's linear quantile q of n values lies: between the values of ranks lo and hi.
struct QuantilePosition {
  size_t lo = 0, hi = 0;
  double t = 0;
};

QuantilePosition quantile_position(size_t n, double q) {
  const double pos = q * double(n - 1);
  QuantilePosition p;
  p.lo = size_t(std::floor(pos));
  p.hi = std::min(p.lo + 1, n - 1);
  p.t = pos - double(p.lo);
  return p;
}

double interpolate(double a, double b, double t) {
  if (a == b) return a;  // also keeps equal infinities finite-free of inf - inf
  // numpy's _lerp: interpolate from the nearer end.
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

// The values `values` would hold at `ranks` if sorted ascending, found by selection instead of
// a sort (the comparator's statistics run over every element of every output): one
// nth_element per rank, each over what the one before left above it. Reorders `values`.
std::vector<double> values_at_ranks(std::vector<double>& values, const std::vector<size_t>& ranks) {
  std::vector<size_t> order = ranks;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  auto from = values.begin();
  for (const size_t rank : order) {
    const auto nth = values.begin() + std::ptrdiff_t(rank);
    std::nth_element(from, nth, values.end());
    from = nth + 1;
  }
  std::vector<double> found;
  found.reserve(ranks.size());
  for (const size_t rank : ranks) found.push_back(values[rank]);
  return found;
}

}  // namespace

double nan_max(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return values[size_t(arg_extreme(values, true))];
}

double nan_min(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return values[size_t(arg_extreme(values, false))];
}

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

double sorted_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  if (std::isnan(sorted.back()) || std::isnan(sorted.front())) return kNaN;
  const QuantilePosition p = quantile_position(sorted.size(), q);
  return interpolate(sorted[p.lo], sorted[p.hi], p.t);
}

double quantile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  if (any_nan(values)) return kNaN;
  const QuantilePosition p = quantile_position(values.size(), q);
  const auto v = values_at_ranks(values, {p.lo, p.hi});
  return interpolate(v[0], v[1], p.t);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  if (any_nan(values)) return kNaN;
  const size_t n = values.size();
  const auto v = values_at_ranks(values, {(n - 1) / 2, n / 2});
  return n % 2 ? v[1] : (v[0] + v[1]) / 2;
}

ArrayStats compute_stats(const std::vector<double>& values, const Shape& shape) {
  ArrayStats s;
  if (values.empty()) return s;
  s.mean = mean_of(values);
  double sq = 0, magnitude = 0;
  for (double v : values) {
    sq += (v - s.mean) * (v - s.mean);
    magnitude += std::fabs(v);
  }
  s.var = sq / double(values.size());
  s.std_dev = std::sqrt(s.var);
  s.avg_magnitude = magnitude / double(values.size());
  const int64_t imin = arg_extreme(values, false);
  const int64_t imax = arg_extreme(values, true);
  s.min = values[size_t(imin)];
  s.max = values[size_t(imax)];
  s.argmin = unravel(imin, shape);
  s.argmax = unravel(imax, shape);
  if (any_nan(values)) {
    s.median = s.p90 = s.p95 = s.p99 = kNaN;
  } else {
    std::vector<double> copy = values;
    const size_t n = copy.size();
    const QuantilePosition p90 = quantile_position(n, 0.90), p95 = quantile_position(n, 0.95),
                           p99 = quantile_position(n, 0.99);
    const auto v = values_at_ranks(copy, {(n - 1) / 2, n / 2, p90.lo, p90.hi, p95.lo, p95.hi, p99.lo, p99.hi});
    s.median = n % 2 ? v[1] : (v[0] + v[1]) / 2;
    s.p90 = interpolate(v[2], v[3], p90.t);
    s.p95 = interpolate(v[4], v[5], p95.t);
    s.p99 = interpolate(v[6], v[7], p99.t);
  }
  return s;
}

std::string format_stats(const ArrayStats& s) {
  return "mean=" + format_g5(s.mean) + ", std-dev=" + format_g5(s.std_dev) + ", var=" + format_g5(s.var) +
         ", median=" + format_g5(s.median) + ", min=" + format_g5(s.min) + " at " + python_tuple(s.argmin) +
         ", max=" + format_g5(s.max) + " at " + python_tuple(s.argmax) +
         ", avg-magnitude=" + format_g5(s.avg_magnitude) + ", p90=" + format_g5(s.p90) + ", p95=" + format_g5(s.p95) +
         ", p99=" + format_g5(s.p99);
}

std::string format_histogram(const std::vector<double>& values, double lo, double hi) {
  constexpr int kBins = 10;
  constexpr int kMaxWidth = 40;
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return "";
  if (lo == hi) {  // numpy widens an empty range
    lo -= 0.5;
    hi += 0.5;
  }
  std::vector<double> edges(kBins + 1);
  for (int i = 0; i <= kBins; ++i) edges[size_t(i)] = lo + (hi - lo) * double(i) / kBins;
  edges[kBins] = hi;
  std::vector<int64_t> counts(kBins, 0);
  for (double v : values) {
    if (!(v >= lo && v <= hi)) continue;  // also skips NaN
    auto bin = int64_t((v - lo) * (kBins / (hi - lo)));
    bin = std::clamp<int64_t>(bin, 0, kBins - 1);
    if (v < edges[size_t(bin)]) --bin;  // numpy's correction for rounding near the edges
    if (bin < kBins - 1 && v >= edges[size_t(bin) + 1]) ++bin;
    ++counts[size_t(bin)];
  }
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  if (most == 0) return "";

  std::vector<std::string> labels;
  size_t start_width = 0, end_width = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    labels.push_back(format_3g(edges[i]));
    start_width = std::max(start_width, labels.back().size());
    if (i > 0) end_width = std::max(end_width, labels.back().size());
  }
  auto pad = [](std::string s, size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
  };
  std::string out = "---- Histogram ----\n";
  out += pad("Bin Range", start_width + end_width + 5) + "|  Num Elems | Visualization";
  for (int i = 0; i < kBins; ++i) {
    char count[32];
    std::snprintf(count, sizeof count, "%10lld", static_cast<long long>(counts[size_t(i)]));
    const auto bar = size_t(double(kMaxWidth) * double(counts[size_t(i)]) / double(most));
    out += "\n(" + pad(labels[size_t(i)], start_width) + ", " + pad(labels[size_t(i) + 1], end_width) + ") | " + count +
           " | " + std::string(bar, '#');
  }
  return out;
}

std::string format_g5(double value) {
  if (std::isnan(value)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5g", value);
  return buf;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |x| < 1e16.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(size_t(-exponent - 1), '0') + digits;
    } else if (size_t(exponent) + 1 >= digits.size()) {
      out = digits + std::string(size_t(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, size_t(exponent) + 1) + "." + digits.substr(size_t(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  }
  if (negative) out.insert(out.begin(), '-');
  return out;
}

std::string python_tuple(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace vkg
