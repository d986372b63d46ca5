// Conformance cases of the elementwise family (runtime/tactics/elementwise.cpp):
// every one-input op (with its attributes and integer forms), every two-input
// op with numpy and legacy (opset < 7) broadcasting, the variadic
// Sum/Mean/Max/Min, Where, Cast/CastLike between float, integer and bool
// types, BatchNormalization (per channel and per position), and the linear
// (de)quantizations. Sizes cover
// element counts with and without a multiple-of-4 tail (the vec4 tail path),
// broadcasts whose innermost dimension is and is not a multiple of 4 (where
// the vec4 tactics decline), several workgroups, and integer wrapping,
// truncating division and saturating conversion.
#include <cmath>
#include <limits>
#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Multiples of 0.25 in [lo, hi]: exact in fp16, with ties and zeros, so that
// comparisons, rounding and float -> int casts agree in every precision.
Tensor quarters(const Shape& shape, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(int(lo * 4), int(hi * 4));
  std::vector<float> v(size_t(num_elements(shape)));
  for (float& x : v) x = float(dist(rng)) / 4.0f;
  return Tensor::from_vector<float>(shape, v);
}

template <class T> Tensor integers(const Shape& shape, uint32_t seed, int64_t lo, int64_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(size_t(num_elements(shape)));
  for (T& x : v) x = T(dist(rng));
  return Tensor::from_vector<T>(shape, v);
}

Tensor floats(const Shape& shape, std::vector<float> v) { return Tensor::from_vector<float>(shape, v); }

VkCase with_opset(VkCase c, int64_t opset) {
  c.opset = opset;
  return c;
}

// 3 x 5 x 67 = 1005 elements: several workgroups and a tail of 1 after the vec4 elements.
const Shape kOdd = {3, 5, 67};

std::vector<VkCase> unary_cases() {
  std::vector<VkCase> cases;
  auto unary = [&](const std::string& op, Tensor x, Attrs attrs = {}, const std::string& note = "") {
    const std::string name = op + " " + x.describe() + note;
    cases.push_back(make_case(name, op, {std::move(x)}, std::move(attrs)));
  };
  // Inputs in each op's domain (and away from poles, where the reference and the
  // device round differently).
  unary("Abs", random_floats(kOdd, 1));
  unary("Acos", random_floats(kOdd, 2, -0.95f, 0.95f));
  unary("Acosh", random_floats(kOdd, 3, 1.0f, 6.0f));
  unary("Asin", random_floats(kOdd, 4, -0.95f, 0.95f));
  unary("Asinh", random_floats(kOdd, 5, -6.0f, 6.0f));
  unary("Atan", random_floats(kOdd, 6, -6.0f, 6.0f));
  unary("Atanh", random_floats(kOdd, 7, -0.95f, 0.95f));
  unary("Ceil", quarters(kOdd, 8));
  unary("Cos", random_floats(kOdd, 9, -6.0f, 6.0f));
  unary("Cosh", random_floats(kOdd, 10));
  unary("Erf", random_floats(kOdd, 11));
  unary("Exp", random_floats(kOdd, 12));
  unary("Floor", quarters(kOdd, 13));
  unary("Log", random_floats(kOdd, 14, 0.01f, 20.0f));
  unary("Neg", random_floats(kOdd, 15));
  unary("Reciprocal", random_floats(kOdd, 16, 0.1f, 4.0f));
  unary("Round", quarters(kOdd, 17));  // halves round to even
  unary("Sign", quarters(kOdd, 18));
  unary("Sin", random_floats(kOdd, 19, -6.0f, 6.0f));
  unary("Sinh", random_floats(kOdd, 20));
  unary("Sqrt", random_floats(kOdd, 21, 0.0f, 9.0f));
  unary("Tan", random_floats(kOdd, 22, -1.2f, 1.2f));
  unary("Tanh", random_floats(kOdd, 23, -6.0f, 6.0f));
  unary("Relu", random_floats(kOdd, 24));
  unary("Sigmoid", random_floats(kOdd, 25, -8.0f, 8.0f));
  unary("Softplus", random_floats(kOdd, 26, -8.0f, 8.0f));
  unary("Softsign", random_floats(kOdd, 27));
  unary("Elu", random_floats(kOdd, 28));
  unary("Elu", random_floats({4, 16}, 29), {{"alpha", float_attr(0.7f)}});
  unary("Celu", random_floats(kOdd, 30));
  unary("Celu", random_floats({4, 16}, 31), {{"alpha", float_attr(1.7f)}});
  unary("Selu", random_floats(kOdd, 32));
  unary("Selu", random_floats({4, 16}, 33), {{"alpha", float_attr(1.2f)}, {"gamma", float_attr(0.8f)}});
  unary("LeakyRelu", random_floats(kOdd, 34));
  unary("LeakyRelu", random_floats({4, 16}, 35), {{"alpha", float_attr(0.3f)}});
  unary("HardSigmoid", random_floats(kOdd, 36, -6.0f, 6.0f));
  unary("HardSigmoid", random_floats({4, 16}, 37), {{"alpha", float_attr(0.5f)}, {"beta", float_attr(0.25f)}});
  unary("HardSwish", random_floats(kOdd, 38, -5.0f, 5.0f));
  unary("ThresholdedRelu", quarters(kOdd, 39));  // quarters: the thresholds are exact in fp16
  unary("ThresholdedRelu", quarters({4, 16}, 40), {{"alpha", float_attr(-0.5f)}});
  unary("Shrink", quarters(kOdd, 41));
  unary("Shrink", quarters({4, 16}, 42), {{"lambd", float_attr(1.5f)}, {"bias", float_attr(0.3f)}});
  unary("Mish", random_floats(kOdd, 51, -8.0f, 8.0f));
  unary("Gelu", random_floats(kOdd, 52, -6.0f, 6.0f));
  unary("Gelu", random_floats({4, 16}, 53, -6.0f, 6.0f), {{"approximate", string_attr("tanh")}});

  // Integer and bool forms.
  unary("Abs", integers<int32_t>({7, 9}, 43, -100, 100));
  unary("Abs", Tensor::from_vector<int8_t>({6}, {-128, -127, -1, 0, 5, 127}));  // |-128| wraps to -128
  unary("Neg", integers<int64_t>({5, 13}, 44, -1000, 1000));
  unary("Neg", Tensor::from_vector<int8_t>({5}, {-128, -3, 0, 4, 127}));
  unary("Sign", integers<int32_t>({33}, 45, -3, 3));
  unary("Relu", integers<int32_t>({2, 17}, 46, -50, 50));
  unary("Relu", integers<int8_t>({2, 8}, 47, -50, 50));
  unary("Shrink", integers<int32_t>({40}, 48, -5, 5), {{"lambd", float_attr(1.5f)}, {"bias", float_attr(2.0f)}});
  unary("Shrink", Tensor::from_vector<int8_t>({4}, {-128, -100, 100, 127}), {{"bias", float_attr(-60.0f)}});
  unary("Not", bools({3, 11}, 49));
  unary("Not", bools({64}, 50));

  // IsNaN / IsInf with special values.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor special = floats({3, 3}, {1.0f, -inf, nan, 0.0f, inf, -2.5f, nan, 6e4f, -0.0f});
  unary("IsNaN", special);
  unary("IsNaN", random_floats({8, 8}, 51));
  unary("IsInf", special);
  unary("IsInf", special, {{"detect_negative", int_attr(0)}}, " detect_negative=0");
  unary("IsInf", special, {{"detect_positive", int_attr(0)}}, " detect_positive=0");
  // Abs / Neg / Relu / Sign keep NaN and infinities.
  unary("Sign", floats({5}, {nan, -inf, inf, 0.0f, -0.0f}));
  unary("Relu", floats({4}, {nan, -inf, inf, -1.0f}));
  unary("Exp", floats({4}, {-inf, inf, 100.0f, -100.0f}));
  unary("Log", floats({4}, {0.0f, -1.0f, inf, 1.0f}));
  unary("Sqrt", floats({3}, {-1.0f, inf, 0.0f}));
  unary("Tanh", floats({5}, {nan, -inf, inf, 50.0f, -50.0f}));
  unary("Sigmoid", floats({4}, {-inf, inf, 100.0f, -100.0f}));

  // A bigger one: several vec4 workgroups.
  unary("Sigmoid", random_floats({8, 3, 32, 32}, 52, -6.0f, 6.0f));
  unary("Relu", random_floats({1}, 53));
  unary("Exp", random_floats({}, 54));
  return cases;
}

std::vector<VkCase> clip_cases() {
  std::vector<VkCase> cases;
  const Tensor x = random_floats(kOdd, 60, -4.0f, 4.0f);
  // Opset 6: attributes.
  cases.push_back(with_opset(
      make_case("Clip opset 6 min -1 max 2", "Clip", {x}, {{"min", float_attr(-1.0f)}, {"max", float_attr(2.0f)}}), 6));
  cases.push_back(with_opset(make_case("Clip opset 6 max only", "Clip", {x}, {{"max", float_attr(0.5f)}}), 6));
  // Opset 13: constant inputs, either omitted.
  cases.push_back(make_case("Clip min -1.5 max 1", "Clip",
                            {x, Tensor::scalar<float>(-1.5f), Tensor::scalar<float>(1.0f)}, {}, 1, {1, 2}));
  cases.push_back(make_case("Clip min only", "Clip", {x, Tensor::scalar<float>(0.25f), std::nullopt}, {}, 1, {1}));
  cases.push_back(make_case("Clip max only", "Clip", {x, std::nullopt, Tensor::scalar<float>(-0.5f)}, {}, 1, {2}));
  cases.push_back(make_case("Clip no bounds", "Clip", {random_floats({4, 8}, 61)}));
  cases.push_back(make_case("Clip min > max", "Clip", {x, Tensor::scalar<float>(1.0f), Tensor::scalar<float>(-1.0f)},
                            {}, 1, {1, 2}));
  cases.push_back(
      make_case("Clip int32", "Clip",
                {integers<int32_t>({5, 9}, 62, -100, 100), Tensor::scalar<int32_t>(-20), Tensor::scalar<int32_t>(30)},
                {}, 1, {1, 2}));
  cases.push_back(make_case("Clip int64 max only", "Clip",
                            {integers<int64_t>({40}, 63, -100, 100), std::nullopt, Tensor::scalar<int64_t>(7)}, {}, 1,
                            {2}));
  cases.push_back(make_case(
      "Clip uint8", "Clip",
      {integers<uint8_t>({24}, 64, 0, 255), Tensor::scalar<uint8_t>(10), Tensor::scalar<uint8_t>(200)}, {}, 1, {1, 2}));
  return cases;
}

std::vector<VkCase> binary_cases() {
  std::vector<VkCase> cases;
  auto binary = [&](const std::string& name, const std::string& op, Tensor a, Tensor b, Attrs attrs = {}) {
    const std::string full = op + " " + name + " " + a.describe() + " " + b.describe();
    cases.push_back(make_case(full, op, {std::move(a), std::move(b)}, std::move(attrs)));
  };
  // Broadcast patterns: equal shapes (one row, tail), scalar, outer broadcast
  // with rows of 8 (vec4), rows of 5 (scalar only), both sides broadcast.
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    const float lo = op == "Div" ? 0.5f : -3.0f;
    binary("same shape", op, random_floats(kOdd, 70), random_floats(kOdd, 71, lo, 3.0f));
    binary("scalar", op, random_floats({4, 33}, 72), random_floats({}, 73, lo, 3.0f));
    binary("outer broadcast", op, random_floats({2, 3, 4, 8}, 74), random_floats({3, 1, 8}, 75, lo, 3.0f));
    binary("rows of 5", op, random_floats({2, 3, 5}, 76), random_floats({5}, 77, lo, 3.0f));
    binary("both broadcast", op, random_floats({2, 1, 7}, 78), random_floats({1, 3, 1}, 79, lo, 3.0f));
    binary("scalar first", op, random_floats({1}, 80, lo, 3.0f), random_floats({3, 8}, 81, 0.5f, 3.0f));
  }
  binary("large", "Add", random_floats({4, 16, 256}, 82), random_floats({16, 1}, 83));
  binary("per column", "Mul", random_floats({64, 12}, 84), random_floats({12}, 85));
  // Integers: wrapping, truncating division, division by zero.
  binary("int32", "Add", integers<int32_t>({5, 13}, 86, -1000, 1000), integers<int32_t>({13}, 87, -1000, 1000));
  binary("int64", "Sub", integers<int64_t>({5, 12}, 88, -1000, 1000), integers<int64_t>({5, 1}, 89, -1000, 1000));
  binary("int32", "Mul", integers<int32_t>({50}, 90, -3000, 3000), integers<int32_t>({50}, 91, -3000, 3000));
  binary("uint8 wraps", "Add", integers<uint8_t>({4, 8}, 92, 0, 255), integers<uint8_t>({4, 8}, 93, 0, 255));
  binary("int8 wraps", "Mul", integers<int8_t>({4, 8}, 94, -128, 127), integers<int8_t>({8}, 95, -128, 127));
  binary("uint8 wraps", "Sub", integers<uint8_t>({20}, 96, 0, 255), integers<uint8_t>({20}, 97, 0, 255));
  binary("int32 truncates", "Div", integers<int32_t>({6, 10}, 98, -100, 100), integers<int32_t>({10}, 99, -7, 7));
  binary("int32 by zero and -1", "Div",
         Tensor::from_vector<int32_t>({4}, {7, -7, 5, std::numeric_limits<int32_t>::min()}),
         Tensor::from_vector<int32_t>({4}, {0, 2, -1, -1}));
  binary("uint16", "Div", integers<uint16_t>({16}, 100, 0, 65535), integers<uint16_t>({16}, 101, 1, 300));

  // Pow: float exponents on positive bases, integer exponents on any base,
  // and mixed types (opset 12+).
  binary("positive base", "Pow", random_floats(kOdd, 102, 0.1f, 3.0f), random_floats(kOdd, 103, -2.0f, 2.0f));
  binary("quarter exponents", "Pow", quarters({6, 8}, 104), quarters({8}, 105, -3.0f, 3.0f));
  binary("int64 exponent", "Pow", quarters({3, 7}, 106), integers<int64_t>({7}, 107, -3, 4));
  binary("int32 base and exponent", "Pow", integers<int32_t>({4, 12}, 108, -6, 6), integers<int32_t>({12}, 109, -2, 7));
  binary("int32 base float exponent", "Pow", integers<int32_t>({20}, 110, 2, 9), random_floats({20}, 111, 0.1f, 2.5f));
  binary("specials", "Pow", floats({8}, {0.0f, 0.0f, 0.0f, -2.0f, -2.0f, 1.0f, 5.0f, -0.5f}),
         floats({8}, {2.0f, 0.0f, -1.0f, 0.5f, 3.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f, -2.0f}));

  // Mod: fmod on floats; integers with both sign conventions.
  binary("fmod float", "Mod", quarters(kOdd, 112, -10.0f, 10.0f), quarters({67}, 113, 0.5f, 3.0f),
         {{"fmod", int_attr(1)}});
  binary("fmod negative divisors", "Mod", quarters({4, 8}, 114, -10.0f, 10.0f), quarters({8}, 115, -3.0f, -0.5f),
         {{"fmod", int_attr(1)}});
  binary("int32 python", "Mod", integers<int32_t>({6, 9}, 116, -50, 50), integers<int32_t>({9}, 117, -7, 7));
  binary("int32 fmod", "Mod", integers<int32_t>({6, 9}, 118, -50, 50), integers<int32_t>({9}, 119, -7, 7),
         {{"fmod", int_attr(1)}});
  binary("int64 python", "Mod", integers<int64_t>({32}, 120, -50, 50), integers<int64_t>({}, 121, -9, -2));

  // Comparisons on quarters (exact in fp16: ties are real), ints and bools.
  for (const std::string op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}) {
    binary("float", op, quarters({3, 4, 8}, 122, -1.0f, 1.0f), quarters({4, 1}, 123, -1.0f, 1.0f));
    binary("float odd", op, quarters(kOdd, 124, -1.0f, 1.0f), quarters({67}, 125, -1.0f, 1.0f));
    binary("int32", op, integers<int32_t>({5, 12}, 126, -3, 3), integers<int32_t>({12}, 127, -3, 3));
  }
  binary("uint32", "Less", Tensor::from_vector<uint32_t>({4}, {0, 5, 2147483647u, 7}),
         Tensor::from_vector<uint32_t>({4}, {1, 5, 3, 2147483647u}));
  binary("bool", "Equal", bools({4, 12}, 128), bools({12}, 129));
  for (const std::string op : {"And", "Or", "Xor"}) {
    binary("bool", op, bools({4, 12}, 130), bools({12}, 131));
    binary("bool odd", op, bools({3, 7}, 132), bools({3, 1}, 133));
  }
  // BitShift on unsigned types, shift amounts beyond the width included.
  binary("uint8 left", "BitShift", integers<uint8_t>({4, 12}, 134, 0, 255), integers<uint8_t>({12}, 135, 0, 9),
         {{"direction", string_attr("LEFT")}});
  binary("uint8 right", "BitShift", integers<uint8_t>({4, 12}, 136, 0, 255), integers<uint8_t>({12}, 137, 0, 9),
         {{"direction", string_attr("RIGHT")}});
  binary("uint32 left", "BitShift", integers<uint32_t>({21}, 138, 0, 100000), integers<uint32_t>({21}, 139, 0, 40),
         {{"direction", string_attr("LEFT")}});
  binary("uint16 right", "BitShift", integers<uint16_t>({16}, 140, 0, 65535), integers<uint16_t>({}, 141, 3, 3),
         {{"direction", string_attr("RIGHT")}});

  // PRelu: the slope broadcasts onto x.
  binary("per channel", "PRelu", random_floats({2, 3, 4, 8}, 142), random_floats({3, 1, 1}, 143, 0.0f, 1.0f));
  binary("per column odd", "PRelu", random_floats({2, 3, 5}, 144), random_floats({5}, 145, 0.0f, 1.0f));
  binary("scalar slope", "PRelu", random_floats(kOdd, 146), random_floats({1}, 147, 0.0f, 1.0f));
  binary("int32", "PRelu", integers<int32_t>({3, 8}, 148, -20, 20), integers<int32_t>({8}, 149, -3, 3));
  cases.push_back(with_opset(make_case("PRelu opset 6 per channel slope [3]", "PRelu",
                                       {random_floats({2, 3, 4, 5}, 150), random_floats({3}, 151, 0.0f, 1.0f)}),
                             6));

  // Legacy broadcasting (opset < 7): broadcast=1 at an axis or trailing.
  cases.push_back(with_opset(
      make_case("Add opset 6 broadcast axis 1", "Add", {random_floats({2, 3, 4, 5}, 152), random_floats({3, 4}, 153)},
                {{"broadcast", int_attr(1)}, {"axis", int_attr(1)}}),
      6));
  cases.push_back(
      with_opset(make_case("Mul opset 6 broadcast trailing", "Mul",
                           {random_floats({2, 3, 8}, 154), random_floats({8}, 155)}, {{"broadcast", int_attr(1)}}),
                 6));
  cases.push_back(with_opset(
      make_case("Sub opset 6 equal shapes", "Sub", {random_floats({3, 7}, 156), random_floats({3, 7}, 157)}), 6));
  cases.push_back(with_opset(
      make_case("Greater opset 6 broadcast axis -2", "Greater", {quarters({2, 3, 4}, 158), quarters({3}, 159)},
                {{"broadcast", int_attr(1)}, {"axis", int_attr(-2)}}),
      6));

  // Constant operands (bound as packed weights).
  cases.push_back(
      make_case("Add const bias", "Add", {random_floats({4, 3, 16}, 160), random_floats({3, 1}, 161)}, {}, 1, {1}));
  cases.push_back(make_case("Div const numerator", "Div",
                            {random_floats({8}, 162), random_floats({6, 8}, 163, 0.5f, 3.0f)}, {}, 1, {0}));
  // Empty output.
  binary("empty", "Add", random_floats({0, 3}, 164), random_floats({3}, 165));
  return cases;
}

std::vector<VkCase> variadic_cases() {
  std::vector<VkCase> cases;
  auto variadic = [&](const std::string& name, const std::string& op, std::vector<std::optional<Tensor>> inputs,
                      std::set<size_t> constants = {}) {
    cases.push_back(make_case(op + " " + name, op, std::move(inputs), {}, 1, std::move(constants)));
  };
  for (const std::string op : {"Sum", "Mean", "Max", "Min"}) {
    variadic("1 input", op, {random_floats(kOdd, 170)});
    variadic("2 inputs", op, {random_floats({3, 8}, 171), random_floats({2, 3, 8}, 172)});
    variadic("3 inputs broadcast", op,
             {random_floats({3, 1, 8}, 173), random_floats({4, 8}, 174), random_floats({2, 1, 1, 1}, 175)});
    variadic("4 inputs odd", op,
             {random_floats({5, 7}, 176), random_floats({7}, 177), random_floats({5, 1}, 178),
              random_floats({3, 5, 7}, 179)});
    variadic("3 inputs int32", op,
             {integers<int32_t>({4, 9}, 180, -100, 100), integers<int32_t>({9}, 181, -100, 100),
              integers<int32_t>({4, 1}, 182, -100, 100)});
    variadic("const input", op, {random_floats({2, 12}, 183), random_floats({12}, 184)}, {1});
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  variadic("NaN", "Max", {floats({4}, {nan, 1.0f, 2.0f, nan}), floats({4}, {1.0f, nan, 3.0f, nan})});
  variadic("NaN", "Min", {floats({4}, {nan, 1.0f, 2.0f, nan}), floats({4}, {1.0f, nan, 3.0f, nan})});
  variadic("uint8 wraps", "Sum", {integers<uint8_t>({16}, 185, 0, 255), integers<uint8_t>({16}, 186, 0, 255)});
  variadic("int64 truncates", "Mean",
           {integers<int64_t>({16}, 187, -100, 100), integers<int64_t>({16}, 188, -100, 100)});
  return cases;
}

std::vector<VkCase> where_cases() {
  std::vector<VkCase> cases;
  auto where = [&](const std::string& name, Tensor c, Tensor x, Tensor y) {
    cases.push_back(make_case("Where " + name, "Where", {std::move(c), std::move(x), std::move(y)}));
  };
  where("float broadcast", bools({2, 1, 8}, 190), random_floats({3, 8}, 191), random_floats({}, 192));
  where("float same shape odd", bools(kOdd, 193), random_floats(kOdd, 194), random_floats(kOdd, 195));
  where("float rows of 5", bools({5}, 196), random_floats({4, 5}, 197), random_floats({4, 1}, 198));
  where("int64", bools({4, 12}, 199), integers<int64_t>({4, 12}, 200, -1000, 1000),
        integers<int64_t>({12}, 201, -1000, 1000));
  where("bool", bools({3, 4}, 202), bools({3, 4}, 203), bools({4}, 204));
  where("int32 scalar condition", bools({}, 205), integers<int32_t>({2, 3, 4}, 206, -9, 9),
        integers<int32_t>({2, 3, 4}, 207, -9, 9));
  where("large", bools({16, 1, 64}, 208), random_floats({16, 32, 64}, 209), random_floats({32, 64}, 210));
  cases.push_back(make_case("Where const values", "Where",
                            {bools({6, 8}, 211), random_floats({8}, 212), random_floats({6, 1}, 213)}, {}, 1, {1, 2}));
  return cases;
}

std::vector<VkCase> cast_cases() {
  std::vector<VkCase> cases;
  auto cast = [&](const std::string& name, Tensor x, DType to) {
    const std::string full = "Cast " + name + " " + x.describe() + " to " + dtype_name(to);
    cases.push_back(make_case(full, "Cast", {std::move(x)}, {{"to", int_attr(dtype_to_onnx(to))}}));
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Float -> integer: truncation toward zero, saturation, NaN -> 0.
  cast("truncates", quarters(kOdd, 220, -300.0f, 300.0f), DType::Int32);
  cast("truncates", quarters({4, 8}, 221, -300.0f, 300.0f), DType::Int64);
  cast("saturates", quarters({40}, 222, -300.0f, 300.0f), DType::UInt8);
  cast("saturates", quarters({40}, 223, -300.0f, 300.0f), DType::Int8);
  cast("saturates", quarters({40}, 224, -300.0f, 300.0f), DType::Int16);
  cast("specials", floats({6}, {nan, inf, -inf, 3e9f, -3e9f, -0.75f}), DType::Int32);
  cast("to bool", quarters({5, 9}, 225, -1.0f, 1.0f), DType::Bool);
  cast("NaN to bool", floats({3}, {nan, 0.0f, -0.0f}), DType::Bool);
  // Float -> float: rounding through float16 / bfloat16 in fp32 layers.
  cast("rounds", random_floats(kOdd, 226, -100.0f, 100.0f), DType::Float16);
  cast("rounds", random_floats({4, 16}, 227, -100.0f, 100.0f), DType::BFloat16);
  cast("overflows", floats({4}, {70000.0f, -70000.0f, 65504.0f, 1e-8f}), DType::Float16);
  cast("identity", random_floats({3, 5}, 228), DType::Float32);
  cast("widens", random_floats({4, 8}, 229).cast(DType::Float16), DType::Float32);
  // Integer -> float, integer, bool.
  cast("converts", integers<int32_t>(kOdd, 230, -60000, 60000), DType::Float32);
  cast("rounds", integers<int32_t>({24}, 231, -100000, 100000), DType::Float16);
  cast("narrows", integers<int64_t>({4, 8}, 232, -100000, 100000), DType::Int32);
  cast("wraps", integers<int32_t>({40}, 233, -1000, 1000), DType::UInt8);
  cast("wraps", integers<int32_t>({40}, 234, -1000, 1000), DType::Int8);
  cast("wraps", integers<int32_t>({40}, 235, -100000, 100000), DType::UInt16);
  cast("wraps", integers<uint8_t>({16}, 236, 0, 255), DType::Int8);
  cast("sign-extends", integers<int8_t>({16}, 237, -128, 127), DType::Int64);
  cast("to bool", integers<int32_t>({3, 7}, 238, -2, 2), DType::Bool);
  cast("from bool", bools({4, 9}, 239), DType::Float32);
  cast("from bool", bools({4, 9}, 240), DType::Int64);
  cast("uint32", Tensor::from_vector<uint32_t>({4}, {0, 1, 65000, 12345}), DType::Float32);
  cases.push_back(with_opset(make_case("Cast opset 1 to \"INT32\"", "Cast", {quarters({12}, 241, -9.0f, 9.0f)},
                                       {{"to", string_attr("INT32")}}),
                             1));
  cases.push_back(make_case("CastLike float to int64", "CastLike",
                            {quarters({3, 8}, 242, -50.0f, 50.0f), Tensor::from_vector<int64_t>({1}, {0})}, {}, 1,
                            {1}));
  cases.push_back(make_case("CastLike int32 to float", "CastLike",
                            {integers<int32_t>({3, 8}, 243, -50, 50), floats({1}, {0.0f})}, {}, 1, {1}));
  cases.push_back(make_case("CastLike float to float16", "CastLike",
                            {random_floats({2, 8}, 244), Tensor::from_vector<Half>({1}, {Half(0.0f)})}, {}, 1, {1}));
  return cases;
}

std::vector<VkCase> batchnorm_cases() {
  std::vector<VkCase> cases;
  auto batchnorm = [&](const std::string& name, const Shape& x, const Shape& p, uint32_t seed, Attrs attrs = {},
                       int64_t opset = 15) {
    VkCase c = make_case("BatchNormalization " + name + " " + shape_to_string(x), "BatchNormalization",
                         {random_floats(x, seed), random_floats(p, seed + 1, 0.5f, 2.0f), random_floats(p, seed + 2),
                          random_floats(p, seed + 3), random_floats(p, seed + 4, 0.2f, 2.0f)},
                         std::move(attrs), 1, {1, 2, 3, 4});
    c.opset = opset;
    cases.push_back(std::move(c));
  };
  batchnorm("per channel odd spatial", {2, 3, 5, 7}, {3}, 250);
  batchnorm("per channel spatial % 4 == 0", {2, 4, 8, 8}, {4}, 255, {{"epsilon", float_attr(1e-3f)}});
  batchnorm("rank 2, 8 channels", {4, 8}, {8}, 260);
  batchnorm("rank 2, 5 channels", {4, 5}, {5}, 265);
  batchnorm("rank 3", {3, 6, 20}, {6}, 270);
  batchnorm("opset 7 per position (spatial=0)", {2, 3, 4, 4}, {3, 4, 4}, 275, {{"spatial", int_attr(0)}}, 7);
  batchnorm("opset 9", {2, 16, 9, 9}, {16}, 280, {}, 9);
  return cases;
}

}  // namespace

// QuantizeLinear and DequantizeLinear: per tensor (halfway quotients that round to even),
// per axis, per block with a partial last block (opset 21), 8- and 16-bit types, an int32
// x, omitted zero points, float16 scales (opset 19), runtime and constant parameters;
// DynamicQuantizeLinear on mixed, positive and constant data.
std::vector<VkCase> quantize_cases() {
  std::vector<VkCase> cases;
  const auto q = [&](const std::string& name, const std::string& op, int64_t opset,
                     std::vector<std::optional<Tensor>> inputs, Attrs attrs = {}, std::set<size_t> constants = {}) {
    cases.push_back(with_opset(make_case(name, op, std::move(inputs), std::move(attrs), 1, std::move(constants)), opset));
  };
  const Shape blocked_scale = {3, 3, 5};
  q("QuantizeLinear uint8 ties per tensor", "QuantizeLinear", 13,
    {quarters(kOdd, 300, -40, 40), Tensor::scalar<float>(0.5f), Tensor::scalar<uint8_t>(128)}, {}, {1, 2});
  q("QuantizeLinear int8 per axis runtime scale", "QuantizeLinear", 13,
    {random_floats({2, 4, 33}, 301), floats({4}, {0.02f, 0.05f, 0.01f, 0.1f}),
     Tensor::from_vector<int8_t>({4}, {0, -3, 7, 100})});
  q("QuantizeLinear int16 blocked axis 1", "QuantizeLinear", 21,
    {random_floats({3, 8, 5}, 302, -300, 300), random_floats(blocked_scale, 303, 0.005f, 0.02f),
     integers<int16_t>(blocked_scale, 304, -1000, 1000)},
    {{"axis", int_attr(1)}, {"block_size", int_attr(3)}});
  q("QuantizeLinear uint16 output_dtype no zero point", "QuantizeLinear", 21,
    {random_floats(kOdd, 305, -10, 700), Tensor::scalar<float>(0.01f)}, {{"output_dtype", int_attr(4)}});
  q("QuantizeLinear int32 x", "QuantizeLinear", 19, {integers<int32_t>({7, 9}, 306, -500, 500), Tensor::scalar<float>(1.5f)});
  q("QuantizeLinear float16 scale", "QuantizeLinear", 19,
    {random_floats({5, 6}, 307), Tensor::scalar<float>(0.03f).cast(DType::Float16), Tensor::scalar<int8_t>(-5)}, {},
    {1});
  q("DequantizeLinear uint8 per tensor", "DequantizeLinear", 13,
    {integers<uint8_t>(kOdd, 310, 0, 255), Tensor::scalar<float>(0.125f), Tensor::scalar<uint8_t>(77)}, {}, {1, 2});
  q("DequantizeLinear int8 per axis 0", "DequantizeLinear", 13,
    {integers<int8_t>({3, 2, 19}, 311, -128, 127), floats({3}, {0.5f, 0.03f, 2.0f}),
     Tensor::from_vector<int8_t>({3}, {-1, 4, 0})},
    {{"axis", int_attr(0)}});
  q("DequantizeLinear uint16 blocked axis -1", "DequantizeLinear", 21,
    {integers<uint16_t>({4, 11}, 312, 0, 65535), random_floats({4, 3}, 313, 0.001f, 0.01f),
     integers<uint16_t>({4, 3}, 314, 0, 65535)},
    {{"axis", int_attr(-1)}, {"block_size", int_attr(4)}});
  q("DequantizeLinear int32 no zero point", "DequantizeLinear", 13,
    {integers<int32_t>({6, 7}, 315, -100000, 100000), Tensor::scalar<float>(0.001f)});
  q("DequantizeLinear float16 output", "DequantizeLinear", 19,
    {integers<int8_t>({5, 13}, 316, -128, 127), Tensor::scalar<float>(0.07f).cast(DType::Float16)});
  const auto dynamic = [&](const std::string& name, Tensor x) {
    cases.push_back(with_opset(make_case(name, "DynamicQuantizeLinear", {std::move(x)}, {}, 3), 11));
  };
  dynamic("DynamicQuantizeLinear mixed", random_floats({7, 301}, 320, -2.0f, 5.0f));
  dynamic("DynamicQuantizeLinear positive", random_floats({4, 9}, 321, 0.5f, 3.0f));
  dynamic("DynamicQuantizeLinear constant", floats({5}, {-1.0f, -1.0f, -1.0f, -1.0f, -1.0f}));
  return cases;
}

// BitwiseAnd/Or/Xor/Not (opset 18): signed and unsigned 8-, 16- and 32-bit integers,
// broadcasting, negative values.
std::vector<VkCase> bitwise_cases() {
  std::vector<VkCase> cases;
  const auto add = [&](const std::string& name, const std::string& op, std::vector<std::optional<Tensor>> inputs) {
    cases.push_back(with_opset(make_case(name, op, std::move(inputs)), 18));
  };
  add("BitwiseAnd int32", "BitwiseAnd",
      {integers<int32_t>(kOdd, 330, -2000000000, 2000000000), integers<int32_t>(kOdd, 331, -2000000000, 2000000000)});
  add("BitwiseOr int16 broadcast", "BitwiseOr",
      {integers<int16_t>({4, 5, 6}, 332, -32768, 32767), integers<int16_t>({5, 1}, 333, -32768, 32767)});
  add("BitwiseOr int32 rows of 8", "BitwiseOr",
      {integers<int32_t>({6, 8}, 342, -100000, 100000), integers<int32_t>({8}, 343, -100000, 100000)});
  add("BitwiseXor uint8 broadcast", "BitwiseXor",
      {integers<uint8_t>({3, 4, 8}, 334, 0, 255), integers<uint8_t>({8}, 335, 0, 255)});
  add("BitwiseAnd uint16", "BitwiseAnd", {integers<uint16_t>({9, 7}, 336, 0, 65535), integers<uint16_t>({9, 7}, 337, 0, 65535)});
  add("BitwiseNot int8", "BitwiseNot", {integers<int8_t>(kOdd, 338, -128, 127)});
  add("BitwiseNot uint16", "BitwiseNot", {integers<uint16_t>({6, 11}, 339, 0, 65535)});
  add("BitwiseNot uint8", "BitwiseNot", {integers<uint8_t>({2, 8}, 340, 0, 255)});
  add("BitwiseNot int32", "BitwiseNot", {integers<int32_t>({5, 12}, 341, -100000, 100000)});
  return cases;
}

VKG_VK_CASES(elementwise) {
  std::vector<VkCase> cases;
  for (auto* group :
       {unary_cases, clip_cases, binary_cases, variadic_cases, where_cases, cast_cases, batchnorm_cases,
        quantize_cases, bitwise_cases}) {
    std::vector<VkCase> more = group();
    cases.insert(cases.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return cases;
}

}  // namespace vkg::test
