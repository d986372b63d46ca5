// check lint on Polygraphy's lint fixtures, and the accuracy results file from a comparison to
// `check accuracy`'s verdicts: the library side of tests/cli/test_check_lint.py and
// test_check_accuracy.py, in process (so the sanitizer stage runs them too).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "debug/model_lint.h"
#include "runtime/core/error.h"
#include "runtime/data/accuracy_results.h"

namespace vkg {
namespace {

std::string polygraphy_model(const std::string& name) {
  return std::string(VKGRAPHY_SOURCE_DIR) + "/tests/models/polygraphy/" + name + ".onnx";
}

std::set<std::string> levels_of(const debug::LintReport& r, debug::LintLevel level) {
  std::set<std::string> nodes;
  for (const auto& e : r.entries)
    if (e.level == level) nodes.insert(e.nodes.begin(), e.nodes.end());
  return nodes;
}

TEST(CheckLint, ParallelFaultsAreAllNamedAndTheirReadersNotChecked) {
  const debug::LintReport r = debug::lint_model_file(polygraphy_model("bad_graph_with_parallel_invalid_nodes"), {});
  EXPECT_EQ(r.failing, (std::set<std::string>{"Add_0", "MatMul_0", "MatMul_3"}));
  EXPECT_EQ(r.passing, (std::set<std::string>{"MatMul_1", "NonZero", "cast_to_int64"}));
  EXPECT_FALSE(r.valid());
  const auto json = r.to_json();
  EXPECT_EQ(json["lint_entries"].size(), 3u);
  EXPECT_EQ(json["lint_entries"][0]["source"], "reference");
}

TEST(CheckLint, DuplicateNamesCustomOpsAndEmptyModels) {
  const debug::LintReport dup = debug::lint_model_file(polygraphy_model("bad_graph_with_duplicate_node_names"), {});
  ASSERT_FALSE(dup.entries.empty());
  EXPECT_EQ(dup.entries[0].message, "Duplicate node name: 'identical' for nodes with topological IDs: [0, 1] found.");
  const debug::LintReport custom = debug::lint_model_file(polygraphy_model("custom_op_node"), {});
  EXPECT_TRUE(custom.valid());
  EXPECT_EQ(levels_of(custom, debug::LintLevel::Warning), std::set<std::string>{"vkgraphy_unnamed_node_0"});
  const debug::LintReport empty = debug::lint_model_file(polygraphy_model("empty"), {});
  ASSERT_EQ(empty.entries.size(), 1u);
  EXPECT_EQ(empty.entries[0].message, "ONNX model has no nodes");
  EXPECT_THROW(debug::lint_model_file(polygraphy_model("no_such_model"), {}), Error);
}

TEST(CheckLint, TheCheckersGraphLevelFindings) {
  const debug::LintReport r = debug::lint_model_file(polygraphy_model("bad_graph_with_multi_level_errors"), {});
  ASSERT_GE(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].source, debug::LintSource::OnnxChecker);
  EXPECT_EQ(r.entries[0].message, "Field 'name' of 'graph' is required to be non-empty.");
  EXPECT_NE(r.entries[1].message.find("Incompatible dimensions for matrix multiplication"), std::string::npos);
}

// Two iterations of one output: max errors 0.5 and 2 (abs), 0.1 and 0.4 (rel).
std::vector<PairComparison> two_iterations() {
  std::vector<PairComparison> comparisons;
  for (double scale : {1.0, 4.0}) {
    OutputComparison out;
    out.name = "y";
    out.stat = ErrorStat::Max;
    out.atol = 1.0;
    out.rtol = 0.0;
    out.absdiff = {0.5 * scale, 0.25 * scale, 0.2 * scale, 0.0};
    out.reldiff = {0.1 * scale, 0.05 * scale, 0.04 * scale, 0.0};
    PairComparison c{"a", "b", comparisons.size(), {}};
    c.result.per_output.push_back(out);
    comparisons.push_back(c);
  }
  return comparisons;
}

TEST(AccuracyResults, RoundTripAndRethreshold) {
  AccuracyResults results = accuracy_results_of(two_iterations());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].passed());  // iteration 1: max abs 2 > 1, max rel 0.4 > 0
  const std::string path = (std::filesystem::temp_directory_path() / "vkgraphy_accuracy_test.json").string();
  save_accuracy_results(path, results);
  AccuracyResults loaded = load_accuracy_results(path);
  std::filesystem::remove(path);
  ASSERT_EQ(loaded[0].pairs.size(), 1u);
  ASSERT_EQ(loaded[0].pairs[0].iterations.size(), 2u);
  EXPECT_FALSE(loaded[0].pairs[0].iterations[0][0].second.absdiff[3].has_value());  // quantile not saved

  CompareOptions options;
  options.check_error_stat[""] = ErrorStat::Median;
  options.atol[""] = 1.0;
  rethreshold(loaded, options, false);
  EXPECT_TRUE(loaded[0].passed());  // medians 0.2 and 0.8
  options.check_error_stat[""] = ErrorStat::Max;
  rethreshold(loaded, options, true);  // averaged max: 1.25 abs, 0.25 rel
  EXPECT_FALSE(loaded[0].passed());
  options.atol[""] = 1.25;
  rethreshold(loaded, options, true);
  EXPECT_TRUE(loaded[0].passed());

  options.check_error_stat[""] = ErrorStat::Elemwise;
  EXPECT_THROW(rethreshold(loaded, options, false), Error);
  options.check_error_stat[""] = ErrorStat::Quantile;
  EXPECT_THROW(rethreshold(loaded, options, false), Error);
}

}  // namespace
}  // namespace vkg
