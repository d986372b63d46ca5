// Pieces of per-layer isolation that need no device: the reference stepper
// (node by node, each tensor freed after its last use), the comparator's quiet
// measurement, and the isolation table.
#include <gtest/gtest.h>

#include "debug/layer_isolation.h"
#include "runtime/data/comparator.h"
#include "runtime/reference/reference_backend.h"
#include "tests/unit/op_test_util.h"

namespace vkg {
namespace {

// x -> Relu -> a -> Neg -> b; Add(a, b) -> c; Add(c, w) -> d (w an initializer).
Graph chain() {
  Graph g;
  g.opset = 13;
  ValueInfo x;
  x.name = "x";
  x.dtype = DType::Float32;
  g.inputs = {x};
  ValueInfo d;
  d.name = "d";
  g.outputs = {d};
  g.initializers["w"] = Tensor::from_vector<float>({3}, {10, 20, 30});
  g.nodes = {test::graph_node("relu", "Relu", {"x"}, {"a"}), test::graph_node("neg", "Neg", {"a"}, {"b"}),
             test::graph_node("add", "Add", {"a", "b"}, {"c"}), test::graph_node("bias", "Add", {"c", "w"}, {"d"})};
  return g;
}

TensorMap feed() { return {{"x", Tensor::from_vector<float>({3}, {-1, 2, 3})}}; }

TEST(LayerIsolation, StepperGivesTheReferenceValues) {
  const Graph g = chain();
  const TensorMap expected = ReferenceBackend(g).run(feed(), g.node_outputs());
  ReferenceStepper stepper(g, feed(), {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}});
  for (const std::string name : {"a", "b", "c", "d"}) {
    const Tensor* t = stepper.value(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->to_doubles(), expected.at(name).to_doubles()) << name;
  }
  EXPECT_EQ(stepper.value("w")->to_doubles(), (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(stepper.value("nothing"), nullptr);
}

TEST(LayerIsolation, StepperFreesEachTensorAfterItsLastUse) {
  const Graph g = chain();
  ReferenceStepper stepper(g, feed(), {{"a", 1}, {"d", 1}});
  ASSERT_NE(stepper.value("a"), nullptr);
  EXPECT_EQ(stepper.live(), 1u);  // a: x was read by relu only
  ASSERT_NE(stepper.value("d"), nullptr);
  EXPECT_EQ(stepper.live(), 2u);  // a (held) and d; b and c died with their last reader
  EXPECT_EQ(stepper.value("b"), nullptr);
  stepper.release("a");
  EXPECT_EQ(stepper.live(), 1u);
  stepper.release("d");
  EXPECT_EQ(stepper.live(), 0u);
}

TEST(LayerIsolation, StepperChecksInputs) {
  const Graph g = chain();
  EXPECT_THROW(ReferenceStepper(g, {}, {}), Error);
  EXPECT_THROW(ReferenceStepper(g, {{"x", Tensor::from_vector<int32_t>({1}, {1})}}, {}), Error);
}

TEST(LayerIsolation, MeasureOutputHasTheComparatorsVerdict) {
  const Tensor a = Tensor::from_vector<float>({4}, {0, 0, 0, 0});
  const Tensor b = Tensor::from_vector<float>({4}, {0, 0, 0, 10});
  CompareOptions options;
  options.atol[""] = 3;
  options.rtol[""] = 0;
  options.check_error_stat[""] = ErrorStat::Max;
  OutputComparison m = measure_output("y", a, b, options);
  EXPECT_FALSE(m.passed);
  EXPECT_DOUBLE_EQ(m.required_atol, 10);
  options.check_error_stat[""] = ErrorStat::Mean;
  m = measure_output("y", a, b, options);
  EXPECT_TRUE(m.passed);
  EXPECT_DOUBLE_EQ(m.required_atol, 2.5);
  // Same element count, another shape (an engine tensor holding an alias): element by element.
  EXPECT_TRUE(measure_output("y", a.reshaped({2, 2}), a, {}).passed);
  const OutputComparison bad = measure_output("y", a, Tensor::from_vector<float>({1}, {0}), {});
  EXPECT_FALSE(bad.passed);
  EXPECT_FALSE(bad.failure.empty());
}

TEST(LayerIsolation, TableNamesEachLayerAndItsVerdict) {
  debug::IsolationResult r;
  r.layers.push_back({"conv1+relu1", "Conv", "conv.direct.f32", "fp32", 0, 0, 0, 0, 0, true, true, ""});
  r.layers.push_back({"conv2", "Conv", "conv.direct.f32", "fp32", 5, 1, 0, 5, 1, false, false, ""});
  r.layers.push_back({"add", "Add", "binary.vec4.f32", "fp32", 0, 0, 5, 4, 1, true, false, ""});
  r.first_failed = 1;
  const std::string table = debug::format_isolation_table(r);
  EXPECT_NE(table.find("conv1+relu1"), std::string::npos);
  EXPECT_NE(table.find("FAILED (introduced)"), std::string::npos);
  EXPECT_NE(table.find("inherited"), std::string::npos);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3);
}

}  // namespace
}  // namespace vkg
