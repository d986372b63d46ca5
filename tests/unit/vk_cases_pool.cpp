// Conformance cases of the pool family (runtime/tactics/pool.cpp): MaxPool
// (with and without Indices, both storage orders, integer inputs), AveragePool
// (count_include_pad), LpPool, the global pools and MaxUnpool. Windows cover
// pads, auto_pad, dilations, ceil_mode (a last window starting in the padding
// is dropped), windows entirely in the padding, 1-D/2-D/3-D inputs, output
// widths that are and are not multiples of 4 (pool.direct.w4), large windows
// (pool.workgroup) and planes that are and are not multiples of 4 (the vec4
// paths of global_pool.*); RoiAlign (roi_align.direct).
#include <cmath>
#include <limits>
#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Integer-valued floats in [lo, hi]: ties are frequent (first-occurrence
// argmax) and exact in fp16, so Indices agree in every precision.
Tensor int64s(const Shape& shape, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(shape, v); }

Attrs window(std::vector<int64_t> kernel, std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {}) {
  Attrs a{{"kernel_shape", ints_attr(std::move(kernel))}};
  if (!strides.empty()) a["strides"] = ints_attr(std::move(strides));
  if (!pads.empty()) a["pads"] = ints_attr(std::move(pads));
  return a;
}

Attrs with(Attrs a, const std::string& name, Attribute value) {
  a[name] = std::move(value);
  return a;
}

VkCase pool(const std::string& name, const std::string& op, Tensor x, Attrs attrs, int64_t opset = 17,
            size_t outputs = 1) {
  VkCase c = make_case(name, op, {std::move(x)}, std::move(attrs), outputs);
  c.opset = opset;
  return c;
}

std::vector<VkCase> max_pool_cases() {
  std::vector<VkCase> cases;
  cases.push_back(pool("MaxPool 2-D 3x3 s2 pads 1, 2x3x17x17", "MaxPool", random_floats({2, 3, 17, 17}, 1),
                       window({3, 3}, {2, 2}, {1, 1, 1, 1})));
  cases.push_back(pool("MaxPool 2-D 2x2 s2, 1x4x16x16 (w % 4 == 0)", "MaxPool", random_floats({1, 4, 16, 16}, 2),
                       window({2, 2}, {2, 2})));
  cases.push_back(pool("MaxPool 2-D 3x2 strides 1x3 asymmetric pads, 2x2x11x13", "MaxPool",
                       random_floats({2, 2, 11, 13}, 3), window({3, 2}, {1, 3}, {2, 0, 1, 1})));
  cases.push_back(
      pool("MaxPool 1-D 3 s1 pads 1, 2x3x37", "MaxPool", random_floats({2, 3, 37}, 4), window({3}, {1}, {1, 1})));
  cases.push_back(pool("MaxPool 3-D 2x2x2 s2 ceil_mode, 1x2x6x7x9", "MaxPool", random_floats({1, 2, 6, 7, 9}, 5),
                       with(window({2, 2, 2}, {2, 2, 2}), "ceil_mode", int_attr(1))));
  // H: span 5 + 2 - 2 = 5, ceil(5 / 2) + 1 = 4 windows, the 4th starts in the end padding and is dropped.
  cases.push_back(pool("MaxPool 2-D ceil_mode drops a window in the end padding, 1x3x5x9", "MaxPool",
                       random_floats({1, 3, 5, 9}, 6),
                       with(window({2, 2}, {2, 2}, {1, 1, 1, 1}), "ceil_mode", int_attr(1))));
  cases.push_back(pool("MaxPool auto_pad SAME_UPPER 3x3 s2, 1x3x10x11", "MaxPool", random_floats({1, 3, 10, 11}, 7),
                       with(window({3, 3}, {2, 2}), "auto_pad", string_attr("SAME_UPPER"))));
  cases.push_back(pool("MaxPool auto_pad SAME_LOWER 4x4 s1, 1x2x9x10", "MaxPool", random_floats({1, 2, 9, 10}, 8),
                       with(window({4, 4}, {1, 1}), "auto_pad", string_attr("SAME_LOWER"))));
  cases.push_back(pool("MaxPool auto_pad VALID 3x3 s2, 2x2x12x15", "MaxPool", random_floats({2, 2, 12, 15}, 9),
                       with(window({3, 3}, {2, 2}), "auto_pad", string_attr("VALID"))));
  cases.push_back(pool("MaxPool dilations 2x3 3x3 pads 2, 1x3x14x17", "MaxPool", random_floats({1, 3, 14, 17}, 10),
                       with(window({3, 3}, {1, 2}, {2, 2, 2, 2}), "dilations", ints_attr({2, 3}))));
  cases.push_back(pool("MaxPool 8x8 s4 (large window), 1x8x32x32", "MaxPool", random_floats({1, 8, 32, 32}, 11),
                       window({8, 8}, {4, 4})));
  cases.push_back(pool("MaxPool 3x3 s1 pads 1 (many workgroups), 2x16x48x48", "MaxPool",
                       random_floats({2, 16, 48, 48}, 12), window({3, 3}, {1, 1}, {1, 1, 1, 1})));
  cases.push_back(
      pool("MaxPool 1-D 2 s2 (output width 1), 3x2x3", "MaxPool", random_floats({3, 2, 3}, 13), window({2}, {2})));
  cases.push_back(
      pool("MaxPool empty batch, 0x3x8x8", "MaxPool", random_floats({0, 3, 8, 8}, 14), window({2, 2}, {2, 2})));
  // Windows that lie entirely in the padding: the reference gives the lowest value.
  cases.push_back(pool("MaxPool window entirely in padding, 1x2x4", "MaxPool", random_floats({1, 2, 4}, 15),
                       window({2}, {1}, {2, 2})));
  cases.push_back(pool("MaxPool 1-D 16 window entirely in padding (large window), 1x2x20", "MaxPool",
                       tied_floats({1, 2, 20}, 17), window({16}, {4}, {16, 16}), 17, 2));
  cases.push_back(pool("MaxPool 1-D 40 s20 (wider than pool.direct.w4's segment), 2x3x100", "MaxPool",
                       random_floats({2, 3, 100}, 18), window({40}, {20}, {5, 5}), 17, 2));
  cases.push_back(pool("MaxPool int8 window entirely in padding, 1x2x5x4", "MaxPool",
                       integers<int8_t>({1, 2, 5, 4}, 16, -100, 100), window({2, 2}, {1, 1}, {2, 0, 2, 0}), 12));

  // Indices (int64): first maximum on ties, row-major and column-major offsets.
  cases.push_back(pool("MaxPool Indices 3x3 s1 pads 1 ties, 2x3x9x11", "MaxPool", tied_floats({2, 3, 9, 11}, 20),
                       window({3, 3}, {1, 1}, {1, 1, 1, 1}), 17, 2));
  cases.push_back(pool("MaxPool Indices storage_order 1, 1x2x7x10", "MaxPool", tied_floats({1, 2, 7, 10}, 21),
                       with(window({2, 3}, {2, 1}, {0, 1, 1, 1}), "storage_order", int_attr(1)), 17, 2));
  cases.push_back(
      pool("MaxPool Indices 3-D storage_order 1 ceil_mode, 1x2x5x6x7", "MaxPool", tied_floats({1, 2, 5, 6, 7}, 22),
           with(with(window({2, 3, 2}, {2, 2, 2}), "storage_order", int_attr(1)), "ceil_mode", int_attr(1)), 17, 2));
  cases.push_back(pool("MaxPool Indices 1-D dilation 2, 2x2x20", "MaxPool", tied_floats({2, 2, 20}, 23),
                       with(window({3}, {2}, {1, 2}), "dilations", ints_attr({2})), 17, 2));
  cases.push_back(pool("MaxPool Indices 7x7 s3 (large window), 1x4x23x23", "MaxPool", tied_floats({1, 4, 23, 23}, 24),
                       window({7, 7}, {3, 3}, {2, 2, 2, 2}), 17, 2));
  cases.push_back(pool("MaxPool Indices window entirely in padding, 1x2x3x4", "MaxPool", tied_floats({1, 2, 3, 4}, 25),
                       window({2, 2}, {1, 1}, {2, 2, 0, 0}), 17, 2));

  // Integer inputs (opset 12): int32 on the device.
  cases.push_back(pool("MaxPool int32 3x3 s2 pads 1 Indices, 2x3x13x14", "MaxPool",
                       integers<int32_t>({2, 3, 13, 14}, 30, -1000000, 1000000), window({3, 3}, {2, 2}, {1, 1, 1, 1}),
                       12, 2));
  cases.push_back(pool("MaxPool uint8 2x2 s2, 1x3x8x12", "MaxPool", integers<uint8_t>({1, 3, 8, 12}, 31, 0, 255),
                       window({2, 2}, {2, 2}), 12));
  cases.push_back(pool("MaxPool int8 4x4 s2 (large window ties), 1x2x20x21", "MaxPool",
                       integers<int8_t>({1, 2, 20, 21}, 32, -5, 5), window({4, 4}, {2, 2}, {1, 1, 1, 1}), 12, 2));
  cases.push_back(pool(
      "MaxPool int8 4x4 s3 storage_order 1 ceil_mode, 1x2x14x15", "MaxPool",
      integers<int8_t>({1, 2, 14, 15}, 33, -5, 5),
      with(with(window({4, 4}, {3, 3}, {1, 0, 1, 2}), "storage_order", int_attr(1)), "ceil_mode", int_attr(1)), 12, 2));

  // NaN: a NaN first tap is the result, later NaNs are skipped (the reference's sequential scan).
  {
    Tensor x = random_floats({1, 2, 6, 8}, 40);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i : {0, 3, 9, 17, 26, 50, 51, 60}) x.data<float>()[i] = nan;
    cases.push_back(pool("MaxPool NaN inputs 2x2 s2, 1x2x6x8", "MaxPool", x, window({2, 2}, {2, 2}), 17, 2));
    Tensor big = random_floats({1, 2, 10, 10}, 41);
    for (int64_t i : {0, 3, 4, 13, 22, 44, 100, 101, 124, 188}) big.data<float>()[i] = nan;
    cases.push_back(pool("MaxPool NaN inputs 4x4 s2, 1x2x10x10", "MaxPool", big, window({4, 4}, {2, 2}), 17, 2));
  }
  return cases;
}

std::vector<VkCase> average_lp_cases() {
  std::vector<VkCase> cases;
  cases.push_back(pool("AveragePool 3x3 s2 pads 1, 2x3x17x17", "AveragePool", random_floats({2, 3, 17, 17}, 50),
                       window({3, 3}, {2, 2}, {1, 1, 1, 1})));
  cases.push_back(pool("AveragePool 3x3 s2 pads 1 count_include_pad, 2x3x17x17", "AveragePool",
                       random_floats({2, 3, 17, 17}, 51),
                       with(window({3, 3}, {2, 2}, {1, 1, 1, 1}), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool 2x2 s2, 1x4x16x16 (w % 4 == 0)", "AveragePool", random_floats({1, 4, 16, 16}, 52),
                       window({2, 2}, {2, 2})));
  cases.push_back(pool(
      "AveragePool ceil_mode count_include_pad asymmetric pads, 1x3x10x11", "AveragePool",
      random_floats({1, 3, 10, 11}, 53),
      with(with(window({3, 3}, {2, 2}, {0, 1, 2, 1}), "ceil_mode", int_attr(1)), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool ceil_mode, 1x2x9x9", "AveragePool", random_floats({1, 2, 9, 9}, 54),
                       with(window({2, 2}, {2, 2}), "ceil_mode", int_attr(1))));
  cases.push_back(pool(
      "AveragePool SAME_LOWER count_include_pad, 1x3x9x10", "AveragePool", random_floats({1, 3, 9, 10}, 55),
      with(with(window({4, 3}, {2, 1}), "auto_pad", string_attr("SAME_LOWER")), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool SAME_UPPER, 1x3x9x10", "AveragePool", random_floats({1, 3, 9, 10}, 56),
                       with(window({3, 4}, {2, 3}), "auto_pad", string_attr("SAME_UPPER"))));
  cases.push_back(pool("AveragePool 1-D 5 s2 pads 2, 2x4x31", "AveragePool", random_floats({2, 4, 31}, 57),
                       window({5}, {2}, {2, 2})));
  cases.push_back(pool("AveragePool 3-D 3x3x3 s2 pads 1 count_include_pad, 1x2x7x8x9", "AveragePool",
                       random_floats({1, 2, 7, 8, 9}, 58),
                       with(window({3, 3, 3}, {2, 2, 2}, {1, 1, 1, 1, 1, 1}), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool dilations 2 (opset 19), 1x3x13x14", "AveragePool",
                       random_floats({1, 3, 13, 14}, 59),
                       with(window({3, 3}, {1, 1}, {2, 2, 2, 2}), "dilations", ints_attr({2, 2})), 19));
  cases.push_back(pool("AveragePool 7x7 (large window), 2x8x14x14", "AveragePool", random_floats({2, 8, 14, 14}, 60),
                       window({7, 7}, {7, 7})));
  cases.push_back(pool(
      "AveragePool 5x5 s3 pads 2 ceil_mode count_include_pad (large window), 1x4x20x20", "AveragePool",
      random_floats({1, 4, 20, 20}, 64),
      with(with(window({5, 5}, {3, 3}, {2, 2, 2, 1}), "ceil_mode", int_attr(1)), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool 5x4 s2 dilations 2 pads 3 (opset 19, large window), 1x3x17x16", "AveragePool",
                       random_floats({1, 3, 17, 16}, 65),
                       with(window({5, 4}, {2, 2}, {3, 3, 3, 3}), "dilations", ints_attr({2, 2})), 19));
  cases.push_back(pool("AveragePool 1-D 16 windows entirely in padding count_include_pad, 1x2x20", "AveragePool",
                       random_floats({1, 2, 20}, 66),
                       with(window({16}, {4}, {16, 16}), "count_include_pad", int_attr(1))));
  cases.push_back(pool("AveragePool 1-D 40 s20 (wider than pool.direct.w4's segment), 2x3x100", "AveragePool",
                       random_floats({2, 3, 100}, 67), window({40}, {20}, {5, 5})));
  cases.push_back(pool("AveragePool 3x3 s1 pads 1 (many workgroups), 2x16x48x48", "AveragePool",
                       random_floats({2, 16, 48, 48}, 61), window({3, 3}, {1, 1}, {1, 1, 1, 1})));
  cases.push_back(pool("AveragePool window entirely in padding, 1x2x4", "AveragePool", random_floats({1, 2, 4}, 62),
                       window({2}, {1}, {2, 2})));
  cases.push_back(pool("AveragePool window entirely in padding count_include_pad, 1x2x4", "AveragePool",
                       random_floats({1, 2, 4}, 63), with(window({2}, {1}, {2, 2}), "count_include_pad", int_attr(1))));

  cases.push_back(pool("LpPool p 2 3x3 s2 pads 1, 2x3x15x15", "LpPool", random_floats({2, 3, 15, 15}, 70),
                       window({3, 3}, {2, 2}, {1, 1, 1, 1})));
  cases.push_back(pool("LpPool p 1 2x2 s2, 1x4x16x16", "LpPool", random_floats({1, 4, 16, 16}, 71),
                       with(window({2, 2}, {2, 2}), "p", int_attr(1))));
  cases.push_back(pool("LpPool p 3 1-D 4 s3, 2x3x29", "LpPool", random_floats({2, 3, 29}, 72),
                       with(window({4}, {3}, {1, 2}), "p", int_attr(3))));
  cases.push_back(pool(
      "LpPool p 2 ceil_mode dilations (opset 18), 1x2x11x12", "LpPool", random_floats({1, 2, 11, 12}, 73),
      with(with(window({2, 3}, {2, 2}, {1, 1, 1, 1}), "ceil_mode", int_attr(1)), "dilations", ints_attr({2, 1})), 18));
  cases.push_back(pool("LpPool p 3.0 float attribute (opset 1), 1x2x8x9", "LpPool", random_floats({1, 2, 8, 9}, 74),
                       with(with(window({3, 3}, {1, 2}), "p", float_attr(3.0f)), "auto_pad", string_attr("VALID")), 1));
  cases.push_back(pool("LpPool 3-D p 2 SAME_UPPER, 1x2x5x6x7", "LpPool", random_floats({1, 2, 5, 6, 7}, 75),
                       with(window({2, 2, 3}, {1, 2, 2}), "auto_pad", string_attr("SAME_UPPER"))));
  cases.push_back(pool("LpPool p 2 6x6 (large window), 1x6x24x24", "LpPool", random_floats({1, 6, 24, 24}, 76),
                       window({6, 6}, {3, 3})));
  cases.push_back(pool("LpPool p 3 4x5 pads 2 (large window), 1x3x13x14", "LpPool", random_floats({1, 3, 13, 14}, 77),
                       with(window({4, 5}, {2, 3}, {2, 2, 1, 2}), "p", int_attr(3))));
  cases.push_back(
      pool("LpPool p 1 4x4 ceil_mode (large window), 1x3x11x11", "LpPool", random_floats({1, 3, 11, 11}, 78),
           with(with(window({4, 4}, {3, 3}, {1, 1, 1, 1}), "p", int_attr(1)), "ceil_mode", int_attr(1)), 18));
  return cases;
}

std::vector<VkCase> global_cases() {
  std::vector<VkCase> cases;
  auto global = [&](const std::string& name, const std::string& op, Tensor x, Attrs attrs = {}) {
    cases.push_back(pool(name, op, std::move(x), std::move(attrs)));
  };
  global("GlobalAveragePool 2x3x7x7 (plane of 49)", "GlobalAveragePool", random_floats({2, 3, 7, 7}, 80));
  global("GlobalAveragePool 1x16x8x8 (plane of 64)", "GlobalAveragePool", random_floats({1, 16, 8, 8}, 81));
  global("GlobalAveragePool 2x64x28x28", "GlobalAveragePool", random_floats({2, 64, 28, 28}, 82));
  global("GlobalAveragePool 1-D 3x5x33", "GlobalAveragePool", random_floats({3, 5, 33}, 83));
  global("GlobalAveragePool 3-D 1x4x5x6x7", "GlobalAveragePool", random_floats({1, 4, 5, 6, 7}, 84));
  global("GlobalAveragePool 1x1x1x1", "GlobalAveragePool", random_floats({1, 1, 1, 1}, 85));
  global("GlobalAveragePool 1x3x96x96 (large planes)", "GlobalAveragePool",
         random_floats({1, 3, 96, 96}, 86, 0.0f, 1.0f));
  global("GlobalMaxPool 2x3x7x7", "GlobalMaxPool", random_floats({2, 3, 7, 7}, 87));
  global("GlobalMaxPool 1x16x8x8", "GlobalMaxPool", random_floats({1, 16, 8, 8}, 88));
  global("GlobalMaxPool 1-D 2x3x50", "GlobalMaxPool", random_floats({2, 3, 50}, 89));
  global("GlobalMaxPool 3-D 1x4x5x6x8", "GlobalMaxPool", random_floats({1, 4, 5, 6, 8}, 90));
  global("GlobalMaxPool 1x130x12x12", "GlobalMaxPool", random_floats({1, 130, 12, 12}, 91));
  {
    Tensor x = random_floats({1, 3, 4, 5}, 92);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t i : {0, 7, 25, 33, 59}) x.data<float>()[i] = nan;  // planes 0 and 1 start with NaN
    x.data<float>()[20] = nan;
    global("GlobalMaxPool NaN inputs, 1x3x4x5", "GlobalMaxPool", x);
    Tensor x4 = random_floats({1, 3, 4, 4}, 93);
    for (int64_t i : {0, 5, 18, 40}) x4.data<float>()[i] = nan;
    global("GlobalMaxPool NaN inputs, 1x3x4x4", "GlobalMaxPool", x4);
  }
  global("GlobalLpPool p 2 2x3x7x7", "GlobalLpPool", random_floats({2, 3, 7, 7}, 94));
  global("GlobalLpPool p 1 1x8x8x8", "GlobalLpPool", random_floats({1, 8, 8, 8}, 95), {{"p", int_attr(1)}});
  global("GlobalLpPool p 3 1x5x9x10", "GlobalLpPool", random_floats({1, 5, 9, 10}, 96), {{"p", int_attr(3)}});
  global("GlobalLpPool p 2 1-D 2x4x64", "GlobalLpPool", random_floats({2, 4, 64}, 97, -1.0f, 1.0f));
  global("GlobalLpPool p 2 3-D 1x2x4x5x6", "GlobalLpPool", random_floats({1, 2, 4, 5, 6}, 98));
  return cases;
}

// MaxUnpool of MaxPool's outputs (inputs whose windows tile them, so the
// indices fit the unpooled shape), plus hand-made indices.
std::vector<VkCase> unpool_cases() {
  std::vector<VkCase> cases;
  auto from_max_pool = [&](const std::string& name, const Shape& x_shape, Attrs attrs, uint32_t seed,
                           std::optional<std::vector<int64_t>> output_shape, bool const_indices) {
    const Node mp = make_named_node("mp", "MaxPool", 1, 2, attrs);
    const Tensor x = random_floats(x_shape, seed);
    const std::vector<Tensor> pooled = run(mp, 17, {&x});
    std::vector<std::optional<Tensor>> inputs{pooled[0], pooled[1]};
    std::set<size_t> constants;
    if (const_indices) constants.insert(1);
    if (output_shape) {
      inputs.push_back(int64s({int64_t(output_shape->size())}, *output_shape));
      constants.insert(2);
    }
    attrs.erase("ceil_mode");
    cases.push_back(make_case(name, "MaxUnpool", inputs, attrs, 1, constants));
  };
  from_max_pool("MaxUnpool 2x2 s2 of 2x3x8x10", {2, 3, 8, 10}, window({2, 2}, {2, 2}), 100, std::nullopt, false);
  from_max_pool("MaxUnpool 2x2 s2 of 1x2x8x8 output_shape 9x9", {1, 2, 8, 8}, window({2, 2}, {2, 2}), 101,
                std::vector<int64_t>{1, 2, 9, 9}, false);
  from_max_pool("MaxUnpool 3x3 s2 pads 1 of 1x4x11x13 const indices", {1, 4, 11, 13},
                window({3, 3}, {2, 2}, {1, 1, 1, 1}), 102, std::nullopt, true);
  from_max_pool("MaxUnpool 1-D 3 s1 (repeated indices) of 2x3x40", {2, 3, 40}, window({3}, {1}), 103, std::nullopt,
                false);
  from_max_pool("MaxUnpool 3-D 2x2x2 s2 of 1x2x6x6x8 output_shape 7x6x9", {1, 2, 6, 6, 8}, window({2, 2, 2}, {2, 2, 2}),
                104, std::vector<int64_t>{1, 2, 7, 6, 9}, false);
  from_max_pool("MaxUnpool 2x2 s2 of 2x32x32x32", {2, 32, 32, 32}, window({2, 2}, {2, 2}), 105, std::nullopt, false);
  // Repeated indices with different values: the last X element wins.
  cases.push_back(
      make_case("MaxUnpool repeated indices, last wins", "MaxUnpool",
                {random_floats({1, 2, 2, 3}, 106), int64s({1, 2, 2, 3}, {0, 3, 3, 5, 0, 3, 16, 16, 20, 16, 31, 16})},
                window({2, 2}, {2, 2})));
  // int32 X (the reference moves any element type).
  cases.push_back(
      make_case("MaxUnpool int32 X 1-D", "MaxUnpool",
                {integers<int32_t>({1, 2, 4}, 107, -1000, 1000), int64s({1, 2, 4}, {1, 2, 5, 7, 9, 8, 12, 15})},
                window({2}, {2})));
  return cases;
}

// RoiAlign: rois inside, across and beyond the image edges, fixed and adaptive sampling
// grids, both modes and coordinate transformations, opsets 10 and 16.
Tensor random_rois(int64_t count, int64_t height, int64_t width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> v;
  for (int64_t r = 0; r < count; ++r) {
    const float x1 = -2.0f + unit(rng) * float(width), y1 = -2.0f + unit(rng) * float(height);
    v.insert(v.end(), {x1, y1, x1 + 0.7f + unit(rng) * float(width) * 0.8f, y1 + 0.7f + unit(rng) * float(height) * 0.8f});
  }
  return Tensor::from_vector<float>({count, 4}, v);
}

std::vector<VkCase> roi_align_cases() {
  std::vector<VkCase> cases;
  const auto roi_case = [](std::string name, int64_t opset, Shape x, int64_t rois, Attrs attrs, uint32_t seed,
                           float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::vector<int64_t> batches(static_cast<size_t>(rois));
    for (int64_t& b : batches) b = int64_t(rng() % uint32_t(x[0]));
    attrs["spatial_scale"] = float_attr(scale);
    VkCase c = make_case(std::move(name), "RoiAlign",
                         {random_floats(x, seed), random_rois(rois, int64_t(float(x[2]) / scale), int64_t(float(x[3]) / scale), seed + 1),
                          int64s({rois}, batches)},
                         attrs);
    c.opset = opset;
    return c;
  };
  cases.push_back(roi_case("RoiAlign avg half_pixel 2x3x10x12, 5 rois 3x4 sampling 2 scale 0.5", 16, {2, 3, 10, 12}, 5,
                           {{"output_height", int_attr(3)}, {"output_width", int_attr(4)},
                            {"sampling_ratio", int_attr(2)}},
                           601, 0.5f));
  cases.push_back(roi_case("RoiAlign max output_half_pixel 1x4x9x9, 3 rois 5x5 adaptive", 16, {1, 4, 9, 9}, 3,
                           {{"output_height", int_attr(5)}, {"output_width", int_attr(5)}, {"mode", string_attr("max")},
                            {"coordinate_transformation_mode", string_attr("output_half_pixel")}},
                           603));
  cases.push_back(roi_case("RoiAlign-10 avg 3x2x16x20, 7 rois 2x3 adaptive", 10, {3, 2, 16, 20}, 7,
                           {{"output_height", int_attr(2)}, {"output_width", int_attr(3)}}, 605));
  cases.push_back(roi_case("RoiAlign max half_pixel 2x8x12x12, 9 rois 7x7 sampling 1 (many workgroups)", 16,
                           {2, 8, 12, 12}, 9,
                           {{"output_height", int_attr(7)}, {"output_width", int_attr(7)}, {"mode", string_attr("max")},
                            {"sampling_ratio", int_attr(1)}},
                           607));
  return cases;
}

}  // namespace

VKG_VK_CASES(pool) {
  std::vector<VkCase> cases;
  for (auto* family : {&max_pool_cases, &average_lp_cases, &global_cases, &unpool_cases, &roi_align_cases}) {
    for (VkCase& c : (*family)()) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace vkg::test
