// Elementwise reference kernels: broadcasting, dtypes, attributes across opsets
// and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "runtime/reference/ops/elementwise_util.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {
namespace {

using namespace test;

// A node `op` named "n" (the error-message tests below expect that name).
Node elementwise_node(const std::string& op, size_t num_inputs, size_t num_outputs = 1, Attrs attrs = {}) {
  return make_named_node("n", op, num_inputs, num_outputs, std::move(attrs));
}

std::vector<Tensor> run_all(const std::string& op, std::vector<const Tensor*> inputs, Attrs attrs = {},
                            int64_t opset = 17, size_t num_outputs = 1) {
  return test::run(elementwise_node(op, inputs.size(), num_outputs, std::move(attrs)), opset, inputs);
}

Tensor run_op(const std::string& op, std::vector<const Tensor*> inputs, Attrs attrs = {}, int64_t opset = 17) {
  return run_all(op, std::move(inputs), std::move(attrs), opset).at(0);
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> out;
  for (double d : t.to_doubles()) out.push_back(float(d));
  return out;
}

// Expects the message of the Error thrown by `statement` to contain `text`.
#define EXPECT_ERROR_WITH(statement, text)                                        \
  do {                                                                            \
    try {                                                                         \
      statement;                                                                  \
      ADD_FAILURE() << "no Error thrown";                                         \
    } catch (const Error& e) {                                                    \
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what(); \
    }                                                                             \
  } while (0)

// Element `index` of the broadcast output read from `t` the slow, obvious way.
float broadcast_read(const Tensor& t, const Shape& out_shape, int64_t index) {
  const size_t offset = out_shape.size() - t.shape().size();
  int64_t flat = 0;
  int64_t rest = index;
  std::vector<int64_t> coord(out_shape.size());
  for (size_t d = out_shape.size(); d-- > 0;) {
    coord[d] = rest % out_shape[d];
    rest /= out_shape[d];
  }
  for (size_t d = 0; d < t.shape().size(); ++d) {
    const int64_t c = t.shape()[d] == 1 ? 0 : coord[d + offset];
    flat = flat * t.shape()[d] + c;
  }
  return t.data<float>()[flat];
}

TEST(ElementwiseBroadcast, MatchesNaiveIndexingForManyShapes) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {}},
      {{}, {2, 3, 4}},
      {{2, 3, 4}, {4}},
      {{2, 3, 4}, {3, 1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{1, 4, 1, 6}, {3, 1, 5, 6}},
      {{5, 1}, {1, 7}},
      {{2, 1, 1, 3}, {2, 3}},
      {{1}, {1}},
      {{3, 1, 2}, {3, 4, 2}},
      {{2, 0, 3}, {3}},
  };
  uint32_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    const Tensor a = random_floats(sa, seed++);
    const Tensor b = random_floats(sb, seed++);
    const Tensor sum = run_op("Add", {&a, &b});
    const Tensor diff = run_op("Sub", {&a, &b});
    const Shape out_shape = broadcast_shapes(sa, sb);
    ASSERT_EQ(sum.shape(), out_shape);
    for (int64_t i = 0; i < sum.size(); ++i) {
      const float x = broadcast_read(a, out_shape, i), y = broadcast_read(b, out_shape, i);
      ASSERT_EQ(sum.data<float>()[i], x + y) << shape_to_string(sa) << " + " << shape_to_string(sb) << " at " << i;
      ASSERT_EQ(diff.data<float>()[i], x - y) << shape_to_string(sa) << " - " << shape_to_string(sb) << " at " << i;
    }
  }
}

TEST(ElementwiseBroadcast, PlanMergesDimensions) {
  const Node node = elementwise_node("Add", 2);
  const KernelContext ctx{node, 17, {}};
  const auto same = elementwise::make_broadcast_plan(ctx, {{2, 3, 4}, {2, 3, 4}});
  EXPECT_EQ(same.dims, (std::vector<int64_t>{24}));
  const auto channel = elementwise::make_broadcast_plan(ctx, {{1, 8, 5, 5}, {1, 8, 1, 1}});
  EXPECT_EQ(channel.dims, (std::vector<int64_t>{8, 25}));
  EXPECT_EQ(channel.strides[1], (std::vector<int64_t>{1, 0}));
  const auto scalar = elementwise::make_broadcast_plan(ctx, {{}, {1, 1}});
  EXPECT_EQ(scalar.out_shape, (Shape{1, 1}));
  EXPECT_EQ(scalar.dims, (std::vector<int64_t>{1}));
}

TEST(ElementwiseArithmetic, IntegerTypes) {
  const Tensor a = Tensor::from_vector<int32_t>({4}, {7, -7, 7, std::numeric_limits<int32_t>::max()});
  const Tensor b = Tensor::from_vector<int32_t>({4}, {2, 2, 0, 1});
  EXPECT_EQ(values<int32_t>(run_op("Div", {&a, &b})),
            (std::vector<int32_t>{3, -3, 0, std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(values<int32_t>(run_op("Add", {&a, &b}))[3], std::numeric_limits<int32_t>::min());  // wraps like numpy
  const Tensor u = Tensor::from_vector<uint8_t>({2}, {250, 3});
  const Tensor v = Tensor::from_vector<uint8_t>({2}, {10, 5});
  EXPECT_EQ(values<uint8_t>(run_op("Add", {&u, &v})), (std::vector<uint8_t>{4, 8}));
  EXPECT_EQ(values<uint8_t>(run_op("Sub", {&u, &v})), (std::vector<uint8_t>{240, 254}));
  EXPECT_EQ(values<uint8_t>(run_op("Mul", {&u, &v})), (std::vector<uint8_t>{196, 15}));
  const Tensor lowest = Tensor::from_vector<int64_t>({1}, {std::numeric_limits<int64_t>::min()});
  const Tensor minus_one = Tensor::from_vector<int64_t>({1}, {-1});
  EXPECT_EQ(values<int64_t>(run_op("Div", {&lowest, &minus_one}))[0], std::numeric_limits<int64_t>::min());
}

TEST(ElementwiseArithmetic, Float16AndFloat64) {
  const Tensor a = Tensor::from_vector<Half>({2}, {Half(1.5f), Half(-2.0f)});
  const Tensor b = Tensor::from_vector<Half>({1}, {Half(0.25f)});
  const Tensor sum = run_op("Add", {&a, &b});
  EXPECT_EQ(sum.dtype(), DType::Float16);
  EXPECT_EQ(floats(sum), (std::vector<float>{1.75f, -1.75f}));
  const Tensor c = Tensor::from_vector<double>({2}, {1.0, 3.0});
  const Tensor d = Tensor::from_vector<double>({2}, {3.0, 4.0});
  EXPECT_EQ(values<double>(run_op("Div", {&c, &d})), (std::vector<double>{1.0 / 3.0, 0.75}));
}

TEST(ElementwiseArithmetic, LegacyBroadcastBeforeOpset7) {
  const Tensor a = random_floats({2, 3, 4}, 7);
  const Tensor b = Tensor::from_vector<float>({3}, {10.0f, 20.0f, 30.0f});
  const Tensor y = run_op("Add", {&a, &b}, {{"broadcast", int_attr(1)}, {"axis", int_attr(1)}}, 6);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  for (int64_t i = 0; i < y.size(); ++i)
    EXPECT_EQ(y.data<float>()[i], a.data<float>()[i] + 10.0f * float((i / 4) % 3 + 1));
  EXPECT_ERROR_WITH(run_op("Add", {&a, &b}, {}, 6), "broadcast=1");
  const Tensor c = Tensor::from_vector<float>({4}, {1, 2, 3, 4});
  EXPECT_EQ(run_op("Mul", {&a, &c}, {{"broadcast", int_attr(1)}}, 6).shape(), (Shape{2, 3, 4}));
}

TEST(ElementwiseArithmetic, PowMixesTypes) {
  const Tensor xi = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  const Tensor yf = Tensor::from_vector<float>({3}, {4.0f, 5.0f, 6.0f});
  const Tensor a = run_op("Pow", {&xi, &yf});
  EXPECT_EQ(a.dtype(), DType::Int64);
  EXPECT_EQ(values<int64_t>(a), (std::vector<int64_t>{1, 32, 729}));
  const Tensor xf = Tensor::from_vector<float>({3}, {1.0f, 2.0f, 3.0f});
  const Tensor yi = Tensor::from_vector<uint32_t>({3}, {4, 5, 6});
  EXPECT_EQ(values<float>(run_op("Pow", {&xf, &yi})), (std::vector<float>{1.0f, 32.0f, 729.0f}));
  const Tensor xi32 = Tensor::from_vector<int32_t>({3}, {2, -3, 2});
  const Tensor yi32 = Tensor::from_vector<int32_t>({3}, {10, 3, -1});
  EXPECT_EQ(values<int32_t>(run_op("Pow", {&xi32, &yi32})), (std::vector<int32_t>{1024, -27, 0}));
  const Tensor half = Tensor::scalar<float>(0.5f);
  EXPECT_EQ(values<float>(run_op("Pow", {&xf, &half}))[1], std::sqrt(2.0f));
}

TEST(ElementwiseArithmetic, ModFollowsSignRules) {
  const Tensor a = Tensor::from_vector<int32_t>({4}, {-4, 7, 5, 4});
  const Tensor b = Tensor::from_vector<int32_t>({4}, {7, -3, 0, -2});
  EXPECT_EQ(values<int32_t>(run_op("Mod", {&a, &b})), (std::vector<int32_t>{3, -2, 0, 0}));
  EXPECT_EQ(values<int32_t>(run_op("Mod", {&a, &b}, {{"fmod", int_attr(1)}})), (std::vector<int32_t>{-4, 1, 0, 0}));
  const Tensor f = Tensor::from_vector<float>({2}, {-4.5f, 7.5f});
  const Tensor g = Tensor::from_vector<float>({2}, {2.0f, -2.0f});
  EXPECT_EQ(values<float>(run_op("Mod", {&f, &g}, {{"fmod", int_attr(1)}})), (std::vector<float>{-0.5f, 1.5f}));
  EXPECT_ERROR_WITH(run_op("Mod", {&f, &g}), "fmod must be 1");
}

TEST(ElementwiseArithmetic, BitShift) {
  const Tensor a = Tensor::from_vector<uint8_t>({3}, {16, 4, 1});
  const Tensor b = Tensor::from_vector<uint8_t>({3}, {1, 2, 9});
  EXPECT_EQ(values<uint8_t>(run_op("BitShift", {&a, &b}, {{"direction", string_attr("RIGHT")}})),
            (std::vector<uint8_t>{8, 1, 0}));
  EXPECT_EQ(values<uint8_t>(run_op("BitShift", {&a, &b}, {{"direction", string_attr("LEFT")}})),
            (std::vector<uint8_t>{32, 16, 0}));
  EXPECT_ERROR_WITH(run_op("BitShift", {&a, &b}), "direction");
}

TEST(ElementwiseVariadic, SumMeanMaxMinBroadcast) {
  const Tensor a = Tensor::from_vector<float>({3}, {1.0f, 5.0f, std::nanf("")});
  const Tensor b = Tensor::from_vector<float>({2, 1}, {2.0f, 4.0f});
  const Tensor c = Tensor::scalar<float>(3.0f);
  EXPECT_EQ(values<float>(run_op("Sum", {&b, &c})), (std::vector<float>{5.0f, 7.0f}));
  EXPECT_EQ(values<float>(run_op("Mean", {&b, &c})), (std::vector<float>{2.5f, 3.5f}));
  const Tensor mx = run_op("Max", {&a, &b, &c});
  ASSERT_EQ(mx.shape(), (Shape{2, 3}));
  const std::vector<float> m = values<float>(mx);
  EXPECT_EQ(m[0], 3.0f);
  EXPECT_EQ(m[1], 5.0f);
  EXPECT_TRUE(std::isnan(m[2]));  // NaN propagates like numpy.maximum
  EXPECT_EQ(m[3], 4.0f);
  const std::vector<float> mn = values<float>(run_op("Min", {&a, &b, &c}));
  EXPECT_EQ(mn[0], 1.0f);
  EXPECT_EQ(mn[1], 2.0f);
  EXPECT_TRUE(std::isnan(mn[5]));
  EXPECT_EQ(values<float>(run_op("Max", {&c})), (std::vector<float>{3.0f}));
  const Tensor i = Tensor::from_vector<uint64_t>({2}, {1, 1ull << 63});
  const Tensor j = Tensor::from_vector<uint64_t>({2}, {2, 3});
  EXPECT_EQ(values<uint64_t>(run_op("Max", {&i, &j})), (std::vector<uint64_t>{2, 1ull << 63}));
  const Tensor k = Tensor::from_vector<int32_t>({1}, {1});
  EXPECT_ERROR_WITH(run_op("Sum", {&a, &k}), "input 1 has type int32");
  EXPECT_ERROR_WITH(run_op("Sum", {}), "expects 1 to");
}

TEST(ElementwiseCompare, ComparisonsAndLogic) {
  const Tensor a = Tensor::from_vector<Half>({3}, {Half(1.0f), Half(2.0f), Half(3.0f)});
  const Tensor b = Tensor::from_vector<Half>({1}, {Half(2.0f)});
  const auto as_ints = [](const Tensor& t) {
    EXPECT_EQ(t.dtype(), DType::Bool);
    return t.to_int64s();
  };
  EXPECT_EQ(as_ints(run_op("Less", {&a, &b})), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(as_ints(run_op("LessOrEqual", {&a, &b})), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(as_ints(run_op("Greater", {&a, &b})), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(as_ints(run_op("GreaterOrEqual", {&a, &b})), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(as_ints(run_op("Equal", {&a, &b})), (std::vector<int64_t>{0, 1, 0}));
  const Tensor p = Tensor::from_vector<bool>({4}, {false, false, true, true});
  const Tensor q = Tensor::from_vector<bool>({4}, {false, true, false, true});
  EXPECT_EQ(as_ints(run_op("And", {&p, &q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(as_ints(run_op("Or", {&p, &q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(as_ints(run_op("Xor", {&p, &q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(as_ints(run_op("Not", {&p})), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(as_ints(run_op("Equal", {&p, &q})), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_ERROR_WITH(run_op("And", {&a, &b}), "expects bool");
  EXPECT_ERROR_WITH(run_op("Less", {&p, &q}), "has type bool");
}

TEST(ElementwiseWhere, BroadcastsAllThreeInputs) {
  const Tensor cond = Tensor::from_vector<bool>({2, 1}, {true, false});
  const Tensor x = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
  const Tensor y = Tensor::scalar<int64_t>(-1);
  const Tensor z = run_op("Where", {&cond, &x, &y});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  EXPECT_ERROR_WITH(run_op("Where", {&x, &x, &y}), "condition has type int64");
}

TEST(ElementwiseActivation, PReluBroadcastsSlopeOntoInput) {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {-1.0f, 2.0f, -3.0f, 4.0f});
  const Tensor slope = Tensor::from_vector<float>({2}, {0.5f, 0.25f});
  EXPECT_EQ(values<float>(run_op("PRelu", {&x, &slope})), (std::vector<float>{-0.5f, 2.0f, -1.5f, 4.0f}));
  const Tensor big = Tensor::from_vector<float>({2, 2, 1}, {1, 1, 1, 1});
  EXPECT_ERROR_WITH(run_op("PRelu", {&x, &big}), "cannot be broadcast to input shape");
  // Before opset 7 a 1-D slope is per channel.
  const Tensor x4 = Tensor::from_vector<float>({1, 2, 1, 2}, {-1.0f, -1.0f, -1.0f, -1.0f});
  EXPECT_EQ(values<float>(run_op("PRelu", {&x4, &slope}, {}, 6)), (std::vector<float>{-0.5f, -0.5f, -0.25f, -0.25f}));
}

TEST(ElementwiseActivation, SpotValues) {
  const Tensor x = Tensor::from_vector<float>({5}, {-100.0f, -1.0f, 0.0f, 1.0f, 100.0f});
  EXPECT_EQ(values<float>(run_op("Relu", {&x})), (std::vector<float>{0, 0, 0, 1, 100}));
  EXPECT_EQ(values<float>(run_op("LeakyRelu", {&x}))[1], -0.01f);
  EXPECT_EQ(values<float>(run_op("LeakyRelu", {&x}, {{"alpha", float_attr(0.5f)}}))[1], -0.5f);
  const std::vector<float> sig = values<float>(run_op("Sigmoid", {&x}));
  EXPECT_FLOAT_EQ(sig[3], 1.0f / (1.0f + std::exp(-1.0f)));
  EXPECT_EQ(sig[0], std::exp(-100.0f) / (1.0f + std::exp(-100.0f)));
  EXPECT_EQ(values<float>(run_op("HardSigmoid", {&x})), (std::vector<float>{0.0f, 0.3f, 0.5f, 0.7f, 1.0f}));
  EXPECT_FLOAT_EQ(values<float>(run_op("HardSwish", {&x}))[3], 1.0f * (1.0f / 6.0f + 0.5f));
  const std::vector<float> softplus = values<float>(run_op("Softplus", {&x}));
  EXPECT_EQ(softplus[4], 100.0f);
  EXPECT_FLOAT_EQ(softplus[2], std::log(2.0f));
  EXPECT_FLOAT_EQ(values<float>(run_op("Elu", {&x}, {{"alpha", float_attr(2.0f)}}))[1],
                  2.0f * (std::exp(-1.0f) - 1.0f));
  EXPECT_FLOAT_EQ(values<float>(run_op("Selu", {&x}))[3], 1.05070102214813232421875f);
  EXPECT_EQ(values<float>(run_op("ThresholdedRelu", {&x}))[3], 0.0f);
  EXPECT_FLOAT_EQ(values<float>(run_op("Softsign", {&x}))[3], 0.5f);
  EXPECT_FLOAT_EQ(values<float>(run_op("Mish", {&x}))[3], std::tanh(std::log1p(std::exp(1.0f))));
  EXPECT_EQ(values<float>(run_op("Mish", {&x}))[4], 100.0f);
  EXPECT_FLOAT_EQ(values<float>(run_op("Gelu", {&x}))[3], 0.5f * (1.0f + std::erf(1.0f / std::sqrt(2.0f))));
  EXPECT_NEAR(values<float>(run_op("Gelu", {&x}, {{"approximate", string_attr("tanh")}}))[3], 0.841192f, 1e-6f);
  EXPECT_THROW(run_op("Gelu", {&x}, {{"approximate", string_attr("fast")}}), Error);
  EXPECT_EQ(values<float>(run_op("Shrink", {&x}, {{"bias", float_attr(0.5f)}})),
            (std::vector<float>{-99.5f, -0.5f, 0, 0.5f, 99.5f}));
  EXPECT_EQ(values<float>(run_op("Sign", {&x})), (std::vector<float>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(values<float>(run_op("Abs", {&x})), (std::vector<float>{100, 1, 0, 1, 100}));
  EXPECT_EQ(values<float>(run_op("Neg", {&x})), (std::vector<float>{100, 1, -0.0f, -1, -100}));
  const Tensor halves = Tensor::from_vector<float>({4}, {0.5f, 1.5f, 2.5f, -2.5f});
  EXPECT_EQ(values<float>(run_op("Round", {&halves})), (std::vector<float>{0, 2, 2, -2}));
  EXPECT_EQ(values<float>(run_op("Floor", {&halves})), (std::vector<float>{0, 1, 2, -3}));
  EXPECT_EQ(values<float>(run_op("Ceil", {&halves})), (std::vector<float>{1, 2, 3, -2}));
}

TEST(ElementwiseActivation, IntegerUnaryOps) {
  const Tensor x = Tensor::from_vector<int8_t>({4}, {-128, -3, 0, 5});
  EXPECT_EQ(values<int8_t>(run_op("Relu", {&x})), (std::vector<int8_t>{0, 0, 0, 5}));
  EXPECT_EQ(values<int8_t>(run_op("Abs", {&x})), (std::vector<int8_t>{-128, 3, 0, 5}));  // wraps like numpy
  EXPECT_EQ(values<int8_t>(run_op("Neg", {&x})), (std::vector<int8_t>{-128, 3, 0, -5}));
  EXPECT_EQ(values<int8_t>(run_op("Sign", {&x})), (std::vector<int8_t>{-1, -1, 0, 1}));
  EXPECT_ERROR_WITH(run_op("Exp", {&x}), "input 0 has type int8, which is not supported (expects float types)");
  const Tensor u = Tensor::from_vector<uint16_t>({1}, {3});
  EXPECT_ERROR_WITH(run_op("Neg", {&u}), "uint16");
}

TEST(ElementwiseActivation, FloatPredicates) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::from_vector<float>({4}, {-inf, 1.0f, inf, std::nanf("")});
  EXPECT_EQ(run_op("IsNaN", {&x}).to_int64s(), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(run_op("IsInf", {&x}).to_int64s(), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(run_op("IsInf", {&x}, {{"detect_negative", int_attr(0)}}).to_int64s(), (std::vector<int64_t>{0, 0, 1, 0}));
}

TEST(ElementwiseActivation, MathOnFloat16And64) {
  const Tensor h = Tensor::from_vector<Half>({2}, {Half(0.0f), Half(1.0f)});
  const Tensor e = run_op("Exp", {&h});
  EXPECT_EQ(e.dtype(), DType::Float16);
  EXPECT_EQ(floats(e), (std::vector<float>{1.0f, float(Half(std::exp(1.0f)))}));
  const Tensor d = Tensor::from_vector<double>({1}, {2.0});
  EXPECT_EQ(values<double>(run_op("Sqrt", {&d}))[0], std::sqrt(2.0));
  EXPECT_EQ(values<double>(run_op("Erf", {&d}))[0], std::erf(2.0));
}

TEST(ElementwiseClip, AttributesAndOptionalInputs) {
  const Tensor x = Tensor::from_vector<float>({4}, {-5.0f, -0.5f, 0.5f, 5.0f});
  EXPECT_EQ(values<float>(run_op("Clip", {&x}, {{"min", float_attr(-1.0f)}, {"max", float_attr(1.0f)}}, 6)),
            (std::vector<float>{-1, -0.5f, 0.5f, 1}));
  EXPECT_EQ(values<float>(run_op("Clip", {&x}, {{"max", float_attr(0.0f)}}, 6)), (std::vector<float>{-5, -0.5f, 0, 0}));
  const Tensor lo = Tensor::scalar<float>(0.0f);
  const Tensor hi = Tensor::scalar<float>(1.0f);
  EXPECT_EQ(values<float>(run_op("Clip", {&x, &lo, &hi})), (std::vector<float>{0, 0, 0.5f, 1}));
  EXPECT_EQ(values<float>(run_op("Clip", {&x, nullptr, &hi})), (std::vector<float>{-5, -0.5f, 0.5f, 1}));
  EXPECT_EQ(values<float>(run_op("Clip", {&x, &lo})), (std::vector<float>{0, 0, 0.5f, 5}));
  EXPECT_EQ(values<float>(run_op("Clip", {&x})), values<float>(x));
  EXPECT_EQ(values<float>(run_op("Clip", {&x, &hi, &lo})), (std::vector<float>{0, 0, 0, 0}));  // min > max: max
  const Tensor i = Tensor::from_vector<int8_t>({3}, {-128, 0, 127});
  const Tensor imax = Tensor::scalar<int8_t>(100);
  EXPECT_EQ(values<int8_t>(run_op("Clip", {&i, nullptr, &imax})), (std::vector<int8_t>{-128, 0, 100}));
  EXPECT_ERROR_WITH(run_op("Clip", {&i, nullptr, &hi}), "input 2 has type float32");
  const Tensor vec = Tensor::from_vector<float>({2}, {0.0f, 1.0f});
  EXPECT_ERROR_WITH(run_op("Clip", {&x, &vec}), "must be a scalar");
}

TEST(ElementwiseConversion, CastBetweenTypes) {
  const Tensor x = Tensor::from_vector<float>({4}, {1.7f, -1.7f, 0.0f, 65520.0f});
  const Attrs to_int = {{"to", int_attr(6)}};
  EXPECT_EQ(values<int32_t>(run_op("Cast", {&x}, to_int)), (std::vector<int32_t>{1, -1, 0, 65520}));
  const Tensor h = run_op("Cast", {&x}, {{"to", int_attr(10)}});
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_TRUE(std::isinf(floats(h)[3]));
  EXPECT_EQ(run_op("Cast", {&x}, {{"to", int_attr(9)}}).to_int64s(), (std::vector<int64_t>{1, 1, 0, 1}));
  EXPECT_EQ(run_op("Cast", {&x}, {{"to", int_attr(16)}}).dtype(), DType::BFloat16);
  EXPECT_EQ(run_op("Cast", {&x}, {{"to", string_attr("INT64")}}, 5).dtype(), DType::Int64);
  EXPECT_ERROR_WITH(run_op("Cast", {&x}, {{"to", int_attr(8)}}), "(string) is not supported");
  EXPECT_ERROR_WITH(run_op("Cast", {&x}), "'to' is missing");
  const Tensor like = Tensor::scalar<double>(0.0);
  EXPECT_EQ(run_op("CastLike", {&x, &like}).dtype(), DType::Float64);
}

TEST(ElementwiseConversion, IdentityAndDropout) {
  const Tensor x = random_floats({2, 3}, 3);
  EXPECT_TRUE(run_op("Identity", {&x}).bit_equal(x));
  const std::vector<Tensor> out = run_all("Dropout", {&x}, {}, 13, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].bit_equal(x));
  EXPECT_EQ(out[1].dtype(), DType::Bool);
  EXPECT_EQ(out[1].to_int64s(), std::vector<int64_t>(6, 1));
  const Tensor ratio = Tensor::scalar<float>(0.3f);
  const Tensor training = Tensor::scalar<bool>(true);
  EXPECT_ERROR_WITH(run_op("Dropout", {&x, &ratio, &training}), "training mode with ratio 0.3");
  const Tensor zero = Tensor::scalar<float>(0.0f);
  EXPECT_TRUE(run_op("Dropout", {&x, &zero, &training}).bit_equal(x));
  EXPECT_EQ(run_all("Dropout", {&x}, {{"ratio", float_attr(0.2f)}}, 7, 2)[1].dtype(), DType::Float32);
}

TEST(ElementwiseConversion, QuantizeAndDequantizeLinear) {
  // Per tensor: halves round to even, then the zero point, then saturation.
  const Tensor x = Tensor::from_vector<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300.0f, -300.0f});
  const Tensor one = Tensor::scalar<float>(1.0f);
  const Tensor zp = Tensor::scalar<uint8_t>(10);
  const Tensor q = run_op("QuantizeLinear", {&x, &one, &zp}, {}, 13);
  EXPECT_EQ(q.dtype(), DType::UInt8);
  EXPECT_EQ(q.to_int64s(), (std::vector<int64_t>{10, 12, 12, 10, 255, 0}));
  // Blocked (opset 21): blocks of 2 along axis 1 of [2, 3], the last one partial; int16.
  const Tensor xb = Tensor::from_vector<float>({2, 3}, {4, 8, 9, -4, -8, 30});
  const Tensor sb = Tensor::from_vector<float>({2, 2}, {2, 3, 4, 10});
  const Tensor zb = Tensor::from_vector<int16_t>({2, 2}, {0, 1, -1, 1000});
  const Tensor qb = run_op("QuantizeLinear", {&xb, &sb, &zb}, {{"block_size", int_attr(2)}}, 21);
  EXPECT_EQ(qb.dtype(), DType::Int16);
  EXPECT_EQ(qb.to_int64s(), (std::vector<int64_t>{2, 4, 4, -2, -3, 1003}));
  const Tensor back = run_op("DequantizeLinear", {&qb, &sb, &zb}, {{"block_size", int_attr(2)}}, 21);
  EXPECT_EQ(floats(back), (std::vector<float>{4, 8, 9, -4, -8, 30}));
  // Per axis 0, output_dtype without a zero point.
  const Tensor sa = Tensor::from_vector<float>({2}, {0.5f, 2.0f});
  const Tensor qa = run_op("QuantizeLinear", {&xb, &sa}, {{"axis", int_attr(0)}, {"output_dtype", int_attr(3)}}, 21);
  EXPECT_EQ(qa.dtype(), DType::Int8);
  EXPECT_EQ(qa.to_int64s(), (std::vector<int64_t>{8, 16, 18, -2, -4, 15}));
  // Errors name the node.
  EXPECT_ERROR_WITH(run_op("QuantizeLinear", {&xb, &sb}, {}, 13), "QuantizeLinear 'n': a scale of shape [2, 2]");
  EXPECT_ERROR_WITH(run_op("QuantizeLinear", {&xb, &sa}, {{"axis", int_attr(0)}, {"output_dtype", int_attr(1)}}, 21),
                    "output_dtype 1 is not a supported quantized type");
  const Tensor z16 = Tensor::scalar<int16_t>(0);
  EXPECT_ERROR_WITH(run_op("QuantizeLinear", {&x, &one, &z16}, {}, 19),
                    "quantizing to int16 is not supported at opset 19");
}

TEST(ElementwiseConversion, DynamicQuantizeLinear) {
  const Tensor x = Tensor::from_vector<float>({4}, {0.0f, 2.0f, -3.0f, 0.0f});
  const std::vector<Tensor> out = run_all("DynamicQuantizeLinear", {&x}, {}, 11, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 5.0f / 255.0f);
  EXPECT_EQ(out[2].to_int64s(), std::vector<int64_t>{153});  // round(3 / (5 / 255)) = round(153.0)
  EXPECT_EQ(out[0].to_int64s(), (std::vector<int64_t>{153, 255, 0, 153}));
}

TEST(ElementwiseBinary, BitwiseOps) {
  const Tensor a = Tensor::from_vector<int8_t>({3}, {-1, 0x0f, -128});
  const Tensor b = Tensor::from_vector<int8_t>({3}, {0x55, 0x3c, 1});
  EXPECT_EQ(run_op("BitwiseAnd", {&a, &b}, {}, 18).to_int64s(), (std::vector<int64_t>{0x55, 0x0c, 0}));
  EXPECT_EQ(run_op("BitwiseOr", {&a, &b}, {}, 18).to_int64s(), (std::vector<int64_t>{-1, 0x3f, -127}));
  EXPECT_EQ(run_op("BitwiseXor", {&a, &b}, {}, 18).to_int64s(), (std::vector<int64_t>{-0x56, 0x33, -127}));
  EXPECT_EQ(run_op("BitwiseNot", {&a}, {}, 18).to_int64s(), (std::vector<int64_t>{0, -16, 127}));
  const Tensor u = Tensor::from_vector<uint16_t>({2}, {0, 0x1234});
  EXPECT_EQ(run_op("BitwiseNot", {&u}, {}, 18).to_int64s(), (std::vector<int64_t>{0xffff, 0xedcb}));
  const Tensor f = random_floats({2}, 1);
  EXPECT_ERROR_WITH(run_op("BitwiseAnd", {&f, &f}, {}, 18), "BitwiseAnd 'n': input 0 has type float32");
}

TEST(ElementwiseErrors, NameTheNode) {
  const Tensor a = random_floats({2, 3}, 1);
  const Tensor b = random_floats({4}, 2);
  EXPECT_ERROR_WITH(run_op("Add", {&a, &b}), "Add 'n': input shapes [2, 3] and [4] cannot be broadcast together");
  EXPECT_ERROR_WITH(run_op("Mul", {&a}), "Mul 'n': expects 2 inputs, got 1");
  EXPECT_ERROR_WITH(run_op("Relu", {&a, &b}), "Relu 'n': expects 1 input, got 2");
  const Tensor i = Tensor::from_vector<int64_t>({1}, {1});
  EXPECT_ERROR_WITH(run_op("Add", {&a, &i}), "Add 'n': inputs have different types float32 and int64");
  const Tensor flags = Tensor::from_vector<bool>({1}, {true});
  EXPECT_ERROR_WITH(run_op("Add", {&flags, &flags}), "Add 'n': input 0 has type bool");
}

}  // namespace
}  // namespace vkg
