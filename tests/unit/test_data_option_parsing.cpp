#include <gtest/gtest.h>

#include <cmath>

#include "runtime/data/option_parsing.h"
#include "test_data_util.h"

namespace vkg {
namespace {

TEST(DataOptionParsing, SplitsOnTheLastColon) {
  EXPECT_EQ(split_named_value("1e-3").name, "");
  EXPECT_EQ(split_named_value("out:1e-3").name, "out");
  EXPECT_EQ(split_named_value("out:1e-3").value, "1e-3");
  EXPECT_EQ(split_named_value("scope:out:0:[0,1]").name, "scope:out:0");
  EXPECT_EQ(split_named_value("scope:out:0:[0,1]").value, "[0,1]");
}

TEST(DataOptionParsing, ParsesNumbers) {
  EXPECT_DOUBLE_EQ(parse_number("1e-5", "--atol"), 1e-5);
  EXPECT_DOUBLE_EQ(parse_number(" -2.5 ", "--atol"), -2.5);
  EXPECT_TRUE(std::isinf(parse_number("inf", "--atol")));
  EXPECT_LT(parse_number("-INF", "--atol"), 0);
  EXPECT_TRUE(std::isnan(parse_number("nan", "--atol")));
  EXPECT_ERROR_CONTAINS(parse_number("abc", "--atol"), "--atol: 'abc' is not a number");
  EXPECT_ERROR_CONTAINS(parse_number("1e-5x", "--atol"), "'1e-5x' is not a number");
  EXPECT_ERROR_CONTAINS(parse_number("", "--atol"), "'' is not a number");
}

TEST(DataOptionParsing, ParsesRanges) {
  EXPECT_EQ(parse_range("[0,1]", "--val-range"), (std::pair<double, double>{0, 1}));
  EXPECT_EQ(parse_range("(-5, 5)", "--val-range"), (std::pair<double, double>{-5, 5}));
  EXPECT_TRUE(std::isinf(parse_range("[-inf,inf]", "--val-range").first));
  EXPECT_ERROR_CONTAINS(parse_range("0,1", "--val-range"), "'0,1' is not a range; expected [min,max]");
  EXPECT_ERROR_CONTAINS(parse_range("[0,1,2]", "--val-range"), "is not a range");
  EXPECT_ERROR_CONTAINS(parse_range("[2,1]", "--val-range"), "minimum above its maximum");
  EXPECT_ERROR_CONTAINS(parse_range("[a,1]", "--val-range"), "'a' is not a number");
  const auto ranges = parse_value_ranges({"[0,2]", "x:[-1,1]"}, "--val-range");
  EXPECT_EQ(ranges.at(""), (std::pair<double, double>{0, 2}));
  EXPECT_EQ(ranges.at("x"), (std::pair<double, double>{-1, 1}));
}

TEST(DataOptionParsing, ParsesPerOutputLists) {
  const auto atol = parse_tolerances({"1e-3", "y:0.5"}, "--atol");
  EXPECT_DOUBLE_EQ(atol.at(""), 1e-3);
  EXPECT_DOUBLE_EQ(atol.at("y"), 0.5);
  EXPECT_ERROR_CONTAINS(parse_tolerances({"y:-1"}, "--atol"), "--atol: tolerance in 'y:-1' must be a non-negative");
  EXPECT_ERROR_CONTAINS(parse_tolerances({"y:big"}, "--rtol"), "--rtol 'y:big': 'big' is not a number");
  const auto stats = parse_error_stats({"median", "y:max"}, "--check-error-stat");
  EXPECT_EQ(stats.at(""), ErrorStat::Median);
  EXPECT_EQ(stats.at("y"), ErrorStat::Max);
  EXPECT_ERROR_CONTAINS(parse_error_stats({"y:maximum"}, "--check-error-stat"),
                        "'y:maximum' names no error statistic; choose from elemwise, max, mean, median, quantile");
  EXPECT_DOUBLE_EQ(parse_quantiles({"0.5"}, "--error-quantile").at(""), 0.5);
  EXPECT_ERROR_CONTAINS(parse_quantiles({"1.5"}, "--error-quantile"), "must be between 0 and 1");
}

}  // namespace
}  // namespace vkg
