#include "runtime/engine/tactic_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vkg {

double validation_error(const Tensor& got, const Tensor& expected) {
  constexpr double kInfinite = std::numeric_limits<double>::infinity();
  if (got.shape() != expected.shape()) return kInfinite;
  if (expected.size() == 0) return 0;
  const std::vector<double> a = got.to_doubles(), b = expected.to_doubles();
  if (!is_floating(expected.dtype())) {
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    return double(differ) / double(a.size());
  }
  double scale = 1e-6, worst = 0;
  for (double v : b)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i]) || std::isinf(b[i])) {
      if (!(std::isnan(a[i]) && std::isnan(b[i])) && a[i] != b[i]) return kInfinite;
      continue;
    }
    if (!std::isfinite(a[i])) return kInfinite;
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst / scale;
}

double validation_tolerance(Precision precision, DType dtype) {
  const bool half = precision == Precision::FP16;
  if (is_floating(dtype)) return half ? 3e-2 : 1e-3;
  return half ? 1e-2 : 0;
}

}  // namespace vkg
