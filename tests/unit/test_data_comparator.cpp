#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/data/array_stats.h"
#include "runtime/data/comparator.h"
#include "test_data_util.h"

namespace vkg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

TensorMap one(const std::string& name, Tensor t) {
  TensorMap m;
  m.emplace(name, std::move(t));
  return m;
}

Tensor floats(std::vector<float> v) {
  const auto n = int64_t(v.size());
  return Tensor::from_vector<float>({n}, v);
}

CompareResult compare(const Tensor& a, const Tensor& b, const CompareOptions& options = {}) {
  return compare_outputs("runner-a", one("y", a), "runner-b", one("y", b), options);
}

// Captures what the comparison logs.
std::string report(const Tensor& a, const Tensor& b, const CompareOptions& options = {}) {
  testing::internal::CaptureStdout();
  compare(a, b, options);
  return testing::internal::GetCapturedStdout();
}

TEST(DataComparator, IdenticalOutputsPass) {
  const auto r = compare(floats({1, 2, 3}), floats({1, 2, 3}));
  EXPECT_TRUE(r.passed);
  ASSERT_EQ(r.per_output.size(), 1u);
  EXPECT_EQ(r.per_output[0].required_atol, 0);
  EXPECT_EQ(r.per_output[0].required_rtol, 0);
  EXPECT_DOUBLE_EQ(r.per_output[0].atol, 1e-5);
  EXPECT_EQ(r.per_output[0].stat, ErrorStat::Elemwise);
}

TEST(DataComparator, ElemwiseFailsOnlyWhenBothTolerancesAreExceeded) {
  CompareOptions options;
  options.atol[""] = 0.1;
  options.rtol[""] = 0.0;
  EXPECT_TRUE(compare(floats({1.0f, 100.0f}), floats({1.05f, 100.0f}), options).passed);
  EXPECT_FALSE(compare(floats({1.0f, 100.0f}), floats({1.2f, 100.0f}), options).passed);
  options.rtol[""] = 0.25;  // 0.2 / 1.2 < 0.25: the relative check saves it
  EXPECT_TRUE(compare(floats({1.0f}), floats({1.2f}), options).passed);
  options.rtol[""] = 0.1;
  const auto r = compare(floats({1.0f, 2.0f, 3.0f, 4.0f}), floats({1.0f, 2.0f, 3.0f, 5.0f}), options);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.per_output[0].mismatched_elements, 1);
  EXPECT_DOUBLE_EQ(r.per_output[0].required_atol, 1.0);
  EXPECT_NEAR(r.per_output[0].required_rtol, 0.2, 1e-7);
}

TEST(DataComparator, PerOutputSettingsOverrideTheDefault) {
  CompareOptions options;
  options.atol[""] = 1e-3;
  options.atol["loose"] = 1.0;
  options.rtol[""] = 0;
  TensorMap a, b;
  a.emplace("loose", floats({0}));
  b.emplace("loose", floats({0.5f}));
  a.emplace("tight", floats({0}));
  b.emplace("tight", floats({0.5f}));
  const auto r = compare_outputs("a", a, "b", b, options);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.per_output.size(), 2u);
  EXPECT_TRUE(r.per_output[0].passed);   // "loose"
  EXPECT_FALSE(r.per_output[1].passed);  // "tight"
  EXPECT_DOUBLE_EQ(r.per_output[0].atol, 1.0);
  EXPECT_DOUBLE_EQ(r.per_output[1].atol, 1e-3);
}

TEST(DataComparator, ChecksTheChosenErrorStatistic) {
  // Errors 0, 0, 0, 10: max 10, mean 2.5, median 0, 0.5-quantile 0.
  const Tensor a = floats({0, 0, 0, 0});
  const Tensor b = floats({0, 0, 0, 10});
  CompareOptions options;
  options.atol[""] = 3;
  options.rtol[""] = 0;
  options.check_error_stat[""] = ErrorStat::Max;
  EXPECT_FALSE(compare(a, b, options).passed);
  options.check_error_stat[""] = ErrorStat::Mean;
  EXPECT_TRUE(compare(a, b, options).passed);
  EXPECT_DOUBLE_EQ(compare(a, b, options).per_output[0].required_atol, 2.5);
  options.check_error_stat[""] = ErrorStat::Median;
  EXPECT_EQ(compare(a, b, options).per_output[0].required_atol, 0);
  options.check_error_stat[""] = ErrorStat::Quantile;
  options.error_quantile[""] = 0.99;
  const auto q = compare(a, b, options);
  EXPECT_FALSE(q.passed);
  EXPECT_NEAR(q.per_output[0].absdiff.quantile, 9.7, 1e-9);  // numpy.quantile([0, 0, 0, 10], 0.99)
  options.error_quantile["y"] = 0.5;
  EXPECT_TRUE(compare(a, b, options).passed);
}

TEST(DataComparator, NaNIsAlwaysAMismatch) {
  CompareOptions options;
  options.atol[""] = 1e9;
  EXPECT_FALSE(compare(floats({NAN}), floats({1}), options).passed);
  EXPECT_FALSE(compare(floats({NAN}), floats({NAN}), options).passed);
  options.check_error_stat[""] = ErrorStat::Mean;
  EXPECT_FALSE(compare(floats({NAN, 1}), floats({1, 1}), options).passed);
}

TEST(DataComparator, InfinitiesCompareEqualOnlyWhenAsked) {
  EXPECT_FALSE(compare(floats({kInfF, 1}), floats({kInfF, 1})).passed);
  CompareOptions options;
  options.infinities_compare_equal = true;
  EXPECT_TRUE(compare(floats({kInfF, -kInfF}), floats({kInfF, -kInfF}), options).passed);
  EXPECT_FALSE(compare(floats({kInfF}), floats({-kInfF}), options).passed);
}

TEST(DataComparator, ZerosInTheSecondOutputGetAnEpsilon) {
  CompareOptions options;
  options.atol[""] = 0;
  const auto r = compare(floats({1e-20f}), floats({0}), options);
  EXPECT_TRUE(std::isfinite(r.per_output[0].reldiff.max));
  EXPECT_NEAR(r.per_output[0].reldiff.max, 1e-20 / 2.220446049250313e-16, 1e-8);
}

TEST(DataComparator, ComparesIntegersAndBoolsWithoutWrapAround) {
  CompareOptions options;
  options.atol[""] = 0;
  options.rtol[""] = 0;
  const auto r = compare(Tensor::from_vector<uint8_t>({1}, {0}), Tensor::from_vector<uint8_t>({1}, {255}), options);
  EXPECT_DOUBLE_EQ(r.per_output[0].absdiff.max, 255);
  EXPECT_TRUE(
      compare(Tensor::from_vector<int64_t>({2}, {5, -3}), Tensor::from_vector<int64_t>({2}, {5, -3}), options).passed);
  EXPECT_TRUE(
      compare(Tensor::from_vector<bool>({2}, {true, false}), Tensor::from_vector<bool>({2}, {true, false}), options)
          .passed);
  EXPECT_FALSE(
      compare(Tensor::from_vector<bool>({2}, {true, false}), Tensor::from_vector<bool>({2}, {false, false}), options)
          .passed);
  EXPECT_TRUE(
      compare(Tensor::from_vector<Half>({1}, {Half(1.0f)}), Tensor::from_vector<Half>({1}, {Half(1.0f)}), options)
          .passed);
}

TEST(DataComparator, ShapeMismatchesFailUnlessShapeCheckIsOff) {
  const Tensor a = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  const Tensor b = Tensor::from_vector<float>({3}, {1, 2, 3});
  const auto strict = compare(a, b);
  EXPECT_FALSE(strict.passed);
  EXPECT_NE(strict.per_output[0].failure.find("shape mismatch"), std::string::npos);
  CompareOptions loose;
  loose.check_shapes = false;
  EXPECT_TRUE(compare(a, b, loose).passed);
  // Same rank, permuted dims: transposed before comparing.
  const Tensor c = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor d = Tensor::from_vector<float>({3, 2}, {1, 4, 2, 5, 3, 6});
  EXPECT_TRUE(compare(c, d, loose).passed);
  EXPECT_FALSE(compare(c, Tensor::from_vector<float>({4}, {1, 2, 3, 4}), loose).passed);
}

TEST(DataComparator, ComparesOnlyCommonOutputs) {
  TensorMap a, b;
  a.emplace("y", floats({1}));
  a.emplace("only_a", floats({1}));
  b.emplace("y", floats({1}));
  b.emplace("only_b", floats({1}));
  const auto r = compare_outputs("a", a, "b", b, {});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.per_output.size(), 1u);
  EXPECT_EQ(r.skipped, (std::vector<std::string>{"only_a", "only_b"}));
  EXPECT_FALSE(compare_outputs("a", one("p", floats({1})), "b", one("q", floats({1})), {}).passed);
  EXPECT_FALSE(compare_outputs("a", {}, "b", {}, {}).passed);
}

TEST(DataComparator, FailFastStopsAtTheFirstMismatch) {
  TensorMap a, b;
  for (const char* name : {"o1", "o2", "o3"}) {
    a.emplace(name, floats({0}));
    b.emplace(name, floats({1}));
  }
  CompareOptions options;
  EXPECT_EQ(compare_outputs("a", a, "b", b, options).per_output.size(), 3u);
  options.fail_fast = true;
  EXPECT_EQ(compare_outputs("a", a, "b", b, options).per_output.size(), 1u);
}

TEST(DataComparator, ReportsLikePolygraphy) {
  const std::string pass = report(floats({1, 2}), floats({1, 2}));
  EXPECT_NE(pass.find("[I] Comparing Output: 'y' (dtype=float32, shape=(2,)) with 'y' (dtype=float32, shape=(2,))"),
            std::string::npos)
      << pass;
  EXPECT_NE(pass.find("    Tolerance: [abs=1e-05, rel=1e-05] | Checking elemwise error"), std::string::npos) << pass;
  EXPECT_NE(pass.find("runner-a: y | Stats: mean=1.5, std-dev=0.5, var=0.25, median=1.5, min=1 at (0,), max=2 at "
                      "(1,), avg-magnitude=1.5, p90=1.9, p95=1.95, p99=1.99"),
            std::string::npos)
      << pass;
  EXPECT_NE(pass.find("Minimum Required Tolerance: elemwise error | [abs=0] OR [rel=0]"), std::string::npos) << pass;
  EXPECT_NE(pass.find("Absolute Difference | Stats: mean=0"), std::string::npos) << pass;
  EXPECT_NE(pass.find("PASSED | Output: 'y' | Difference is within tolerance (rel=1e-05, abs=1e-05)"),
            std::string::npos)
      << pass;
  EXPECT_NE(pass.find("PASSED | All outputs matched | Outputs: ['y']"), std::string::npos) << pass;

  const std::string fail = report(floats({0, 1}), floats({0, 2}));
  EXPECT_NE(fail.find("[E]     FAILED | Output: 'y' | Difference exceeds tolerance (rel=1e-05, abs=1e-05)"),
            std::string::npos)
      << fail;
  EXPECT_NE(fail.find("[E] FAILED | Mismatched outputs: ['y']"), std::string::npos) << fail;
  EXPECT_NE(fail.find("---- Histogram ----"), std::string::npos) << fail;  // shown on failure
  EXPECT_NE(fail.find("Mismatched elements: 1 of 2 (50%)"), std::string::npos) << fail;
}

TEST(DataComparator, CompareAccuracyComparesConsecutiveRuns) {
  auto run = [](const std::string& name, float value, int iterations) {
    std::vector<IterationResult> its;
    for (int i = 0; i < iterations; ++i) {
      IterationResult it;
      it.runner_name = name;
      it.outputs.emplace_back("y", floats({value}));
      its.push_back(it);
    }
    return std::pair{name, its};
  };
  RunResults same;
  same.runs = {run("a", 1, 2), run("b", 1, 2)};
  testing::internal::CaptureStdout();
  std::vector<PairComparison> details;
  EXPECT_TRUE(compare_accuracy(same, {}, &details));
  ASSERT_EQ(details.size(), 2u);  // a vs. b, iterations 0 and 1
  EXPECT_EQ(details[1].runner_a, "a");
  EXPECT_EQ(details[1].runner_b, "b");
  EXPECT_EQ(details[1].iteration, 1u);
  ASSERT_EQ(details[1].result.per_output.size(), 1u);
  EXPECT_EQ(details[1].result.per_output[0].name, "y");
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("Accuracy Summary | a vs. b | Passed: 2/2 iterations | Pass Rate: 100.0%"), std::string::npos)
      << out;
  RunResults different;
  different.runs = {run("a", 1, 1), run("b", 1, 1), run("c", 2, 1)};
  EXPECT_FALSE(compare_accuracy(different, {}));
}

TEST(DataComparator, ValidateFindsNaNsAndInfinities) {
  EXPECT_TRUE(validate_outputs("r", one("y", floats({1, 2}))));
  EXPECT_FALSE(validate_outputs("r", one("y", floats({1, NAN}))));
  EXPECT_FALSE(validate_outputs("r", one("y", floats({kInfF}))));
  ValidateOptions nan_only;
  nan_only.check_inf = false;
  EXPECT_TRUE(validate_outputs("r", one("y", floats({kInfF})), nan_only));
  EXPECT_TRUE(validate_outputs("r", one("i", Tensor::from_vector<int32_t>({1}, {3}))));
}

TEST(DataArrayStats, FollowsNumpy) {
  const auto s = compute_stats({3, 1, 4, 1, 5}, {5});
  EXPECT_DOUBLE_EQ(s.mean, 2.8);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_EQ(s.argmin, (Shape{1}));
  EXPECT_EQ(s.argmax, (Shape{4}));
  EXPECT_DOUBLE_EQ(s.p90, 4.6);  // numpy.quantile([3, 1, 4, 1, 5], 0.9)
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median_of({1, kNaN})));
  EXPECT_TRUE(std::isnan(nan_max({1, kNaN, 3})));
  EXPECT_EQ(compute_stats({5, 6}, {1, 2}).argmin, (Shape{0, 0}));
}

// The statistics select their ranks instead of sorting: the same values as from a sorted copy,
// for every length (odd, even, one) and with many equal values.
TEST(DataArrayStats, SelectsTheRanksASortWouldGive) {
  std::mt19937 rng(7);
  for (const size_t n : {size_t(1), size_t(2), size_t(3), size_t(10), size_t(101), size_t(1000)}) {
    for (const int distinct : {3, 1000000}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " distinct=" + std::to_string(distinct));
      std::vector<double> values(n);
      for (double& v : values) v = double(std::uniform_int_distribution<int>(0, distinct - 1)(rng)) * 0.25;
      std::vector<double> sorted = values;
      std::sort(sorted.begin(), sorted.end());
      const auto s = compute_stats(values, {int64_t(n)});
      EXPECT_EQ(s.median, n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
      EXPECT_EQ(s.median, median_of(values));
      EXPECT_EQ(s.p90, sorted_quantile(sorted, 0.90));
      EXPECT_EQ(s.p95, sorted_quantile(sorted, 0.95));
      EXPECT_EQ(s.p99, sorted_quantile(sorted, 0.99));
      for (const double q : {0.0, 0.3, 0.5, 0.99, 1.0}) EXPECT_EQ(quantile_of(values, q), sorted_quantile(sorted, q));
    }
  }
}

TEST(DataArrayStats, FormatsNumbersLikePython) {
  EXPECT_EQ(format_g5(1e-5), "1e-05");
  EXPECT_EQ(format_g5(0.123456789), "0.12346");
  EXPECT_EQ(format_g5(kNaN), "nan");
  EXPECT_EQ(format_g5(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(100000.0), "100000.0");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(123.456), "123.456");
  EXPECT_EQ(python_float_repr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_tuple({}), "()");
  EXPECT_EQ(python_tuple({3}), "(3,)");
  EXPECT_EQ(python_tuple({1, 2}), "(1, 2)");
}

TEST(DataArrayStats, DrawsPolygraphysHistogram) {
  const std::string h = format_histogram({0, 0, 1, 2}, 0, 2);
  EXPECT_EQ(h,
            "---- Histogram ----\n"
            "Bin Range  |  Num Elems | Visualization\n"
            "(0  , 0.2) |          2 | ########################################\n"
            "(0.2, 0.4) |          0 | \n"
            "(0.4, 0.6) |          0 | \n"
            "(0.6, 0.8) |          0 | \n"
            "(0.8, 1  ) |          0 | \n"
            "(1  , 1.2) |          1 | ####################\n"
            "(1.2, 1.4) |          0 | \n"
            "(1.4, 1.6) |          0 | \n"
            "(1.6, 1.8) |          0 | \n"
            "(1.8, 2  ) |          1 | ####################");
  EXPECT_EQ(format_histogram({1, kNaN}, kNaN, 1), "");
}

}  // namespace
}  // namespace vkg
