// Conformance cases of the conv family (runtime/tactics/conv.cpp): Conv,
// ConvTranspose, ConvInteger, QLinearConv and DeformConv. Every tactic's path is covered:
// 1-D, 2-D, 3-D and 4-D spatial dims, strides, dilations, explicit and auto
// pads, groups (odd channels per group, past the 4-channel blocks), depthwise
// with multipliers, pointwise with aligned and unaligned planes, Winograd with
// odd output sizes, constant (packed) and runtime weights, and outputs large
// enough for many workgroups.
#include <cmath>
#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Inputs in [-1, 1): sums stay O(sqrt(K)).
// Tolerances for sums of k products of values in [-1, 1): fp16 storage of the
// inputs and fp16 accumulation grow like sqrt(k).
VkCase with_conv_k(VkCase c, int64_t k) {
  c.atol_fp16 = 0.03 + 0.015 * std::sqrt(double(k));
  c.atol_f16acc32 = c.atol;  // fp32 accumulation of the same (fp16-rounded) products
  c.atol = 1e-4 * std::max(1.0, std::sqrt(double(k)) / 4);
  return c;
}

enum CaseFlags : unsigned {
  kNoBias = 1,          // no B input
  kRuntimeWeights = 2,  // W and B are runtime inputs (else constants, packed at plan time)
};

// A Conv or ConvTranspose case with X at runtime.
VkCase conv_case(const std::string& op, const std::string& name, const Shape& x, const Shape& w, Attrs attrs,
                 unsigned flags, uint32_t seed) {
  const int64_t out_channels = op == "Conv" ? w[0] : w[1] * (attrs.count("group") ? attrs["group"].i : 1);
  std::vector<std::optional<Tensor>> inputs{unit_floats(x, seed), unit_floats(w, seed + 1)};
  if (!(flags & kNoBias)) inputs.push_back(unit_floats({out_channels}, seed + 2));
  std::set<size_t> constants;
  if (!(flags & kRuntimeWeights)) constants = {1, 2};
  const int64_t k = num_elements(Shape(w.begin() + 1, w.end()));
  return with_conv_k(make_case(op + " " + name, op, std::move(inputs), std::move(attrs), 1, constants), k);
}

std::vector<VkCase> conv_cases() {
  std::vector<VkCase> cases;
  auto add = [&](const std::string& name, const Shape& x, const Shape& w, Attrs attrs, unsigned flags = 0) {
    cases.push_back(conv_case("Conv", name, x, w, std::move(attrs), flags, uint32_t(cases.size() * 7 + 1)));
  };
  // 3x3 stride 1 (direct, im2col, Winograd).
  add("2-D 3x3 pad 1 bias", {1, 8, 12, 12}, {16, 8, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}});
  add("2-D 3x3 odd output, batch 2, asymmetric pads, no bias", {2, 7, 13, 11}, {9, 7, 3, 3},
      {{"pads", ints_attr({0, 1, 2, 1})}}, kNoBias);
  // Winograd's input transform four tiles at a time (tile rows and input rows in vec4 runs).
  add("2-D 3x3 pad 1, batch 2, rows of 8 tiles", {2, 8, 10, 16}, {8, 8, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}});
  add("2-D 3x3 left pad 2, odd rows, rows of 8 tiles", {1, 4, 9, 16}, {5, 4, 3, 3}, {{"pads", ints_attr({0, 2, 0, 0})}},
      kNoBias);
  // A network's first layer: 3 input channels, stride 2, vec4 rows in and out (conv.direct_tile).
  add("2-D 3x3 stride 2 pad 1, 3 channels, aligned rows", {1, 3, 16, 32}, {12, 3, 3, 3},
      {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}});
  // PP-OCRv4 det's FPN convolutions: 864 taps per output on row tiles, a tail block of 4 channels.
  add("2-D 3x3 pad 1, 96 channels -> 12, 7x20", {1, 96, 7, 20}, {12, 96, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}});
  // PP-OCRv4 rec's 1x3 Convs: few outputs over a deep K (conv.im2col_splitk), K not in vec4 runs.
  add("2-D 1x3 pad 1 along rows, 130 channels -> 40, 1x36, batch 2", {2, 130, 1, 36}, {40, 130, 1, 3},
      {{"pads", ints_attr({0, 1, 0, 1})}});
  add("2-D 3x3 no pad, kernel_shape", {1, 5, 9, 10}, {6, 5, 3, 3}, {{"kernel_shape", ints_attr({3, 3})}});
  add("2-D 3x3 SAME_LOWER 32 channels 28x28 (many workgroups)", {1, 32, 28, 28}, {32, 32, 3, 3},
      {{"auto_pad", string_attr("SAME_LOWER")}});
  // Strides, dilations, auto_pad.
  add("2-D 3x3 strides 2x1 dilations 2x1 pads", {2, 5, 11, 13}, {6, 5, 3, 3},
      {{"strides", ints_attr({2, 1})}, {"dilations", ints_attr({2, 1})}, {"pads", ints_attr({1, 0, 2, 1})}}, kNoBias);
  add("2-D 5x3 SAME_UPPER stride 2", {1, 3, 10, 9}, {4, 3, 5, 3},
      {{"auto_pad", string_attr("SAME_UPPER")}, {"strides", ints_attr({2, 2})}});
  add("2-D 4x4 SAME_LOWER stride 3", {1, 3, 11, 10}, {5, 3, 4, 4},
      {{"auto_pad", string_attr("SAME_LOWER")}, {"strides", ints_attr({3, 3})}});
  add("2-D 2x5 VALID dilation 3", {1, 4, 9, 17}, {3, 4, 2, 5},
      {{"auto_pad", string_attr("VALID")}, {"dilations", ints_attr({1, 3})}});
  // Groups.
  add("2-D group 2", {1, 6, 9, 10}, {8, 3, 3, 3}, {{"group", int_attr(2)}, {"pads", ints_attr({1, 1, 1, 1})}});
  add("2-D group 3 (5 channels per group)", {2, 6, 7, 8}, {15, 2, 3, 3},
      {{"group", int_attr(3)}, {"strides", ints_attr({1, 2})}});
  // Depthwise.
  add("depthwise 3x3 pad 1", {2, 16, 15, 17}, {16, 1, 3, 3},
      {{"group", int_attr(16)}, {"pads", ints_attr({1, 1, 1, 1})}});
  add("depthwise multiplier 2 5x5 stride 2", {1, 6, 13, 13}, {12, 1, 5, 5},
      {{"group", int_attr(6)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({2, 2, 2, 2})}}, kNoBias);
  // conv.depthwise_tile: vec4 rows in and out, stride 2, a 7x7 kernel with asymmetric pads, rows past the tile.
  add("depthwise 5x5 stride 2 pad 2 aligned rows", {1, 8, 20, 24}, {8, 1, 5, 5},
      {{"group", int_attr(8)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({2, 2, 2, 2})}});
  add("depthwise 3x3 pad 1 aligned rows, 13 rows", {1, 4, 13, 40}, {4, 1, 3, 3},
      {{"group", int_attr(4)}, {"pads", ints_attr({1, 1, 1, 1})}}, kNoBias);
  add("depthwise 7x7 asymmetric pads strides 1x2", {2, 3, 11, 28}, {3, 1, 7, 7},
      {{"group", int_attr(3)}, {"strides", ints_attr({1, 2})}, {"pads", ints_attr({3, 2, 1, 3})}});
  add("depthwise 1-D dilation 2", {1, 5, 21}, {5, 1, 3}, {{"group", int_attr(5)}, {"dilations", ints_attr({2})}});
  add("depthwise runtime weights", {1, 4, 9, 9}, {4, 1, 3, 3},
      {{"group", int_attr(4)}, {"pads", ints_attr({1, 1, 1, 1})}}, kRuntimeWeights);
  add("1 channel 1x1 image (depthwise and pointwise)", {1, 1, 1, 1}, {1, 1, 1, 1}, {});
  // Pointwise.
  add("1x1 batch 2 (positions multiple of 4)", {2, 16, 10, 10}, {24, 16, 1, 1}, {});
  // The GPU tiles (conv.1x1_smemv, conv.1x1_coopmatv): output channels past one 128-row tile, 144
  // positions past one 128-column tile, K over several slices with a partial last one.
  add("1x1 72 -> 136 channels, 12x12 (tiles past 128)", {1, 72, 12, 12}, {136, 72, 1, 1}, {});
  add("1x1 batch 2, 40 -> 24 channels, 8x8, no bias", {2, 40, 8, 8}, {24, 40, 1, 1}, {}, kNoBias);
  add("1x1 odd plane 7x9", {1, 13, 7, 9}, {10, 13, 1, 1}, {}, kNoBias);
  add("1x1 group 2", {1, 8, 5, 6}, {6, 4, 1, 1}, {{"group", int_attr(2)}});
  add("1x1 stride 2", {1, 4, 8, 8}, {5, 4, 1, 1}, {{"strides", ints_attr({2, 2})}});
  add("1x1 3-D", {1, 6, 3, 4, 5}, {7, 6, 1, 1, 1}, {});
  // Other ranks.
  add("1-D k5 pad 2", {2, 6, 31}, {8, 6, 5}, {{"pads", ints_attr({2, 2})}});
  add("1-D stride 2 dilation 2 SAME_UPPER", {1, 3, 20}, {4, 3, 3},
      {{"strides", ints_attr({2})}, {"dilations", ints_attr({2})}, {"auto_pad", string_attr("SAME_UPPER")}}, kNoBias);
  add("3-D 3x3x3 pad 1 strides 1x2x1", {1, 4, 6, 7, 8}, {6, 4, 3, 3, 3},
      {{"pads", ints_attr({1, 1, 1, 1, 1, 1})}, {"strides", ints_attr({1, 2, 1})}});
  add("4-D spatial", {1, 2, 4, 5, 3, 4}, {3, 2, 2, 3, 2, 2},
      {{"pads", ints_attr({1, 0, 0, 1, 0, 1, 1, 0})}, {"strides", ints_attr({1, 2, 1, 1})}});
  add("4-D spatial runtime weights", {1, 2, 3, 4, 3, 3}, {2, 2, 2, 2, 2, 2}, {}, kNoBias | kRuntimeWeights);
  // Runtime weights (only conv.direct and conv.depthwise serve them).
  add("2-D runtime weights and bias", {1, 4, 9, 9}, {6, 4, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}}, kRuntimeWeights);
  add("1-D runtime weights group 2", {2, 4, 12}, {6, 2, 3}, {{"group", int_attr(2)}}, kNoBias | kRuntimeWeights);
  // F(4x4) Winograd pads a row of 6 tiles to 8 (quads, eight-wide output stores); the 7x20 and
  // 28x28 cases above pad 5 and 7 tiles with four-wide stores.
  add("2-D 3x3 pad 1, batch 2, rows of 6 tiles", {2, 8, 12, 24}, {8, 8, 3, 3}, {{"pads", ints_attr({1, 1, 1, 1})}});
  {
    VkCase c = conv_case("Conv", "opset 11 float16 tensors 3x3", {1, 4, 8, 8}, {5, 4, 3, 3},
                         {{"pads", ints_attr({1, 1, 1, 1})}}, 0, 901);
    for (auto& [name, t] : c.inputs) t = t.cast(DType::Float16);
    c.opset = 11;
    cases.push_back(c);
  }
  return cases;
}

std::vector<VkCase> conv_transpose_cases() {
  std::vector<VkCase> cases;
  auto add = [&](const std::string& name, const Shape& x, const Shape& w, Attrs attrs, unsigned flags = 0) {
    cases.push_back(conv_case("ConvTranspose", name, x, w, std::move(attrs), flags, uint32_t(cases.size() * 11 + 3)));
  };
  add("2-D 3x3 stride 1", {1, 4, 5, 6}, {4, 6, 3, 3}, {});
  add("2-D stride 2 pads 1 output_padding 1", {2, 3, 6, 5}, {3, 4, 3, 3},
      {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}, {"output_padding", ints_attr({1, 1})}},
      kNoBias);
  add("2-D group 2 dilations 2", {1, 4, 5, 5}, {4, 3, 3, 3},
      {{"group", int_attr(2)}, {"dilations", ints_attr({2, 2})}});
  add("2-D output_shape larger than full (negative pads)", {1, 2, 4, 4}, {2, 3, 3, 3},
      {{"strides", ints_attr({2, 2})}, {"output_shape", ints_attr({10, 8})}});
  add("2-D output_shape with N and C, SAME_LOWER", {1, 2, 4, 4}, {2, 3, 3, 3},
      {{"strides", ints_attr({2, 2})},
       {"output_shape", ints_attr({1, 3, 8, 7})},
       {"auto_pad", string_attr("SAME_LOWER")}},
      kNoBias);
  add("2-D SAME_UPPER stride 2 4x4", {1, 3, 5, 5}, {3, 2, 4, 4},
      {{"strides", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_UPPER")}});
  add("2-D SAME_LOWER stride 2 4x4", {1, 3, 5, 5}, {3, 2, 4, 4},
      {{"strides", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_LOWER")}});
  add("2-D VALID strides 3x2", {1, 2, 4, 5}, {2, 5, 2, 3},
      {{"strides", ints_attr({3, 2})}, {"auto_pad", string_attr("VALID")}});
  add("2-D 16 channels 14x14 stride 2 (many workgroups)", {1, 16, 14, 14}, {16, 8, 4, 4},
      {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}});
  // Kernel == strides, no padding: the upsampling of segmentation heads (conv.transpose_block).
  add("2-D kernel 2 stride 2 (upsampling), batch 2", {2, 8, 6, 6}, {8, 5, 2, 2}, {{"strides", ints_attr({2, 2})}});
  // Rows of a multiple of 4 inputs: two taps side by side written as vec4s.
  add("2-D kernel 2 stride 2, rows of 8, batch 2", {2, 8, 5, 8}, {8, 6, 2, 2}, {{"strides", ints_attr({2, 2})}});
  add("2-D kernel 2 stride 2, rows of 4, one output channel", {1, 8, 3, 4}, {8, 1, 2, 2},
      {{"strides", ints_attr({2, 2})}}, kNoBias);
  add("2-D kernel 2x3 strides 2x3, one output channel, no bias", {1, 12, 4, 5}, {12, 1, 2, 3},
      {{"strides", ints_attr({2, 3})}}, kNoBias);
  add("1-D kernel 3 stride 3", {1, 4, 12}, {4, 6, 3}, {{"strides", ints_attr({3})}});
  add("3-D kernel 2 stride 2", {1, 4, 2, 2, 3}, {4, 3, 2, 2, 2}, {{"strides", ints_attr({2, 2, 2})}});
  add("1-D stride 3 kernel_shape", {2, 3, 9}, {3, 5, 4},
      {{"strides", ints_attr({3})}, {"kernel_shape", ints_attr({4})}});
  add("3-D strides 1x2x2", {1, 2, 3, 4, 5}, {2, 3, 2, 3, 3}, {{"strides", ints_attr({1, 2, 2})}});
  add("4-D spatial stride 2", {1, 2, 2, 3, 2, 3}, {2, 2, 2, 2, 2, 2},
      {{"strides", ints_attr({2, 1, 2, 1})}, {"pads", ints_attr({0, 1, 0, 0, 1, 0, 0, 1})}});
  add("2-D runtime weights group 2 stride 2", {1, 4, 4, 5}, {4, 2, 3, 3},
      {{"group", int_attr(2)}, {"strides", ints_attr({2, 2})}}, kRuntimeWeights);
  return cases;
}

VkCase conv_integer_case(const std::string& name, Tensor x, Tensor w, std::optional<Tensor> x_zp,
                         std::optional<Tensor> w_zp, Attrs attrs, std::set<size_t> constants) {
  std::vector<std::optional<Tensor>> inputs{std::move(x), std::move(w), std::move(x_zp), std::move(w_zp)};
  while (!inputs.back()) inputs.pop_back();
  return make_case("ConvInteger " + name, "ConvInteger", std::move(inputs), std::move(attrs), 1, constants);
}

std::vector<VkCase> conv_integer_cases() {
  std::vector<VkCase> cases;
  cases.push_back(conv_integer_case("uint8 3x3 pad 1 zero points", integers<uint8_t>({1, 3, 8, 8}, 1, 0, 255),
                                    integers<uint8_t>({6, 3, 3, 3}, 2, 0, 255), scalar_of<uint8_t>(128),
                                    scalar_of<uint8_t>(120), {{"pads", ints_attr({1, 1, 1, 1})}}, {1, 2, 3}));
  cases.push_back(
      conv_integer_case("int8 per-channel w_zp group 2 stride 2", integers<int8_t>({2, 4, 9, 7}, 3, -128, 127),
                        integers<int8_t>({6, 2, 3, 3}, 4, -128, 127), std::nullopt, integers<int8_t>({6}, 5, -10, 10),
                        {{"group", int_attr(2)}, {"strides", ints_attr({2, 2})}}, {1, 3}));
  cases.push_back(conv_integer_case("uint8 1-D runtime weights, no zero points",
                                    integers<uint8_t>({1, 5, 17}, 6, 0, 255), integers<uint8_t>({3, 5, 4}, 7, 0, 255),
                                    std::nullopt, std::nullopt, {{"pads", ints_attr({1, 2})}}, {}));
  cases.push_back(conv_integer_case("uint8 runtime zero points and weights", integers<uint8_t>({1, 2, 6, 6}, 8, 0, 255),
                                    integers<uint8_t>({5, 2, 2, 2}, 9, 0, 255), scalar_of<uint8_t>(3),
                                    integers<uint8_t>({5}, 10, 0, 255), {}, {}));
  cases.push_back(conv_integer_case("int8 3-D SAME_UPPER", integers<int8_t>({1, 3, 4, 5, 6}, 11, -128, 127),
                                    integers<int8_t>({4, 3, 2, 3, 3}, 12, -128, 127), scalar_of<int8_t>(-5),
                                    std::nullopt, {{"auto_pad", string_attr("SAME_UPPER")}}, {1, 2}));
  cases.push_back(conv_integer_case("uint8 32 channels 16x16 (many workgroups)",
                                    integers<uint8_t>({1, 32, 16, 16}, 13, 0, 255),
                                    integers<uint8_t>({24, 32, 3, 3}, 14, 0, 255), scalar_of<uint8_t>(17),
                                    scalar_of<uint8_t>(200), {{"pads", ints_attr({1, 1, 1, 1})}}, {1, 2, 3}));
  return cases;
}

struct QLinearSpec {
  Shape x, w;
  bool is_signed = false;
  float x_scale = 0.02f, y_scale = 0.5f;
  std::vector<float> w_scale{0.01f};  // one, or one per output channel
  bool per_channel_zp = false;
  bool bias = true;
  bool const_w = true;
  int spread = 128;  // x and w values lie within +-spread of their zero points (clamped to the type)
  Attrs attrs;
};

VkCase qlinear_case(const std::string& name, QLinearSpec s, uint32_t seed) {
  const int64_t m = s.w[0];
  auto eight_bit = [&](const Shape& shape, uint32_t sd, int zero) {
    return s.is_signed ? integers<int8_t>(shape, sd, std::max(-128, zero - 128 - s.spread),
                                          std::min(127, zero - 128 + s.spread))
                       : integers<uint8_t>(shape, sd, std::max(0, zero - s.spread), std::min(255, zero + s.spread));
  };
  auto zp = [&](int v) { return s.is_signed ? scalar_of<int8_t>(int8_t(v - 128)) : scalar_of<uint8_t>(uint8_t(v)); };
  Tensor w_scale = s.w_scale.size() == 1 ? Tensor::scalar<float>(s.w_scale[0])
                                         : Tensor::from_vector<float>({int64_t(s.w_scale.size())}, s.w_scale);
  Tensor w_zp = s.per_channel_zp ? (s.is_signed ? integers<int8_t>({m}, seed + 3, -20, 20)
                                                : integers<uint8_t>({m}, seed + 3, 100, 150))
                                 : zp(131);
  std::vector<std::optional<Tensor>> inputs{eight_bit(s.x, seed, 125),
                                            Tensor::scalar<float>(s.x_scale),
                                            zp(125),
                                            eight_bit(s.w, seed + 1, 131),
                                            w_scale,
                                            w_zp,
                                            Tensor::scalar<float>(s.y_scale),
                                            zp(128)};
  if (s.bias) inputs.push_back(integers<int32_t>({m}, seed + 2, -5000, 5000));
  std::set<size_t> constants{1, 2, 4, 5, 6, 7, 8};
  if (s.const_w) constants.insert(3);
  return make_case("QLinearConv " + name, "QLinearConv", std::move(inputs), std::move(s.attrs), 1, constants);
}

std::vector<VkCase> qlinear_conv_cases() {
  std::vector<VkCase> cases;
  auto add = [&](const std::string& name, QLinearSpec s) {
    cases.push_back(qlinear_case(name, std::move(s), uint32_t(cases.size() * 13 + 5)));
  };
  {
    QLinearSpec s;
    s.x = {1, 4, 7, 7};
    s.w = {6, 4, 3, 3};
    s.attrs = {{"pads", ints_attr({1, 1, 1, 1})}};
    add("uint8 3x3 pad 1 bias", s);
  }
  {
    QLinearSpec s;
    s.x = {2, 4, 9, 8};
    s.w = {6, 2, 3, 3};
    s.is_signed = true;
    s.w_scale = {0.01f, 0.02f, 0.005f, 0.03f, 0.015f, 0.008f};
    s.per_channel_zp = true;
    s.bias = false;
    s.attrs = {{"group", int_attr(2)}, {"strides", ints_attr({2, 2})}};
    add("int8 per-channel scales and zero points group 2 stride 2", s);
  }
  {
    QLinearSpec s;
    s.x = {1, 3, 10};
    s.w = {5, 3, 3};
    s.const_w = false;
    s.attrs = {{"auto_pad", string_attr("SAME_LOWER")}};
    add("uint8 1-D runtime weights", s);
  }
  {
    // Multiplier 0.5: every odd sum lands on a tie, rounded half to even.
    QLinearSpec s;
    s.x = {1, 2, 6, 6};
    s.w = {3, 2, 2, 2};
    s.x_scale = 0.5f;
    s.w_scale = {1.0f};
    s.y_scale = 1.0f;
    s.spread = 3;
    s.bias = false;
    add("uint8 round half to even", s);
  }
  {
    QLinearSpec s;
    s.x = {1, 3, 3, 4, 5};
    s.w = {4, 3, 2, 2, 2};
    s.is_signed = true;
    s.x_scale = 0.05f;
    s.y_scale = 2.0f;
    s.attrs = {{"pads", ints_attr({1, 0, 1, 0, 1, 0})}};
    add("int8 3-D", s);
  }
  return cases;
}

// DeformConv (opset 19, 2-D): groups and offset groups, pads, strides and dilations, with
// and without bias and mask, offsets reaching outside X, runtime offsets and weights.
std::vector<VkCase> deform_conv_cases() {
  std::vector<VkCase> cases;
  const auto dc = [](const std::string& name, Shape x, Shape w, Shape out, int64_t offset_groups, Attrs attrs,
                     bool bias, bool mask, uint32_t seed) {
    const int64_t taps = w[2] * w[3];
    std::vector<std::optional<Tensor>> inputs = {
        random_floats(x, seed), random_floats(w, seed + 1, -1.0f, 1.0f),
        random_floats({x[0], offset_groups * taps * 2, out[0], out[1]}, seed + 2, -1.7f, 1.7f)};
    inputs.push_back(bias ? std::optional<Tensor>(random_floats({w[0]}, seed + 3)) : std::nullopt);
    if (mask) inputs.push_back(random_floats({x[0], offset_groups * taps, out[0], out[1]}, seed + 4, 0.0f, 1.0f));
    attrs["offset_group"] = int_attr(offset_groups);
    VkCase c = make_case(name, "DeformConv", inputs, attrs);
    c.opset = 19;
    return c;
  };
  cases.push_back(dc("DeformConv 1x4x7x8 W 6x2x3x3 group 2 offset_group 2 pads 1 bias mask", {1, 4, 7, 8}, {6, 2, 3, 3},
                     {7, 8}, 2, {{"group", int_attr(2)}, {"pads", ints_attr({1, 1, 1, 1})}}, true, true, 700));
  cases.push_back(dc("DeformConv 2x3x9x9 W 4x3x2x2 strides 2 dilations 2", {2, 3, 9, 9}, {4, 3, 2, 2}, {4, 4}, 1,
                     {{"strides", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}}, false, false, 710));
  cases.push_back(dc("DeformConv 1x2x16x20 W 8x2x3x3 pads 1 mask (many workgroups)", {1, 2, 16, 20}, {8, 2, 3, 3},
                     {16, 20}, 1, {{"pads", ints_attr({1, 1, 1, 1})}}, false, true, 720));
  return cases;
}

}  // namespace

VKG_VK_CASES(conv) {
  std::vector<VkCase> cases = conv_cases();
  for (auto* more : {conv_transpose_cases, conv_integer_cases, qlinear_conv_cases, deform_conv_cases}) {
    std::vector<VkCase> extra = more();
    cases.insert(cases.end(), extra.begin(), extra.end());
  }
  return cases;
}

}  // namespace vkg::test
