// `data concat` and `data merge` (runtime/data/data_tools.h) on files in memory; the command line's
// side by side with Polygraphy's is tests/cli/test_data_tools.py.
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/data/data_tools.h"

namespace vkg {
namespace {

Tensor value(float v) { return Tensor::scalar<float>(v); }

IterationResult iteration(const std::string& runner, const std::string& name, float v) {
  return IterationResult{runner, {{name, value(v)}}, 0};
}

NamedDataFile outputs(const std::string& path, std::vector<std::pair<std::string, std::vector<IterationResult>>> runs) {
  NamedDataFile f{path, {}};
  f.data.holds_outputs = true;
  f.data.outputs.runs = std::move(runs);
  return f;
}

NamedDataFile inputs(const std::string& path, std::vector<TensorMap> feeds) { return {path, DataFile{false, {}, feeds}}; }

float at(const TensorMap& m, const std::string& name) { return m.at(name).data<float>()[0]; }

TEST(DataTools, ConcatJoinsRunnersByName) {
  const DataFile joined = concat_data({outputs("a", {{"r1", {iteration("r1", "y", 1)}}, {"r2", {iteration("r2", "y", 2)}}}),
                                       outputs("b", {{"r2", {iteration("r2", "y", 3)}}, {"r3", {iteration("r3", "y", 4)}}})});
  ASSERT_TRUE(joined.holds_outputs);
  ASSERT_EQ(joined.outputs.runs.size(), 3u);
  EXPECT_EQ(joined.outputs.runs[1].first, "r2");
  ASSERT_EQ(joined.outputs.runs[1].second.size(), 2u);
  EXPECT_EQ(joined.outputs.runs[1].second[1].outputs[0].second.data<float>()[0], 3);
  EXPECT_EQ(joined.outputs.runs[2].first, "r3");
}

TEST(DataTools, ConcatAppendsInputsAndRefusesMixedKinds) {
  const DataFile joined = concat_data({inputs("a", {{{"x", value(1)}}, {{"x", value(2)}}}), inputs("b", {{{"x", value(3)}}})});
  ASSERT_FALSE(joined.holds_outputs);
  ASSERT_EQ(joined.inputs.size(), 3u);
  EXPECT_EQ(at(joined.inputs[2], "x"), 3);
  try {
    concat_data({inputs("a.json", {{{"x", value(1)}}}), outputs("b.json", {{"r", {iteration("r", "y", 1)}}})});
    FAIL() << "mixed kinds were concatenated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot concatenate input data ('a.json') with output data ('b.json')"),
              std::string::npos);
  }
}

TEST(DataTools, MergeKeepsIterationsApartAndLaterFilesWin) {
  const std::vector<TensorMap> merged =
      merge_data({inputs("in", {{{"x", value(1)}}, {{"x", value(2)}}}),
                  outputs("out", {{"r", {iteration("r", "y", 10), iteration("r", "y", 20)}}}),
                  inputs("more", {{{"x", value(5)}}, {{"x", value(6)}}, {{"z", value(7)}}})});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(at(merged[0], "x"), 5);
  EXPECT_EQ(at(merged[0], "y"), 10);
  EXPECT_EQ(at(merged[1], "x"), 6);
  EXPECT_EQ(at(merged[1], "y"), 20);
  EXPECT_EQ(merged[2].size(), 1u);  // the third iteration holds only what the third file gave
  EXPECT_EQ(at(merged[2], "z"), 7);
}

TEST(DataTools, ReadsAFeedDictAloneAsOneIteration) {
  const std::string one =
      R"({"x": {"array": "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKCksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAIA/", "polygraphy_class": "ndarray"}})";
  const DataFile file = data_file_from_json(one, "one.json");
  ASSERT_FALSE(file.holds_outputs);
  ASSERT_EQ(file.inputs.size(), 1u);
  EXPECT_EQ(at(file.inputs[0], "x"), 1.0f);
  EXPECT_THROW(data_file_from_json(R"({"polygraphy_class": "Other"})", "other.json"), Error);
  EXPECT_THROW(data_file_from_json("3", "number.json"), Error);
}

}  // namespace
}  // namespace vkg
