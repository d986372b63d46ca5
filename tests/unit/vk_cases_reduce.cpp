// Conformance cases of the reduce family (runtime/tactics/reduce.cpp):
// - the ten Reduce* ops with axes as attribute (older opsets) or constant input
//   (ReduceSum 13, every reduction 18), keepdims, noop_with_empty_axes, empty
//   axes (all), negative axes, axes that alternate with kept ones (several runs
//   on both sides, and more runs than the shaders take), empty and scalar
//   inputs, integer inputs (exact: truncating mean, exact integer L2);
// - ArgMax/ArgMin with keepdims, select_last_index, ties and integer inputs;
// - Softmax/LogSoftmax/Hardmax before opset 13 (coerced to 2-D) and after (one
//   axis, inner or outer), large magnitudes (max subtraction);
// - LayerNormalization (axis, epsilon, constant and runtime Scale/B with
//   broadcasting, optional B, each optional Mean/InvStdDev output),
//   RMSNormalization, InstanceNormalization, GroupNormalization (per-group and
//   per-channel parameters), MeanVarianceNormalization (axes; opset 8 attributes)
//   and LpNormalization (p 1/2, a zero row).
// Rows are long enough somewhere (hundreds to thousands of elements) for the
// cooperative tactics to loop, and numerous enough elsewhere for several
// workgroups of the thread-per-row ones.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <random>

#include "runtime/core/error.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Integer-valued floats in [lo, hi]: exact in fp16, with frequent ties.
Tensor axes_tensor(std::vector<int64_t> axes) {
  const int64_t n = int64_t(axes.size());
  return Tensor::from_vector<int64_t>({n}, axes);
}

Attrs attrs_with(Attrs a, const std::string& name, Attribute value) {
  a[name] = std::move(value);
  return a;
}

// A reduction with its axes as an attribute (or none).
VkCase reduce_attr(const std::string& name, const std::string& op, Tensor x, Attrs attrs, int64_t opset = 17) {
  VkCase c = make_case(name, op, {std::move(x)}, std::move(attrs));
  c.opset = opset;
  return c;
}

// A reduction with its axes as a constant input.
VkCase reduce_input(const std::string& name, const std::string& op, Tensor x, std::vector<int64_t> axes,
                    Attrs attrs = {}, int64_t opset = 18) {
  VkCase c = make_case(name, op, {std::move(x), axes_tensor(std::move(axes))}, std::move(attrs), 1, {1});
  c.opset = opset;
  return c;
}

VkCase loose_fp16(VkCase c, double atol) {
  c.atol_fp16 = atol;
  return c;
}

std::vector<VkCase> reduce_cases() {
  std::vector<VkCase> cases;
  const Attrs keep0{{"keepdims", int_attr(0)}};

  // ReduceSum: axes input from opset 13.
  cases.push_back(reduce_input("ReduceSum axes [1] keepdims, 4x37x5 (inner kept run)", "ReduceSum",
                               random_floats({4, 37, 5}, 1), {1}, {}, 13));
  cases.push_back(loose_fp16(
      reduce_input("ReduceSum axes [-1] keepdims 0, 33x300", "ReduceSum", random_floats({33, 300}, 2), {-1}, keep0, 13),
      0.15));
  cases.push_back(loose_fp16(
      reduce_attr("ReduceSum no axes = all, 7x9x11", "ReduceSum", random_floats({7, 9, 11}, 3, 0.0f, 1.0f), {}, 13),
      0.5));
  cases.push_back(reduce_attr("ReduceSum noop_with_empty_axes, 3x5x7", "ReduceSum", random_floats({3, 5, 7}, 4),
                              {{"noop_with_empty_axes", int_attr(1)}}, 13));
  cases.push_back(
      reduce_input("ReduceSum empty axes input = all, 5x6", "ReduceSum", random_floats({5, 6}, 5), {}, {}, 13));
  cases.push_back(reduce_attr("ReduceSum opset 11 axes attribute [0, 2], 6x5x4", "ReduceSum",
                              random_floats({6, 5, 4}, 6), {{"axes", ints_attr({0, 2})}}, 11));
  cases.push_back(reduce_input("ReduceSum int32 axes [0, 2] (runs K R K R), 3x4x5x6", "ReduceSum",
                               integers<int32_t>({3, 4, 5, 6}, 7, -1000, 1000), {0, 2}, {}, 13));
  cases.push_back(reduce_input("ReduceSum int64 axes [1] keepdims 0, 9x70", "ReduceSum",
                               integers<int64_t>({9, 70}, 8, -100000, 100000), {1}, keep0, 13));
  cases.push_back(reduce_input("ReduceSum empty axis, 3x0x4 -> 3x4", "ReduceSum", Tensor(DType::Float32, {3, 0, 4}),
                               {1}, keep0, 13));
  cases.push_back(reduce_attr("ReduceSum scalar", "ReduceSum", Tensor::scalar<float>(2.5f), {}, 13));
  cases.push_back(reduce_input("ReduceSum 5 alternating reduced runs, 2x3x2x3x2x3x2x3x2", "ReduceSum",
                               random_floats({2, 3, 2, 3, 2, 3, 2, 3, 2}, 9), {0, 2, 4, 6, 8}, {}, 13));
  cases.push_back(reduce_input("ReduceSum 4+4 alternating runs, 2x3x2x3x2x3x2x3", "ReduceSum",
                               random_floats({2, 3, 2, 3, 2, 3, 2, 3}, 10), {1, 3, 5, 7}, keep0, 13));
  cases.push_back(reduce_input("ReduceSum size-1 axes merge, 4x1x6x1x5 axes [1, 2]", "ReduceSum",
                               random_floats({4, 1, 6, 1, 5}, 11), {1, 2}, {}, 13));

  // ReduceMean.
  cases.push_back(reduce_attr("ReduceMean axes [2, 3] keepdims, 2x3x7x9", "ReduceMean", random_floats({2, 3, 7, 9}, 12),
                              {{"axes", ints_attr({2, 3})}}));
  cases.push_back(reduce_attr("ReduceMean int32 axes [1] truncates toward zero, 10x7", "ReduceMean",
                              integers<int32_t>({10, 7}, 13, -50, 50), {{"axes", ints_attr({1})}}));
  cases.push_back(
      reduce_input("ReduceMean opset 18 axes input [0], 700x3", "ReduceMean", random_floats({700, 3}, 14), {0}));

  // ReduceSumSquare, L1, L2.
  cases.push_back(loose_fp16(reduce_attr("ReduceSumSquare axes [1], 5x64x3", "ReduceSumSquare",
                                         random_floats({5, 64, 3}, 15), {{"axes", ints_attr({1})}}),
                             0.5));
  cases.push_back(reduce_attr("ReduceSumSquare int32 axes [0], 6x8", "ReduceSumSquare",
                              integers<int32_t>({6, 8}, 16, -30, 30), {{"axes", ints_attr({0})}}));
  cases.push_back(
      reduce_attr("ReduceL1 axes [0], 50x6", "ReduceL1", random_floats({50, 6}, 17), {{"axes", ints_attr({0})}}));
  cases.push_back(reduce_attr("ReduceL1 int32 axes [-1] keepdims 0, 7x9", "ReduceL1",
                              integers<int32_t>({7, 9}, 18, -100, 100),
                              attrs_with({{"axes", ints_attr({-1})}}, "keepdims", int_attr(0))));
  cases.push_back(reduce_attr("ReduceL2 axes [-1] keepdims 0, 6x400", "ReduceL2", random_floats({6, 400}, 19),
                              attrs_with({{"axes", ints_attr({-1})}}, "keepdims", int_attr(0))));
  cases.push_back(reduce_attr("ReduceL2 int32 exact integer sqrt, 20x4", "ReduceL2",
                              integers<int32_t>({20, 4}, 20, -9, 9), {{"axes", ints_attr({1})}}));

  // ReduceLogSum, ReduceLogSumExp.
  cases.push_back(reduce_attr("ReduceLogSum axes [1], 4x20", "ReduceLogSum", random_floats({4, 20}, 21, 0.1f, 2.0f),
                              {{"axes", ints_attr({1})}}));
  cases.push_back(
      reduce_input("ReduceLogSum opset 18 all axes, 3x5", "ReduceLogSum", random_floats({3, 5}, 22, 0.1f, 2.0f), {}));
  cases.push_back(reduce_attr("ReduceLogSum int32 axes [0], 6x11", "ReduceLogSum", integers<int32_t>({6, 11}, 34, 0, 9),
                              {{"axes", ints_attr({0})}}));
  cases.push_back(reduce_attr("ReduceLogSumExp large values axes [1], 4x100x3", "ReduceLogSumExp",
                              random_floats({4, 100, 3}, 23, -90.0f, 90.0f), {{"axes", ints_attr({1})}}));
  cases.push_back(reduce_attr("ReduceLogSumExp axes [-1], 16x500", "ReduceLogSumExp", random_floats({16, 500}, 24),
                              {{"axes", ints_attr({-1})}}));
  cases.push_back(reduce_attr("ReduceLogSumExp int32 axes [1], 5x6", "ReduceLogSumExp",
                              integers<int32_t>({5, 6}, 25, -5, 5), {{"axes", ints_attr({1})}}));

  // ReduceProd.
  cases.push_back(reduce_attr("ReduceProd axes [1], 6x10x2", "ReduceProd", random_floats({6, 10, 2}, 26, 0.5f, 1.5f),
                              {{"axes", ints_attr({1})}}));
  cases.push_back(reduce_attr("ReduceProd int32 axes [0], 4x9", "ReduceProd", integers<int32_t>({4, 9}, 27, -6, 6),
                              {{"axes", ints_attr({0})}}));

  // ReduceMax, ReduceMin.
  cases.push_back(reduce_attr("ReduceMax axes [1, 3] (runs K R K R), 2x5x3x7", "ReduceMax",
                              random_floats({2, 5, 3, 7}, 28), {{"axes", ints_attr({1, 3})}}));
  cases.push_back(reduce_attr("ReduceMax int32 all axes keepdims 0, 30x40", "ReduceMax",
                              integers<int32_t>({30, 40}, 29, -100000, 100000), keep0));
  cases.push_back(
      reduce_input("ReduceMax opset 18 axes input [-2], 3x333x2", "ReduceMax", random_floats({3, 333, 2}, 30), {-2}));
  cases.push_back(reduce_attr("ReduceMin keepdims 0 all axes, 17x19", "ReduceMin", random_floats({17, 19}, 31), keep0));
  cases.push_back(reduce_attr("ReduceMin int64 axes [0], 12x5", "ReduceMin", integers<int64_t>({12, 5}, 32, -99, 99),
                              {{"axes", ints_attr({0})}}));
  cases.push_back(reduce_input("ReduceMin opset 18 noop_with_empty_axes, 4x6", "ReduceMin", random_floats({4, 6}, 33),
                               {}, {{"noop_with_empty_axes", int_attr(1)}}));

  // Special values: NaN propagates through Max/Min, infinities through LogSumExp,
  // log(0) = -inf, the mean of nothing is NaN.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor special = Tensor::from_vector<float>(
      {4, 5}, {1, nan, 3, -2, 0, -inf, -inf, -inf, -inf, -inf, 2, inf, -1, 5, 4, 0, 0, 0, 0, 0});
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceSum"})
    cases.push_back(reduce_attr(std::string(op) + " special values (NaN, infinities), 4x5", op, special,
                                {{"axes", ints_attr({1})}}));
  cases.push_back(reduce_attr("ReduceLogSum of zeros and positives, 4x5", "ReduceLogSum",
                              Tensor::from_vector<float>({4, 5}, std::vector<float>{1,   2,    3, 4, 5, 0, 0, 0, 0, 0,
                                                                                    0.5, 0.25, 0, 0, 1, 0, 0, 0, 0, 0}),
                              {{"axes", ints_attr({1})}}));
  cases.push_back(reduce_input("ReduceMean empty axis gives NaN, 3x0x4 -> 3x4", "ReduceMean",
                               Tensor(DType::Float32, {3, 0, 4}), {1}, keep0));
  return cases;
}

VkCase arg(const std::string& name, const std::string& op, Tensor x, int64_t axis, int64_t keepdims,
           int64_t select_last) {
  Attrs a{{"axis", int_attr(axis)}, {"keepdims", int_attr(keepdims)}};
  if (select_last >= 0) a["select_last_index"] = int_attr(select_last);
  return make_case(name, op, {std::move(x)}, std::move(a));
}

std::vector<VkCase> arg_cases() {
  std::vector<VkCase> cases;
  cases.push_back(arg("ArgMax axis 1 keepdims ties first, 3x50x4", "ArgMax", tied_floats({3, 50, 4}, 40), 1, 1, 0));
  cases.push_back(arg("ArgMax axis 1 select_last_index, 3x50x4", "ArgMax", tied_floats({3, 50, 4}, 40), 1, 1, 1));
  cases.push_back(arg("ArgMax axis -1 keepdims 0, 6x300", "ArgMax", tied_floats({6, 300}, 41, -200, 200), -1, 0, -1));
  cases.push_back(arg("ArgMax int32 axis 0, 20x7", "ArgMax", integers<int32_t>({20, 7}, 42, -5, 5), 0, 1, 0));
  cases.push_back(
      arg("ArgMin axis -1 keepdims 0 select_last_index, 6x300", "ArgMin", tied_floats({6, 300}, 43), -1, 0, 1));
  cases.push_back(arg("ArgMin axis 0 ties first, 33x5", "ArgMin", tied_floats({33, 5}, 44, -3, 3), 0, 1, 0));
  cases.push_back(
      arg("ArgMin int64 axis 1 select_last_index, 4x9x3", "ArgMin", integers<int64_t>({4, 9, 3}, 45, 0, 3), 1, 1, 1));
  cases.push_back(arg("ArgMax rank 1, 1000", "ArgMax", tied_floats({1000}, 46, -900, 900), 0, 0, 0));
  return cases;
}

VkCase softmax(const std::string& name, const std::string& op, Tensor x, std::optional<int64_t> axis, int64_t opset) {
  Attrs a;
  if (axis) a["axis"] = int_attr(*axis);
  VkCase c = make_case(name, op, {std::move(x)}, std::move(a));
  c.opset = opset;
  return c;
}

std::vector<VkCase> softmax_cases() {
  std::vector<VkCase> cases;
  cases.push_back(softmax("Softmax opset 13 default axis, 8x100", "Softmax", random_floats({8, 100}, 50), {}, 13));
  cases.push_back(
      softmax("Softmax opset 13 axis 1 (strided rows), 2x37x5", "Softmax", random_floats({2, 37, 5}, 51), 1, 13));
  cases.push_back(
      softmax("Softmax opset 11 axis 1 coerced to 2-D, 2x3x4x5", "Softmax", random_floats({2, 3, 4, 5}, 52), 1, 11));
  cases.push_back(softmax("Softmax opset 11 default axis, 3x7x2", "Softmax", random_floats({3, 7, 2}, 53), {}, 11));
  cases.push_back(softmax("Softmax opset 13 long rows with large values, 4x3000", "Softmax",
                          random_floats({4, 3000}, 54, -60.0f, 60.0f), -1, 13));
  cases.push_back(softmax("Softmax opset 13 many short rows, 500x9", "Softmax", random_floats({500, 9}, 55), -1, 13));
  cases.push_back(softmax("Softmax opset 13 long rows at unaligned offsets, 5x1001", "Softmax",
                          random_floats({5, 1001}, 64, -20.0f, 20.0f), -1, 13));
  cases.push_back(softmax("LogSoftmax opset 13 rows of 3 at unaligned offsets, 6x3", "LogSoftmax",
                          random_floats({6, 3}, 65), -1, 13));
  cases.push_back(softmax("Softmax rank 1, 17", "Softmax", random_floats({17}, 56), 0, 13));
  cases.push_back(softmax("LogSoftmax opset 13 axis 0 large values, 40x6", "LogSoftmax",
                          random_floats({40, 6}, 57, -50.0f, 50.0f), 0, 13));
  cases.push_back(
      softmax("LogSoftmax opset 11 axis -2 coerced, 3x4x5", "LogSoftmax", random_floats({3, 4, 5}, 58), -2, 11));
  cases.push_back(softmax("LogSoftmax opset 13 long rows, 3x1500", "LogSoftmax", random_floats({3, 1500}, 59), -1, 13));
  cases.push_back(softmax("Hardmax opset 13 ties first, 9x33", "Hardmax", tied_floats({9, 33}, 60, -4, 4), -1, 13));
  cases.push_back(softmax("Hardmax opset 13 axis 1, 2x40x3", "Hardmax", tied_floats({2, 40, 3}, 61), 1, 13));
  cases.push_back(
      softmax("Hardmax opset 11 axis 1 coerced, 2x3x4", "Hardmax", tied_floats({2, 3, 4}, 62, -2, 2), 1, 11));
  cases.push_back(
      softmax("Hardmax opset 13 long rows, 2x700", "Hardmax", tied_floats({2, 700}, 63, -500, 500), -1, 13));
  return cases;
}

VkCase layer_norm(const std::string& name, Tensor x, Tensor scale, std::optional<Tensor> bias, Attrs attrs,
                  std::set<size_t> constants, std::vector<bool> stats = {}) {
  VkCase c = make_case(name, "LayerNormalization", {std::move(x), std::move(scale), std::move(bias)}, std::move(attrs),
                       1 + stats.size(), std::move(constants));
  for (size_t i = 0; i < stats.size(); ++i)
    if (!stats[i]) c.node.outputs[i + 1] = "";
  return c;
}

std::vector<VkCase> norm_cases() {
  std::vector<VkCase> cases;
  // LayerNormalization (opset 17).
  cases.push_back(layer_norm("LayerNorm axis -1 constant Scale/B, 4x7x64", random_floats({4, 7, 64}, 70, 2.0f, 8.0f),
                             random_floats({64}, 71), random_floats({64}, 72), {}, {1, 2}));
  cases.push_back(layer_norm("LayerNorm axis 1 broadcast constant Scale, no B, Mean and InvStdDev, 3x5x20",
                             random_floats({3, 5, 20}, 73), random_floats({20}, 74), std::nullopt,
                             {{"axis", int_attr(1)}}, {1}, {true, true}));
  cases.push_back(layer_norm("LayerNorm axis -2 runtime Scale [20] and B [5, 20], epsilon 1e-2, 6x5x20",
                             random_floats({6, 5, 20}, 75), random_floats({20}, 76), random_floats({5, 20}, 77),
                             {{"axis", int_attr(-2)}, {"epsilon", float_attr(1e-2f)}}, {}));
  cases.push_back(layer_norm("LayerNorm Mean only, 16x48", random_floats({16, 48}, 78), random_floats({48}, 79),
                             random_floats({48}, 80), {}, {1, 2}, {true, false}));
  cases.push_back(layer_norm("LayerNorm InvStdDev only, axis 0, 3x4x5", random_floats({3, 4, 5}, 81),
                             random_floats({3, 4, 5}, 82), std::nullopt, {{"axis", int_attr(0)}}, {1}, {false, true}));
  cases.push_back(layer_norm("LayerNorm long rows, 3x2048", random_floats({3, 2048}, 83), random_floats({2048}, 84),
                             random_floats({2048}, 85), {}, {1, 2}));
  cases.push_back(layer_norm("LayerNorm axis 1 runtime Scale [1, 8] broadcast over rows [2, 8], 150x2x8",
                             random_floats({150, 2, 8}, 86), random_floats({1, 8}, 87), random_floats({8}, 88),
                             {{"axis", int_attr(1)}}, {2}));

  // RMSNormalization (opset 23): LayerNormalization's rows without the mean.
  for (VkCase c : {make_case("RMSNorm axis -1 constant scale, 4x7x64", "RMSNormalization",
                             {random_floats({4, 7, 64}, 110, -2.0f, 6.0f), random_floats({64}, 111)}, {}, 1, {1}),
                   make_case("RMSNorm axis 1 runtime scale [1, 8], epsilon 1e-2, 50x2x8", "RMSNormalization",
                             {random_floats({50, 2, 8}, 112), random_floats({1, 8}, 113)},
                             {{"axis", int_attr(1)}, {"epsilon", float_attr(1e-2f)}})}) {
    c.opset = 23;
    cases.push_back(std::move(c));
  }

  // GroupNormalization: scale and bias per group (opset 18, constant) or per channel (21).
  for (VkCase c : {make_case("GroupNorm opset 18 per-group constant scale/bias, 2x6x5x7", "GroupNormalization",
                             {random_floats({2, 6, 5, 7}, 114, -1.0f, 5.0f), random_floats({3}, 115),
                              random_floats({3}, 116)},
                             {{"num_groups", int_attr(3)}}, 1, {1, 2}),
                   make_case("GroupNorm opset 21 runtime per-channel scale/bias, epsilon 1e-3, 1x8x40x30",
                             "GroupNormalization",
                             {random_floats({1, 8, 40, 30}, 117), random_floats({8}, 118), random_floats({8}, 119)},
                             {{"num_groups", int_attr(2)}, {"epsilon", float_attr(1e-3f)}}),
                   make_case("GroupNorm opset 21 one channel per group, rank 3, 3x4x9", "GroupNormalization",
                             {random_floats({3, 4, 9}, 120), random_floats({4}, 121), random_floats({4}, 122)},
                             {{"num_groups", int_attr(4)}}, 1, {1, 2})}) {
    c.opset = c.name.find("opset 18") != std::string::npos ? 18 : 21;
    cases.push_back(std::move(c));
  }

  // InstanceNormalization.
  cases.push_back(make_case(
      "InstanceNorm constant scale/B, 2x3x9x11", "InstanceNormalization",
      {random_floats({2, 3, 9, 11}, 90, -1.0f, 5.0f), random_floats({3}, 91), random_floats({3}, 92)}, {}, 1, {1, 2}));
  cases.push_back(make_case("InstanceNorm runtime scale/B epsilon 1e-3, 1x4x50x40", "InstanceNormalization",
                            {random_floats({1, 4, 50, 40}, 93), random_floats({4}, 94), random_floats({4}, 95)},
                            {{"epsilon", float_attr(1e-3f)}}));
  cases.push_back(make_case("InstanceNorm rank 3, 2x5x17", "InstanceNormalization",
                            {random_floats({2, 5, 17}, 96), random_floats({5}, 97), random_floats({5}, 98)}, {}, 1,
                            {1, 2}));

  // MeanVarianceNormalization.
  cases.push_back(make_case("MVN default axes [0, 2, 3] (two reduced runs), 2x3x5x6", "MeanVarianceNormalization",
                            {random_floats({2, 3, 5, 6}, 100)}));
  cases.push_back(make_case("MVN axes [1], 4x10x3", "MeanVarianceNormalization", {random_floats({4, 10, 3}, 101)},
                            {{"axes", ints_attr({1})}}));
  cases.push_back(make_case("MVN axes [2, 3], 2x3x20x30", "MeanVarianceNormalization",
                            {random_floats({2, 3, 20, 30}, 102)}, {{"axes", ints_attr({2, 3})}}));
  VkCase mvn8 = make_case("MVN opset 8 across_channels, 2x3x4x5", "MeanVarianceNormalization",
                          {random_floats({2, 3, 4, 5}, 103)}, {{"across_channels", int_attr(1)}});
  mvn8.opset = 8;
  cases.push_back(mvn8);
  VkCase mvn8_mean = make_case("MVN opset 8 normalize_variance 0, 2x3x4x5", "MeanVarianceNormalization",
                               {random_floats({2, 3, 4, 5}, 104)}, {{"normalize_variance", int_attr(0)}});
  mvn8_mean.opset = 8;
  cases.push_back(mvn8_mean);

  // LpNormalization.
  Tensor with_zero_row = random_floats({6, 40}, 105);
  for (int64_t i = 0; i < 40; ++i) with_zero_row.data<float>()[2 * 40 + i] = 0.0f;
  cases.push_back(make_case("LpNorm p 2 axis -1 with a zero row, 6x40", "LpNormalization", {with_zero_row}));
  cases.push_back(make_case("LpNorm p 1 axis 0, 10x7", "LpNormalization", {random_floats({10, 7}, 106)},
                            {{"p", int_attr(1)}, {"axis", int_attr(0)}}));
  cases.push_back(make_case("LpNorm p 2 axis 1 long rows, 2x1200x3", "LpNormalization",
                            {random_floats({2, 1200, 3}, 107)}, {{"axis", int_attr(1)}}));
  return cases;
}

TEST(ReduceTactics, RuntimeAxesDecline) {
  TacticPlanner p("ReduceSum", 18);
  p.input(DType::Float32, {4, 5});
  p.input(DType::Int64, {1});
  p.output(DType::Float32, {4, 1});
  std::string why;
  EXPECT_FALSE(p.plan("reduce.row.f32", why));
  EXPECT_NE(why.find("not a build-time constant"), std::string::npos) << why;
}

TEST(ReduceTactics, MoreThanFourRunsDecline) {
  TacticPlanner p("ReduceSum", 18, {{"keepdims", int_attr(0)}});
  p.input(DType::Float32, {2, 3, 2, 3, 2, 3, 2, 3, 2});
  p.input(DType::Int64, {5}, axes_tensor({0, 2, 4, 6, 8}));
  p.output(DType::Float32, {3, 3, 3, 3});
  std::string why;
  EXPECT_FALSE(p.plan("reduce.workgroup.f32", why));
  EXPECT_NE(why.find("alternate"), std::string::npos) << why;
}

TEST(ReduceTactics, RepeatedAxisIsAnError) {
  TacticPlanner p("ReduceMax", 17, {{"axes", ints_attr({1, -1})}});
  p.input(DType::Float32, {4, 5});
  p.output(DType::Float32, {4, 1});
  std::string why;
  EXPECT_THROW(p.plan("reduce.row.f32", why), Error);
}

// Size-1 axes vanish and neighbouring axes of one kind merge: [4, 1, 6, 1, 5]
// reduced over axes 1 and 2 is rows (4 x stride 30, 5 x stride 1) of 6 x stride 5.
TEST(ReduceTactics, GeometryMergesAxes) {
  TacticPlanner p("ReduceSum", 18);
  p.input(DType::Float32, {4, 1, 6, 1, 5});
  p.input(DType::Int64, {2}, axes_tensor({1, 2}));
  p.output(DType::Float32, {4, 1, 1, 1, 5});
  std::string why;
  std::optional<LayerPlan> plan = p.plan("reduce.row.f32", why);
  ASSERT_TRUE(plan) << why;
  ASSERT_EQ(plan->dispatches.size(), 1u);
  const std::vector<uint32_t> expected = {1, 1, 4, 5, 0, 0, 30, 1, 1, 1, 1, 6, 0, 0, 0, 5, 20, 6};
  EXPECT_EQ(plan->dispatches[0].push, expected);
}

TEST(ReduceTactics, Fp16DeclinesIntegerLayers) {
  TacticPlanner p("ArgMax", 18, {{"axis", int_attr(1)}});
  p.input(DType::Int32, {4, 5});
  p.output(DType::Int64, {4, 1});
  std::string why;
  EXPECT_TRUE(p.plan("reduce.row.f32", why)) << why;
  EXPECT_FALSE(p.plan("reduce.row.f16", why));
  EXPECT_NE(why.find("no float tensors"), std::string::npos) << why;
}

TEST(ReduceTactics, SubgroupTacticsNeedSubgroups) {
  TacticPlanner p("Softmax", 13, {{"axis", int_attr(-1)}});
  p.input(DType::Float32, {4, 50});
  p.output(DType::Float32, {4, 50});
  p.device().subgroup_size = 0;
  std::string why;
  EXPECT_FALSE(p.plan("softmax.subgroup.f32", why));
  EXPECT_NE(why.find("subgroup"), std::string::npos) << why;
  EXPECT_TRUE(p.plan("softmax.workgroup.f32", why)) << why;
  EXPECT_TRUE(p.plan("softmax.row.f32", why)) << why;
}

// Omitted optional outputs (and an omitted B) are bound to a scratch buffer the shader never touches.
TEST(ReduceTactics, LayerNormOmittedOutputsBindScratch) {
  TacticPlanner p("LayerNormalization", 17);
  p.input(DType::Float32, {3, 8});
  p.input(DType::Float32, {8}, random_floats({8}, 1));
  p.output(DType::Float32, {3, 8});
  std::string why;
  std::optional<LayerPlan> plan = p.plan("layernorm.row.f32", why);
  ASSERT_TRUE(plan) << why;
  ASSERT_EQ(plan->scratch_bytes.size(), 1u);
  const std::vector<BindingRef>& b = plan->dispatches.at(0).bindings;
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[3], BindingRef::scratch(0));
  EXPECT_EQ(b[4], BindingRef::scratch(0));
  EXPECT_EQ(b[5], BindingRef::scratch(0));
}

TEST(ReduceTactics, Float64Declines) {
  TacticPlanner p("LayerNormalization", 17, {{"stash_type", int_attr(11)}});
  p.input(DType::Float32, {3, 8});
  p.input(DType::Float32, {8}, random_floats({8}, 1));
  p.output(DType::Float32, {3, 8});
  p.output(DType::Float64, {3, 1});
  std::string why;
  EXPECT_FALSE(p.plan("layernorm.subgroup.f32", why));
  EXPECT_NE(why.find("float64"), std::string::npos) << why;
}

}  // namespace

// CumSum: inner, middle and outer axes, exclusive and reverse, integer data.
std::vector<VkCase> cumsum_cases() {
  const auto axis = [](int64_t a) { return Tensor::from_vector<int64_t>({1}, {a}); };
  std::vector<VkCase> cases;
  cases.push_back(make_case("CumSum axis -1, 4x33", "CumSum", {random_floats({4, 33}, 130), axis(-1)}, {}, 1, {1}));
  cases.push_back(make_case("CumSum axis 1 exclusive, 3x50x7", "CumSum", {random_floats({3, 50, 7}, 131), axis(1)},
                            {{"exclusive", int_attr(1)}}, 1, {1}));
  cases.push_back(make_case("CumSum axis 0 reverse exclusive, 9x6", "CumSum", {random_floats({9, 6}, 132), axis(0)},
                            {{"exclusive", int_attr(1)}, {"reverse", int_attr(1)}}, 1, {1}));
  cases.push_back(make_case("CumSum int32 axis 1 reverse, 5x40", "CumSum",
                            {integers<int32_t>({5, 40}, 133, -1000, 1000), axis(1)}, {{"reverse", int_attr(1)}}, 1,
                            {1}));
  return cases;
}

// TopK: last and middle axes, largest and smallest, ties (index order), integer data,
// K = 0 and K = the whole axis, an omitted Indices output.
std::vector<VkCase> topk_cases() {
  const auto k = [](int64_t v) { return Tensor::from_vector<int64_t>({1}, {v}); };
  std::vector<VkCase> cases;
  const auto topk = [&](const std::string& name, Tensor x, int64_t kv, Attrs attrs = {}) {
    VkCase c = make_case(name, "TopK", {std::move(x), k(kv)}, std::move(attrs), 2, {1});
    c.opset = 11;
    return c;
  };
  cases.push_back(topk("TopK k 3, 5x17", random_floats({5, 17}, 140), 3));
  cases.push_back(topk("TopK smallest k 4 axis 1 ties, 3x9x5", tied_floats({3, 9, 5}, 141, -3, 3), 4,
                       {{"axis", int_attr(1)}, {"largest", int_attr(0)}}));
  cases.push_back(topk("TopK int32 k 2 axis 0, 8x6", integers<int32_t>({8, 6}, 142, -5, 5), 2, {{"axis", int_attr(0)}}));
  cases.push_back(topk("TopK whole axis, 2x12", random_floats({2, 12}, 143), 12));
  VkCase values_only = topk("TopK values only k 5, 4x40", random_floats({4, 40}, 144), 5);
  values_only.node.outputs[1] = "";
  cases.push_back(std::move(values_only));
  return cases;
}

// LRN: odd and even window sizes, a window wider than the channels, 2-D and 4-D inputs.
std::vector<VkCase> lrn_cases() {
  std::vector<VkCase> cases;
  const auto lrn = [&](const std::string& name, Tensor x, Attrs attrs) {
    VkCase c = make_case(name, "LRN", {std::move(x)}, std::move(attrs));
    c.opset = 13;
    cases.push_back(std::move(c));
  };
  lrn("LRN size 3 2x7x5x6", random_floats({2, 7, 5, 6}, 150), {{"size", int_attr(3)}});
  lrn("LRN size 4 alpha beta bias 1x6x9", random_floats({1, 6, 9}, 151),
      {{"size", int_attr(4)}, {"alpha", float_attr(0.02f)}, {"beta", float_attr(0.5f)}, {"bias", float_attr(2.0f)}});
  lrn("LRN size 9 wider than 5 channels 3x5", random_floats({3, 5}, 152), {{"size", int_attr(9)}});
  return cases;
}

VKG_VK_CASES(reduce) {
  std::vector<VkCase> cases = reduce_cases();
  for (auto* more : {arg_cases, softmax_cases, norm_cases, cumsum_cases, topk_cases, lrn_cases}) {
    std::vector<VkCase> extra = more();
    cases.insert(cases.end(), extra.begin(), extra.end());
  }
  return cases;
}

}  // namespace vkg::test
