// Reference kernels of the normalization family: reductions, ArgMax/ArgMin,
// softmax, and the normalization layers. Expected values come from numpy or
// from a brute-force recomputation in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {
namespace {

using namespace test;

// A node named "<op>_node"; the error tests below look for that name.
void expect_near_or_nan(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(size_t(actual.size()), expected.size()) << actual.describe();
  for (size_t i = 0; i < expected.size(); ++i) {
    const double a = actual.get_as_double(int64_t(i));
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i;
    } else {
      EXPECT_NEAR(a, expected[i], tol * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
    }
  }
}

// Expects an Error whose message names the node.
template <class F> void expect_node_error(F&& f, const std::string& node_name) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(node_name), std::string::npos) << e.what();
  }
}

// Brute force: the output index of every input element, for a reduction mask.
std::vector<std::vector<double>> group_by_output(const Tensor& x, const std::vector<bool>& reduced) {
  const Shape& shape = x.shape();
  int64_t out_count = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) out_count *= shape[d];
  std::vector<std::vector<double>> groups(static_cast<size_t>(out_count));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t rem = i;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rem % shape[d];
      rem /= shape[d];
    }
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) o = o * shape[d] + index[d];
    groups[size_t(o)].push_back(x.get_as_double(i));
  }
  return groups;
}

// ---------------------------------------------------------------- reductions

// The reduction `op` of the values `v`, computed plainly.
double fold(const std::string& op, const std::vector<double>& v) {
  double sum = 0, abs_sum = 0, square_sum = 0, exp_sum = 0, prod = 1;
  double max = -INFINITY, min = INFINITY;
  for (double x : v) {
    sum += x;
    abs_sum += std::fabs(x);
    square_sum += x * x;
    exp_sum += std::exp(x);
    prod *= x;
    max = std::max(max, x);
    min = std::min(min, x);
  }
  if (op == "ReduceSum") return sum;
  if (op == "ReduceMean") return sum / double(v.size());
  if (op == "ReduceSumSquare") return square_sum;
  if (op == "ReduceL1") return abs_sum;
  if (op == "ReduceL2") return std::sqrt(square_sum);
  if (op == "ReduceLogSum") return std::log(sum);
  if (op == "ReduceLogSumExp") return std::log(exp_sum);
  if (op == "ReduceProd") return prod;
  if (op == "ReduceMax") return max;
  if (op == "ReduceMin") return min;
  ADD_FAILURE() << "unknown reduction " << op;
  return 0;
}

TEST(ReduceOps, EveryReductionMatchesBruteForceOnEveryAxisSubset) {
  const Shape shape{2, 3, 4, 5};
  const Tensor x = random_floats(shape, 7, 0.1f, 2.0f);  // positive, so ReduceLogSum is defined
  const char* ops[] = {"ReduceSum",    "ReduceMean",      "ReduceSumSquare", "ReduceL1",  "ReduceL2",
                       "ReduceLogSum", "ReduceLogSumExp", "ReduceProd",      "ReduceMax", "ReduceMin"};
  for (const std::string op : ops) {
    for (int mask_bits = 1; mask_bits < 16; ++mask_bits) {
      std::vector<bool> reduced(4);
      std::vector<int64_t> axes;
      Shape keep_shape, drop_shape;
      for (int d = 0; d < 4; ++d) {
        reduced[size_t(d)] = (mask_bits >> d) & 1;
        if (reduced[size_t(d)]) axes.push_back(d % 2 ? d - 4 : d);  // mix negative axes in
        keep_shape.push_back(reduced[size_t(d)] ? 1 : shape[size_t(d)]);
        if (!reduced[size_t(d)]) drop_shape.push_back(shape[size_t(d)]);
      }
      std::vector<double> expected;
      for (const auto& group : group_by_output(x, reduced)) expected.push_back(fold(op, group));
      for (int keepdims : {0, 1}) {
        const Node node = op_node(op, 1, 1, {{"axes", ints_attr(axes)}, {"keepdims", int_attr(keepdims)}});
        const Tensor y = run1(node, 11, {&x});
        SCOPED_TRACE(op + " mask " + std::to_string(mask_bits));
        EXPECT_EQ(y.shape(), keepdims ? keep_shape : drop_shape);
        EXPECT_EQ(y.dtype(), DType::Float32);
        expect_near_or_nan(y, expected);
      }
    }
  }
}

TEST(ReduceOps, DefaultAxesReduceEverythingAndKeepDims) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  const Tensor y = run1(op_node("ReduceMean", 1, 1), 13, {&x});
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  expect_near_or_nan(y, {2.5});
  const Tensor z = run1(op_node("ReduceMax", 1, 1, {{"keepdims", int_attr(0)}}), 13, {&x});
  EXPECT_EQ(z.shape(), Shape{});
  expect_near_or_nan(z, {4});
}

TEST(ReduceOps, ReduceSumTakesAxesAsInputFromOpset13) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor axes = Tensor::from_vector<int64_t>({1}, {-1});
  const Node node = op_node("ReduceSum", 2, 1, {{"keepdims", int_attr(0)}});
  const Tensor y = run1(node, 13, {&x, &axes});
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_near_or_nan(y, {6, 15});

  // An omitted axes input reduces every axis; an empty one too, unless noop_with_empty_axes.
  expect_near_or_nan(run1(node, 13, {&x, nullptr}), {21});
  const Tensor empty_axes(DType::Int64, {0});
  expect_near_or_nan(run1(node, 13, {&x, &empty_axes}), {21});
  const Node noop = op_node("ReduceSum", 2, 1, {{"noop_with_empty_axes", int_attr(1)}});
  EXPECT_TRUE(run1(noop, 13, {&x, &empty_axes}).bit_equal(x));
}

TEST(ReduceOps, IntegerReductionsAreExact) {
  const int64_t big = (int64_t(1) << 60) + 1;
  const Tensor x = Tensor::from_vector<int64_t>({3}, {big, 1, -5});
  EXPECT_EQ(run1(op_node("ReduceSum", 1, 1), 11, {&x}).to_int64s()[0], big - 4);
  EXPECT_EQ(run1(op_node("ReduceMax", 1, 1), 11, {&x}).to_int64s()[0], big);
  EXPECT_EQ(run1(op_node("ReduceMin", 1, 1), 11, {&x}).to_int64s()[0], -5);
  const Tensor i32 = Tensor::from_vector<int32_t>({2, 2}, {3, -4, 5, 6});
  const Tensor prod = run1(op_node("ReduceProd", 1, 1, {{"axes", ints_attr({0})}}), 11, {&i32});
  EXPECT_EQ(prod.dtype(), DType::Int32);
  EXPECT_EQ(prod.to_int64s(), (std::vector<int64_t>{15, -24}));
  const Tensor mean = run1(op_node("ReduceMean", 1, 1, {{"axes", ints_attr({1})}}), 11, {&i32});
  EXPECT_EQ(mean.to_int64s(), (std::vector<int64_t>{0, 5}));  // integer division, like onnxruntime
  const Tensor l1 = run1(op_node("ReduceL1", 1, 1), 11, {&i32});
  EXPECT_EQ(l1.to_int64s()[0], 18);
}

TEST(ReduceOps, LogSumExpIsStableForLargeValues) {
  const Tensor x = Tensor::from_vector<double>({3}, {1000.0, 1000.0, -1000.0});
  const Tensor y = run1(op_node("ReduceLogSumExp", 1, 1), 13, {&x});
  EXPECT_EQ(y.dtype(), DType::Float64);
  expect_near_or_nan(y, {1000.0 + std::log(2.0)}, 1e-12);
  const Tensor all_neg_inf = Tensor::from_vector<float>({2}, {-INFINITY, -INFINITY});
  const double v = run1(op_node("ReduceLogSumExp", 1, 1), 13, {&all_neg_inf}).get_as_double(0);
  EXPECT_TRUE(std::isinf(v) && v < 0);
}

TEST(ReduceOps, MaxAndMinPropagateNaN) {
  const Tensor x = Tensor::from_vector<float>({3}, {1.0f, NAN, 3.0f});
  EXPECT_TRUE(std::isnan(run1(op_node("ReduceMax", 1, 1), 13, {&x}).get_as_double(0)));
  EXPECT_TRUE(std::isnan(run1(op_node("ReduceMin", 1, 1), 13, {&x}).get_as_double(0)));
}

TEST(ReduceOps, EmptyReductionsGiveTheirIdentity) {
  const Tensor x(DType::Float32, {2, 0});
  const Node sum = op_node("ReduceSum", 1, 1, {{"axes", ints_attr({1})}, {"keepdims", int_attr(0)}});
  expect_near_or_nan(run1(sum, 11, {&x}), {0, 0});
  const Node prod = op_node("ReduceProd", 1, 1, {{"axes", ints_attr({1})}, {"keepdims", int_attr(0)}});
  expect_near_or_nan(run1(prod, 11, {&x}), {1, 1});
}

TEST(ReduceOps, Float16InputsComputeInDouble) {
  const Tensor x = Tensor::from_vector<Half>({4}, {Half(1.0f), Half(2.0f), Half(3.0f), Half(4.0f)});
  const Tensor y = run1(op_node("ReduceL2", 1, 1), 13, {&x});
  EXPECT_EQ(y.dtype(), DType::Float16);
  expect_near_or_nan(y, {std::sqrt(30.0)}, 1e-3);
}

TEST(ReduceOps, BadAxesAndTypesAreErrorsNamingTheNode) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_node_error(
      [&] {
        run1(op_node("ReduceMean", 1, 1, {{"axes", ints_attr({2})}}), 11, {&x});
      },
      "ReduceMean_node");
  expect_node_error(
      [&] {
        run1(op_node("ReduceMean", 1, 1, {{"axes", ints_attr({1, -1})}}), 11, {&x});
      },
      "ReduceMean_node");
  const Tensor b = Tensor::from_vector<bool>({2}, {true, false});
  expect_node_error([&] { run1(op_node("ReduceSum", 1, 1), 11, {&b}); }, "ReduceSum_node");
  const Tensor float_axes = Tensor::from_vector<float>({1}, {0.0f});
  expect_node_error([&] { run1(op_node("ReduceSum", 2, 1), 13, {&x, &float_axes}); }, "ReduceSum_node");
}

// ---------------------------------------------------------------- ArgMax / ArgMin

TEST(ArgOps, ArgMaxAndArgMinAlongAnAxis) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 5, 5, 7, 0, 7});
  const Tensor y = run1(op_node("ArgMax", 1, 1, {{"axis", int_attr(1)}}), 13, {&x});
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(y.to_int64s(), (std::vector<int64_t>{1, 0}));
  const Tensor last = run1(
      op_node("ArgMax", 1, 1, {{"axis", int_attr(-1)}, {"keepdims", int_attr(0)}, {"select_last_index", int_attr(1)}}),
      13, {&x});
  EXPECT_EQ(last.shape(), (Shape{2}));
  EXPECT_EQ(last.to_int64s(), (std::vector<int64_t>{2, 2}));
  const Tensor min0 = run1(op_node("ArgMin", 1, 1, {{"keepdims", int_attr(0)}}), 13, {&x});
  EXPECT_EQ(min0.shape(), (Shape{3}));
  EXPECT_EQ(min0.to_int64s(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(ArgOps, IntegerInputsAndErrors) {
  const Tensor x = Tensor::from_vector<int32_t>({4}, {-3, 9, 2, 9});
  EXPECT_EQ(run1(op_node("ArgMax", 1, 1), 11, {&x}).to_int64s(), (std::vector<int64_t>{1}));
  EXPECT_EQ(run1(op_node("ArgMin", 1, 1), 11, {&x}).to_int64s(), (std::vector<int64_t>{0}));
  expect_node_error([&] { run1(op_node("ArgMax", 1, 1, {{"axis", int_attr(1)}}), 11, {&x}); }, "ArgMax_node");
  const Tensor empty(DType::Float32, {0});
  expect_node_error([&] { run1(op_node("ArgMin", 1, 1), 11, {&empty}); }, "ArgMin_node");
}

// ---------------------------------------------------------------- softmax

// numpy: softmax over the given groups of a [2, 3] tensor.
TEST(SoftmaxOps, OpsetThirteenRunsAlongOneAxis) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 1, 1, 1});
  const Tensor y = run1(op_node("Softmax", 1, 1), 13, {&x});
  expect_near_or_nan(y, {0.09003057, 0.24472847, 0.66524096, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  const Tensor y0 = run1(op_node("Softmax", 1, 1, {{"axis", int_attr(0)}}), 13, {&x});
  expect_near_or_nan(y0, {0.5, 0.73105858, 0.88079708, 0.5, 0.26894142, 0.11920292});
}

TEST(SoftmaxOps, BeforeOpsetThirteenTheTailIsFlattened) {
  // Shape [1, 2, 2]: opset 11 with the default axis 1 normalizes all 4 values together,
  // opset 13 with axis 1 normalizes pairs along axis 1.
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {0, 1, 2, 3});
  const double e[] = {1.0, std::exp(1.0), std::exp(2.0), std::exp(3.0)};
  const double total = e[0] + e[1] + e[2] + e[3];
  const Tensor legacy = run1(op_node("Softmax", 1, 1), 11, {&x});
  expect_near_or_nan(legacy, {e[0] / total, e[1] / total, e[2] / total, e[3] / total});
  const Tensor modern = run1(op_node("Softmax", 1, 1, {{"axis", int_attr(1)}}), 13, {&x});
  expect_near_or_nan(modern, {e[0] / (e[0] + e[2]), e[1] / (e[1] + e[3]), e[2] / (e[0] + e[2]), e[3] / (e[1] + e[3])});
  const Tensor log_legacy = run1(op_node("LogSoftmax", 1, 1, {{"axis", int_attr(2)}}), 9, {&x});
  expect_near_or_nan(log_legacy,
                     {-std::log(1 + e[1]), 1 - std::log(1 + e[1]), -std::log(1 + e[1]), 1 - std::log(1 + e[1])});
}

TEST(SoftmaxOps, LargeNumbersDoNotOverflow) {
  const Tensor x = Tensor::from_vector<float>({2}, {10000.0f, 10001.0f});
  expect_near_or_nan(run1(op_node("Softmax", 1, 1), 13, {&x}), {0.26894142, 0.73105858});
  expect_near_or_nan(run1(op_node("LogSoftmax", 1, 1), 13, {&x}), {-1.31326169, -0.31326169});
}

TEST(SoftmaxOps, HardmaxPicksTheFirstMaximum) {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {3, 1, 3, 0, 2, 1});
  expect_near_or_nan(run1(op_node("Hardmax", 1, 1), 13, {&x}), {1, 0, 0, 0, 1, 0});
  expect_near_or_nan(run1(op_node("Hardmax", 1, 1, {{"axis", int_attr(0)}}), 11, {&x}), {1, 0, 0, 0, 0, 0});
}

TEST(SoftmaxOps, Float16AndErrors) {
  const Tensor x = Tensor::from_vector<Half>({2}, {Half(0.0f), Half(0.0f)});
  const Tensor y = run1(op_node("Softmax", 1, 1), 13, {&x});
  EXPECT_EQ(y.dtype(), DType::Float16);
  expect_near_or_nan(y, {0.5, 0.5});
  const Tensor ints = Tensor::from_vector<int32_t>({2}, {1, 2});
  expect_node_error([&] { run1(op_node("Softmax", 1, 1), 13, {&ints}); }, "Softmax_node");
  const Tensor f = Tensor::from_vector<float>({2}, {1, 2});
  expect_node_error([&] { run1(op_node("LogSoftmax", 1, 1, {{"axis", int_attr(3)}}), 13, {&f}); }, "LogSoftmax_node");
}

// ---------------------------------------------------------------- normalization layers

TEST(NormOps, BatchNormalizationInference) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4});
  const Tensor scale = Tensor::from_vector<float>({2}, {2, 1});
  const Tensor bias = Tensor::from_vector<float>({2}, {0, 1});
  const Tensor mean = Tensor::from_vector<float>({2}, {1, 3});
  const Tensor var = Tensor::from_vector<float>({2}, {4, 1});
  const std::vector<const Tensor*> ins{&x, &scale, &bias, &mean, &var};
  for (int64_t opset : {6, 9, 15}) {
    const Node node = op_node("BatchNormalization", 5, 1, {{"epsilon", float_attr(0.0f)}});
    expect_near_or_nan(run1(node, opset, ins), {0, 1, 1, 2});
  }
  const Tensor bad = Tensor::from_vector<float>({3}, {1, 1, 1});
  expect_node_error(
      [&] {
        run1(op_node("BatchNormalization", 5, 1), 15, {&x, &bad, &bias, &mean, &var});
      },
      "BatchNormalization_node");
}

TEST(NormOps, BatchNormalizationTrainingMode) {
  const Tensor x = Tensor::from_vector<float>({2, 1, 2}, {1, 2, 3, 6});  // batch mean 3, var 3.5
  const Tensor scale = Tensor::from_vector<float>({1}, {1});
  const Tensor bias = Tensor::from_vector<float>({1}, {0});
  const Tensor mean = Tensor::from_vector<float>({1}, {0});
  const Tensor var = Tensor::from_vector<float>({1}, {1});
  const Node node =
      op_node("BatchNormalization", 5, 3,
              {{"epsilon", float_attr(0.0f)}, {"momentum", float_attr(0.5f)}, {"training_mode", int_attr(1)}});
  const std::vector<Tensor> outs = run(node, 15, {&x, &scale, &bias, &mean, &var});
  ASSERT_EQ(outs.size(), 3u);
  const double s = std::sqrt(3.5);
  expect_near_or_nan(outs[0], {-2 / s, -1 / s, 0, 3 / s});
  expect_near_or_nan(outs[1], {1.5});
  expect_near_or_nan(outs[2], {2.25});
}

TEST(NormOps, BatchNormalizationPerPositionParametersAndOldTrainingOutputs) {
  // Opset 7 with spatial=0: parameters of shape [C, D] apply per channel and position.
  const Tensor x = Tensor::from_vector<float>({2, 1, 2}, {1, 2, 3, 6});
  const Tensor scale = Tensor::from_vector<float>({1, 2}, {1, 2});
  const Tensor bias = Tensor::from_vector<float>({1, 2}, {0, 1});
  const Tensor mean = Tensor::from_vector<float>({1, 2}, {1, 2});
  const Tensor var = Tensor::from_vector<float>({1, 2}, {1, 4});
  const Node spatial0 = op_node("BatchNormalization", 5, 1, {{"epsilon", float_attr(0.0f)}, {"spatial", int_attr(0)}});
  expect_near_or_nan(run1(spatial0, 7, {&x, &scale, &bias, &mean, &var}), {0, 1, 2, 5});

  // Opset 9 in training: Y, running mean and variance, then the batch mean and variance.
  const Tensor one = Tensor::from_vector<float>({1}, {1});
  const Tensor zero = Tensor::from_vector<float>({1}, {0});
  const Node training = op_node("BatchNormalization", 5, 5, {{"momentum", float_attr(0.5f)}});
  const std::vector<Tensor> outs = run(training, 9, {&x, &one, &zero, &zero, &one});
  ASSERT_EQ(outs.size(), 5u);
  expect_near_or_nan(outs[1], {1.5});
  expect_near_or_nan(outs[2], {2.25});
  expect_near_or_nan(outs[3], {3});
  expect_near_or_nan(outs[4], {3.5});
}

TEST(NormOps, InstanceNormalization) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {1, 3, 5, 9});
  const Tensor scale = Tensor::from_vector<float>({2}, {2, 1});
  const Tensor bias = Tensor::from_vector<float>({2}, {0, 7});
  const Node node = op_node("InstanceNormalization", 3, 1, {{"epsilon", float_attr(0.0f)}});
  expect_near_or_nan(run1(node, 6, {&x, &scale, &bias}), {-2, 2, 6, 8});
}

TEST(NormOps, LayerNormalizationWithStatistics) {
  const Tensor x = Tensor::from_vector<float>({2, 1, 2}, {1, 3, 0, 4});
  const Tensor scale = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor bias = Tensor::from_vector<float>({1}, {0.5f});  // broadcast over the normalized shape
  const Node node = op_node("LayerNormalization", 3, 3, {{"axis", int_attr(1)}, {"epsilon", float_attr(0.0f)}});
  const std::vector<Tensor> outs = run(node, 17, {&x, &scale, &bias});
  ASSERT_EQ(outs.size(), 3u);
  expect_near_or_nan(outs[0], {-0.5, 2.5, -0.5, 2.5});
  EXPECT_EQ(outs[1].shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(outs[1].dtype(), DType::Float32);
  expect_near_or_nan(outs[1], {2, 2});
  expect_near_or_nan(outs[2], {1.0, 0.5});
  const Tensor bad_scale = Tensor::from_vector<float>({3}, {1, 1, 1});
  expect_node_error([&] { run(node, 17, {&x, &bad_scale, nullptr}); }, "LayerNormalization_node");
}

TEST(NormOps, MeanVarianceNormalizationDefaultAxes) {
  const Tensor x = random_floats({2, 3, 2, 2}, 3, -2.0f, 2.0f);
  const Tensor y = run1(op_node("MeanVarianceNormalization", 1, 1), 13, {&x});
  // Every channel has mean 0 and variance 1 over the axes [0, 2, 3].
  const auto groups = group_by_output(y, {true, false, true, true});
  ASSERT_EQ(groups.size(), 3u);
  for (const auto& g : groups) {
    double mean = 0, sq = 0;
    for (double v : g) mean += v;
    mean /= double(g.size());
    for (double v : g) sq += (v - mean) * (v - mean);
    EXPECT_NEAR(mean, 0.0, 1e-6);
    EXPECT_NEAR(sq / double(g.size()), 1.0, 1e-5);
  }
}

TEST(NormOps, LpNormalization) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {3, 4, 0, 0});
  expect_near_or_nan(run1(op_node("LpNormalization", 1, 1), 1, {&x}), {0.6, 0.8, 0, 0});
  expect_near_or_nan(run1(op_node("LpNormalization", 1, 1, {{"p", int_attr(1)}, {"axis", int_attr(0)}}), 1, {&x}),
                     {1, 1, 0, 0});
  expect_node_error(
      [&] {
        run1(op_node("LpNormalization", 1, 1, {{"p", int_attr(3)}}), 1, {&x});
      },
      "LpNormalization_node");
}

}  // namespace
}  // namespace vkg
