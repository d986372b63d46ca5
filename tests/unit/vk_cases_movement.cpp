// Conformance cases of the movement family (runtime/tactics/movement.cpp):
// copies, Transpose, Trilu, OneHot, EyeLike, DepthToSpace, SpaceToDepth, Concat, Split, Slice,
// Expand, Tile, Pad, ReverseSequence and Compress. Sizes are chosen so that every tactic serves some cases and declines others: odd sizes
// for the scalar paths, multiples of 4 for the vec4 ones, more than one
// workgroup, empty tensors, integer data (moved exactly) and negative axes.
// The planner tests at the end cover what the reference backend cannot show:
// declined layers and Split-18's uneven last chunk.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

Tensor ints(const Shape& shape, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(shape, v); }
Tensor ints1(std::vector<int64_t> v) {
  const int64_t n = int64_t(v.size());
  return ints({n}, std::move(v));
}

// Distinct integers of `dtype` (int64, int32 or bool): large ones for int64 to show exact moves.
Tensor int_data(const Shape& shape, DType dtype = DType::Int64) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set_from_double(i, dtype == DType::Bool ? double(i % 3 == 0) : double(i * 7919 - 1000003));
  return t;
}

void add_copies(std::vector<VkCase>& cases) {
  cases.push_back(make_case("Identity 3x5x7", "Identity", {random_floats({3, 5, 7}, 1)}));
  cases.push_back(make_case("Identity 64x1025", "Identity", {random_floats({64, 1025}, 2)}));
  cases.push_back(make_case("Identity int64 4x33", "Identity", {int_data({4, 33})}));
  cases.push_back(make_case("Identity bool 2x9", "Identity", {int_data({2, 9}, DType::Bool)}));
  cases.push_back(make_case("Identity scalar", "Identity", {Tensor::scalar<float>(2.5f)}));
  cases.push_back(make_case("Identity empty", "Identity", {random_floats({3, 0}, 3)}));

  VkCase d13 =
      make_case("Dropout-13 mask", "Dropout",
                {random_floats({2, 3, 5}, 4), Tensor::scalar<float>(0.3f), Tensor::scalar<bool>(false)}, {}, 2, {1, 2});
  d13.opset = 13;
  cases.push_back(d13);
  VkCase d12 =
      make_case("Dropout-12 training ratio 0", "Dropout",
                {random_floats({4, 8}, 5), Tensor::scalar<float>(0.0f), Tensor::scalar<bool>(true)}, {}, 2, {1, 2});
  d12.opset = 12;
  cases.push_back(d12);
  VkCase d7 =
      make_case("Dropout-7 float mask", "Dropout", {random_floats({3, 7}, 6)}, {{"ratio", float_attr(0.2f)}}, 2);
  d7.opset = 7;
  cases.push_back(d7);
  cases.push_back(make_case("Dropout no mask", "Dropout", {random_floats({17}, 7)}));

  cases.push_back(
      make_case("Reshape 2x3x4 to 4x-1", "Reshape", {random_floats({2, 3, 4}, 8), ints1({4, -1})}, {}, 1, {1}));
  cases.push_back(make_case("Reshape int32 6x7 to 0x7x1", "Reshape", {int_data({6, 7}, DType::Int32), ints1({0, 7, 1})},
                            {}, 1, {1}));
  cases.push_back(make_case("Flatten axis -1", "Flatten", {random_floats({2, 3, 5}, 9)}, {{"axis", int_attr(-1)}}));
  cases.push_back(make_case("Flatten axis 0", "Flatten", {random_floats({4, 4, 4}, 10)}, {{"axis", int_attr(0)}}));
  cases.push_back(
      make_case("Squeeze-13 axes", "Squeeze", {random_floats({1, 5, 1, 3}, 11), ints1({0, -2})}, {}, 1, {1}));
  VkCase sq11 = make_case("Squeeze-11 attr", "Squeeze", {random_floats({3, 1, 4}, 12)}, {{"axes", ints_attr({1})}});
  sq11.opset = 11;
  cases.push_back(sq11);
  cases.push_back(make_case("Squeeze all", "Squeeze", {random_floats({1, 6, 1}, 13)}));
  cases.push_back(make_case("Unsqueeze-13 axes", "Unsqueeze", {random_floats({3, 4}, 14), ints1({-1, 0})}, {}, 1, {1}));
}

void add_transposes(std::vector<VkCase>& cases) {
  cases.push_back(make_case("Transpose 2x3x4 default perm", "Transpose", {random_floats({2, 3, 4}, 20)}));
  cases.push_back(make_case("Transpose 5x7", "Transpose", {random_floats({5, 7}, 21)}, {{"perm", ints_attr({1, 0})}}));
  cases.push_back(
      make_case("Transpose 8x12 blocks", "Transpose", {random_floats({8, 12}, 22)}, {{"perm", ints_attr({1, 0})}}));
  cases.push_back(make_case("Transpose 2x3x16x20 batched blocks", "Transpose", {random_floats({2, 3, 16, 20}, 23)},
                            {{"perm", ints_attr({0, 1, 3, 2})}}));
  cases.push_back(make_case("Transpose 2x8x3x12 inner kept", "Transpose", {random_floats({2, 8, 3, 12}, 24)},
                            {{"perm", ints_attr({0, 2, 1, 3})}}));
  cases.push_back(
      make_case("Transpose 4x64x96", "Transpose", {random_floats({4, 64, 96}, 25)}, {{"perm", ints_attr({0, 2, 1})}}));
  cases.push_back(make_case("Transpose 3x4x5 negative perm", "Transpose", {random_floats({3, 4, 5}, 26)},
                            {{"perm", ints_attr({-1, 0, -2})}}));
  cases.push_back(make_case("Transpose 2x3x4x5x6 rank 5", "Transpose", {random_floats({2, 3, 4, 5, 6}, 27)},
                            {{"perm", ints_attr({4, 0, 2, 1, 3})}}));
  cases.push_back(make_case("Transpose int64 6x10", "Transpose", {int_data({6, 10})}, {{"perm", ints_attr({1, 0})}}));
  cases.push_back(make_case("Transpose int32 4x8x4 blocks", "Transpose", {int_data({4, 8, 4}, DType::Int32)},
                            {{"perm", ints_attr({2, 1, 0})}}));
  cases.push_back(make_case("Transpose rank 1", "Transpose", {random_floats({7}, 28)}));
  cases.push_back(make_case("Transpose 1x8x1x4 size-1 axes", "Transpose", {random_floats({1, 8, 1, 4}, 29)},
                            {{"perm", ints_attr({2, 3, 0, 1})}}));
  cases.push_back(make_case("Transpose empty", "Transpose", {random_floats({0, 4}, 30)}));
  // DepthToSpace (DCR, CRD) and SpaceToDepth: permuted 6-D views of the input.
  cases.push_back(make_case("DepthToSpace DCR 2x8x3x5 block 2", "DepthToSpace", {random_floats({2, 8, 3, 5}, 31)},
                            {{"blocksize", int_attr(2)}}));
  cases.push_back(make_case("DepthToSpace CRD 1x18x4x4 block 3", "DepthToSpace", {random_floats({1, 18, 4, 4}, 32)},
                            {{"blocksize", int_attr(3)}, {"mode", string_attr("CRD")}}));
  cases.push_back(make_case("DepthToSpace DCR int32 1x16x4x8 block 2", "DepthToSpace",
                            {int_data({1, 16, 4, 8}, DType::Int32)}, {{"blocksize", int_attr(2)}}));
  cases.push_back(make_case("SpaceToDepth 2x3x8x12 block 4", "SpaceToDepth", {random_floats({2, 3, 8, 12}, 33)},
                            {{"blocksize", int_attr(4)}}));
  // Trilu: upper and lower, k positive, negative, beyond the matrix; integer data.
  cases.push_back(make_case("Trilu upper 2x5x7", "Trilu", {random_floats({2, 5, 7}, 36)}));
  cases.push_back(make_case("Trilu lower k -1 4x6", "Trilu", {random_floats({4, 6}, 37), ints1({-1})},
                            {{"upper", int_attr(0)}}, 1, {1}));
  cases.push_back(make_case("Trilu upper k 2 int32 3x3x9", "Trilu", {int_data({3, 3, 9}, DType::Int32), ints1({2})},
                            {}, 1, {1}));
  cases.push_back(make_case("Trilu lower k 40 5x5", "Trilu", {random_floats({5, 5}, 38), ints1({40})},
                            {{"upper", int_attr(0)}}, 1, {1}));
  // Aligned for the 4x4-block transpose: the block and the innermost axis are multiples of 4.
  cases.push_back(make_case("DepthToSpace DCR 1x32x4x8 block 4 aligned", "DepthToSpace",
                            {random_floats({1, 32, 4, 8}, 34)}, {{"blocksize", int_attr(4)}}));
  cases.push_back(make_case("SpaceToDepth 1x2x8x16 block 4 aligned", "SpaceToDepth", {random_floats({1, 2, 8, 16}, 35)},
                            {{"blocksize", int_attr(4)}}));
}

void add_concats(std::vector<VkCase>& cases) {
  cases.push_back(make_case("Concat 3 inputs axis 1 one const", "Concat",
                            {random_floats({2, 3, 4}, 40), random_floats({2, 5, 4}, 41), random_floats({2, 1, 4}, 42)},
                            {{"axis", int_attr(1)}}, 1, {1}));
  cases.push_back(make_case("Concat axis -1 vec4", "Concat", {random_floats({3, 4}, 43), random_floats({3, 8}, 44)},
                            {{"axis", int_attr(-1)}}));
  cases.push_back(
      make_case("Concat int64 axis 0", "Concat", {int_data({2, 3}), int_data({5, 3})}, {{"axis", int_attr(0)}}));
  std::vector<std::optional<Tensor>> ten;
  for (uint32_t k = 0; k < 10; ++k) ten.push_back(random_floats({2, int64_t(k % 3 + 1), 3}, 45 + k));
  cases.push_back(make_case("Concat 10 inputs", "Concat", ten, {{"axis", int_attr(-2)}}));
  cases.push_back(make_case("Concat with empty input", "Concat",
                            {random_floats({2, 0, 3}, 60), random_floats({2, 4, 3}, 61)}, {{"axis", int_attr(1)}}));
  cases.push_back(make_case("Concat 64x128 + 64x256", "Concat",
                            {random_floats({64, 128}, 62), random_floats({64, 256}, 63)}, {{"axis", int_attr(1)}}));
  cases.push_back(make_case("Concat single input", "Concat", {random_floats({5, 3}, 64)}, {{"axis", int_attr(0)}}));
  VkCase c1 =
      make_case("Concat-1 default axis", "Concat", {random_floats({2, 2, 3}, 65), random_floats({2, 3, 3}, 66)});
  c1.opset = 1;
  cases.push_back(c1);
  cases.push_back(make_case("Concat all empty", "Concat", {random_floats({0, 3}, 67), random_floats({0, 3}, 68)},
                            {{"axis", int_attr(0)}}));
}

void add_splits(std::vector<VkCase>& cases) {
  cases.push_back(
      make_case("Split 6x4 axis 0 equal", "Split", {random_floats({6, 4}, 70)}, {{"axis", int_attr(0)}}, 3));
  cases.push_back(make_case("Split 2x10x3 sizes input", "Split", {random_floats({2, 10, 3}, 71), ints1({2, 3, 5})},
                            {{"axis", int_attr(1)}}, 3, {1}));
  VkCase s11 = make_case("Split-11 attr axis -1", "Split", {random_floats({3, 4}, 72)},
                         {{"axis", int_attr(-1)}, {"split", ints_attr({1, 3})}}, 2);
  s11.opset = 11;
  cases.push_back(s11);
  VkCase s18 = make_case("Split-18 num_outputs", "Split", {random_floats({4, 8}, 73)},
                         {{"axis", int_attr(1)}, {"num_outputs", int_attr(2)}}, 2);
  s18.opset = 18;
  cases.push_back(s18);
  cases.push_back(make_case("Split int64", "Split", {int_data({4, 6})}, {{"axis", int_attr(1)}}, 2));
  cases.push_back(make_case("Split 4x16 vec4", "Split", {random_floats({4, 16}, 74), ints1({4, 12})},
                            {{"axis", int_attr(1)}}, 2, {1}));
  cases.push_back(make_case("Split 9 outputs", "Split", {random_floats({9, 5}, 75)}, {}, 9));
  cases.push_back(make_case("Split empty part", "Split", {random_floats({3, 4}, 76), ints1({0, 4})},
                            {{"axis", int_attr(1)}}, 2, {1}));
  cases.push_back(make_case("Split 128x300", "Split", {random_floats({128, 300}, 77), ints1({100, 200})},
                            {{"axis", int_attr(1)}}, 2, {1}));
}

void add_slices(std::vector<VkCase>& cases) {
  const std::set<size_t> consts = {1, 2, 3, 4};
  cases.push_back(make_case("Slice 10x12 steps", "Slice",
                            {random_floats({10, 12}, 80), ints1({1, 2}), ints1({8, -1}), ints1({0, 1}), ints1({2, 1})},
                            {}, 1, consts));
  cases.push_back(make_case("Slice negative step", "Slice",
                            {random_floats({5, 9}, 81), ints1({-1}), ints1({-1000}), ints1({1}), ints1({-2})}, {}, 1,
                            consts));
  cases.push_back(make_case("Slice reverse all axes", "Slice",
                            {random_floats({4, 6, 8}, 82), ints1({-1, -1, -1}),
                             ints1({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::min()}),
                             ints1({0, 1, 2}), ints1({-1, -1, -1})},
                            {}, 1, consts));
  cases.push_back(make_case("Slice ends clamp INT64_MAX", "Slice",
                            {random_floats({6, 7}, 83), ints1({2}), ints1({std::numeric_limits<int64_t>::max()})}, {},
                            1, consts));
  VkCase s9 = make_case("Slice-9 attrs", "Slice", {random_floats({5, 6, 7}, 84)},
                        {{"starts", ints_attr({1, -3})}, {"ends", ints_attr({4, 100})}, {"axes", ints_attr({0, 2})}});
  s9.opset = 9;
  cases.push_back(s9);
  cases.push_back(make_case("Slice 4x6x16 axis 1 vec4", "Slice",
                            {random_floats({4, 6, 16}, 85), ints1({1}), ints1({5}), ints1({-2})}, {}, 1, consts));
  cases.push_back(make_case("Slice empty result", "Slice",
                            {random_floats({4, 5}, 86), ints1({3}), ints1({1}), ints1({0})}, {}, 1, consts));
  cases.push_back(make_case("Slice int64", "Slice",
                            {int_data({6, 8}), ints1({1, 0}), ints1({5, 8}), ints1({0, 1}), ints1({1, 3})}, {}, 1,
                            consts));
  cases.push_back(make_case("Slice 96x512 vec4", "Slice",
                            {random_floats({96, 512}, 87), ints1({8}), ints1({264}), ints1({1}), ints1({1})}, {}, 1,
                            consts));
}

void add_expands(std::vector<VkCase>& cases) {
  cases.push_back(
      make_case("Expand 3x1 to 2x3x4", "Expand", {random_floats({3, 1}, 90), ints1({2, 3, 4})}, {}, 1, {1}));
  cases.push_back(
      make_case("Expand 1x8 to 5x8 vec4", "Expand", {random_floats({1, 8}, 91), ints1({5, 8})}, {}, 1, {1}));
  cases.push_back(
      make_case("Expand scalar to 3x5", "Expand", {Tensor::scalar<float>(1.25f), ints1({3, 5})}, {}, 1, {1}));
  cases.push_back(make_case("Expand shape smaller than input", "Expand", {random_floats({2, 3, 4}, 92), ints1({3, 1})},
                            {}, 1, {1}));
  cases.push_back(make_case("Expand int64 4x1 to 4x7", "Expand", {int_data({4, 1}), ints1({1, 7})}, {}, 1, {1}));
  cases.push_back(make_case("Expand 1x64x1 to 16x64x32", "Expand", {random_floats({1, 64, 1}, 93), ints1({16, 64, 32})},
                            {}, 1, {1}));
}

void add_tiles(std::vector<VkCase>& cases) {
  cases.push_back(make_case("Tile 2x3 by 2x3", "Tile", {random_floats({2, 3}, 100), ints1({2, 3})}, {}, 1, {1}));
  cases.push_back(make_case("Tile 2x8 by 3x1 vec4", "Tile", {random_floats({2, 8}, 101), ints1({3, 1})}, {}, 1, {1}));
  cases.push_back(
      make_case("Tile 1x5x4 by 2x1x2", "Tile", {random_floats({1, 5, 4}, 102), ints1({2, 1, 2})}, {}, 1, {1}));
  cases.push_back(make_case("Tile int32", "Tile", {int_data({3, 2}, DType::Int32), ints1({2, 2})}, {}, 1, {1}));
  cases.push_back(make_case("Tile zero repeat", "Tile", {random_floats({2, 3}, 103), ints1({0, 2})}, {}, 1, {1}));
  cases.push_back(make_case("Tile 32x64 by 4x8", "Tile", {random_floats({32, 64}, 104), ints1({4, 8})}, {}, 1, {1}));
  VkCase t1 =
      make_case("Tile-1 tiles axis", "Tile",
                {random_floats({3, 4}, 105), Tensor::scalar<int64_t>(3), Tensor::scalar<int64_t>(-1)}, {}, 1, {1, 2});
  t1.opset = 1;
  cases.push_back(t1);
}

void add_pads(std::vector<VkCase>& cases) {
  cases.push_back(make_case("Pad constant value", "Pad",
                            {random_floats({3, 4}, 110), ints1({1, 2, 0, 1}), Tensor::scalar<float>(1.5f)}, {}, 1,
                            {1, 2}));
  cases.push_back(make_case("Pad constant default zero", "Pad",
                            {random_floats({2, 3, 5}, 111), ints1({0, 1, 2, 1, 0, 3})}, {}, 1, {1}));
  cases.push_back(make_case("Pad reflect", "Pad", {random_floats({1, 2, 5, 5}, 112), ints1({0, 0, 2, 1, 0, 0, 1, 2})},
                            {{"mode", string_attr("reflect")}}, 1, {1}));
  cases.push_back(make_case("Pad edge", "Pad", {random_floats({2, 3, 4}, 113), ints1({1, 2, 3, 2, 1, 0})},
                            {{"mode", string_attr("edge")}}, 1, {1}));
  cases.push_back(
      make_case("Pad negative pads", "Pad", {random_floats({5, 6}, 114), ints1({-1, 2, 1, -2})}, {}, 1, {1}));
  cases.push_back(make_case("Pad reflect negative pads", "Pad", {random_floats({5, 6}, 115), ints1({-1, 2, 1, -2})},
                            {{"mode", string_attr("reflect")}}, 1, {1}));
  VkCase axes = make_case("Pad-18 axes", "Pad",
                          {random_floats({3, 4, 5}, 116), ints1({2, 3}), std::nullopt, ints1({-1})}, {}, 1, {1, 3});
  axes.opset = 18;
  cases.push_back(axes);
  VkCase p2 = make_case("Pad-2 attrs", "Pad", {random_floats({3, 3}, 117)},
                        {{"pads", ints_attr({1, 0, 0, 2})}, {"value", float_attr(-2.0f)}});
  p2.opset = 2;
  cases.push_back(p2);
  cases.push_back(make_case("Pad int64 constant", "Pad",
                            {int_data({3, 4}), ints1({1, 1, 1, 1}), Tensor::scalar<int64_t>(-7)}, {}, 1, {1, 2}));
  VkCase wrap = make_case("Pad-19 wrap", "Pad", {random_floats({3, 4}, 118), ints1({2, 5, 1, 3})},
                          {{"mode", string_attr("wrap")}}, 1, {1});
  wrap.opset = 19;
  cases.push_back(wrap);
  cases.push_back(make_case("Pad runtime constant_value", "Pad",
                            {random_floats({4, 3}, 119), ints1({0, 1, 0, 1}), Tensor::scalar<float>(3.0f)}, {}, 1,
                            {1}));
  cases.push_back(make_case("Pad reflect 8x3x64x64", "Pad",
                            {random_floats({8, 3, 64, 64}, 120), ints1({0, 0, 1, 1, 0, 0, 1, 1})},
                            {{"mode", string_attr("reflect")}}, 1, {1}));
  cases.push_back(
      make_case("Pad constant on empty axis", "Pad", {random_floats({0, 3}, 121), ints1({1, 0, 1, 0})}, {}, 1, {1}));
}

}  // namespace

// OneHot (depth a build-time constant): last, first and middle axes, negative and
// out-of-range indices (wrapped from opset 11, not in opset 9), float indices and depth,
// integer values. EyeLike: square and wide, k positive, negative and beyond, int and bool.
// ReverseSequence.
void add_generators(std::vector<VkCase>& cases) {
  const auto versioned = [](VkCase c, int64_t opset) {
    c.opset = opset;
    return c;
  };
  cases.push_back(versioned(make_case("OneHot 3x5 depth 7", "OneHot",
                                      {ints({3, 5}, {0, 1, 2, 3, 4, 5, 6, 7, -1, -7, -8, 2, 2, 0, 6}), ints1({7}),
                                       Tensor::from_vector<float>({2}, {-0.5f, 2.25f})},
                                      {}, 1, {1}),
                            11));
  cases.push_back(versioned(make_case("OneHot axis 0 float indices int32 values", "OneHot",
                                      {Tensor::from_vector<float>({2, 3}, {0.5f, 1.9f, -1.2f, 3.0f, 4.0f, 2.7f}),
                                       Tensor::scalar<float>(4.0f), Tensor::from_vector<int32_t>({2}, {0, 9})},
                                      {{"axis", int_attr(0)}}, 1, {1}),
                            11));
  cases.push_back(versioned(make_case("OneHot-9 axis 1 negative indices off", "OneHot",
                                      {ints({2, 2, 3}, {0, 1, 2, -1, -2, 3, 2, 2, 1, 0, 5, -3}), ints1({3}),
                                       Tensor::from_vector<int64_t>({2}, {1, 5})},
                                      {{"axis", int_attr(-2)}}, 1, {1}),
                            9));
  cases.push_back(versioned(make_case("EyeLike 5x5", "EyeLike", {random_floats({5, 5}, 60)}), 9));
  cases.push_back(versioned(make_case("EyeLike int32 k 2 3x9", "EyeLike", {int_data({3, 9}, DType::Int32)},
                                      {{"k", int_attr(2)}}),
                            9));
  cases.push_back(versioned(make_case("EyeLike bool k -1 6x4", "EyeLike", {random_floats({6, 4}, 61)},
                                      {{"k", int_attr(-1)}, {"dtype", int_attr(9)}}),
                            9));
  cases.push_back(
      versioned(make_case("EyeLike k 20 4x4", "EyeLike", {random_floats({4, 4}, 62)}, {{"k", int_attr(20)}}), 9));

  // ReverseSequence: time-major and batch-major, lengths 0, 1, partial and whole, integer data.
  cases.push_back(versioned(make_case("ReverseSequence time-major 5x4x3", "ReverseSequence",
                                      {random_floats({5, 4, 3}, 63), ints1({5, 0, 1, 3})}),
                            10));
  cases.push_back(versioned(make_case("ReverseSequence batch-major int32 3x6 constant lengths", "ReverseSequence",
                                      {int_data({3, 6}, DType::Int32), ints1({2, 6, 4})},
                                      {{"time_axis", int_attr(1)}, {"batch_axis", int_attr(0)}}, 1, {1}),
                            10));

  // Compress (condition a build-time constant): an axis, no axis (flattened), a short
  // condition, nothing kept, integer data.
  const auto cond = [](std::vector<bool> v) {
    Tensor t(DType::Bool, {int64_t(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
    return t;
  };
  cases.push_back(versioned(make_case("Compress axis 1 3x5x4", "Compress",
                                      {random_floats({3, 5, 4}, 64), cond({true, false, true, true, false})},
                                      {{"axis", int_attr(1)}}, 1, {1}),
                            11));
  cases.push_back(versioned(make_case("Compress flattened short condition int32 2x3", "Compress",
                                      {int_data({2, 3}, DType::Int32), cond({false, true, false, true})}, {}, 1, {1}),
                            11));
  cases.push_back(
      versioned(make_case("Compress axis -1 nothing kept 4x3", "Compress",
                          {random_floats({4, 3}, 65), cond({false, false, false})}, {{"axis", int_attr(-1)}}, 1, {1}),
                11));
}

VKG_VK_CASES(movement) {
  std::vector<VkCase> cases;
  add_copies(cases);
  add_transposes(cases);
  add_concats(cases);
  add_splits(cases);
  add_slices(cases);
  add_expands(cases);
  add_tiles(cases);
  add_pads(cases);
  add_generators(cases);
  return cases;
}

}  // namespace vkg::test

namespace vkg::test {
namespace {

TEST(MovementTactics, DropoutTrainingWithRatioDeclines) {
  TacticPlanner p("Dropout", 13);
  p.input(DType::Float32, {4, 4});
  p.input(DType::Float32, {}, Tensor::scalar<float>(0.5f));
  p.input(DType::Bool, {}, Tensor::scalar<bool>(true));
  p.output(DType::Float32, {4, 4});
  std::string why;
  EXPECT_FALSE(p.plan("copy.scalar.f32", why));
  EXPECT_NE(why.find("training"), std::string::npos) << why;
}

TEST(MovementTactics, DropoutTrainingWithRuntimeFlagDeclines) {
  TacticPlanner p("Dropout", 13);
  p.input(DType::Float32, {4, 4});
  p.input(DType::Float32, {}, Tensor::scalar<float>(0.5f));
  p.input(DType::Bool, {});
  p.output(DType::Float32, {4, 4});
  std::string why;
  EXPECT_FALSE(p.plan("copy.vec4.f32", why));
  EXPECT_NE(why.find("not a build-time constant"), std::string::npos) << why;
}

TEST(MovementTactics, ShapeInputsMustBeConstant) {
  TacticPlanner p("Reshape", 13);
  p.input(DType::Float32, {2, 6});
  p.input(DType::Int64, {2});
  p.output(DType::Float32, {3, 4});
  std::string why;
  EXPECT_FALSE(p.plan("copy.scalar.f32", why));
  EXPECT_NE(why.find("not a build-time constant"), std::string::npos) << why;
}

TEST(MovementTactics, Fp16DeclinesIntegerData) {
  TacticPlanner p("Transpose", 13);
  p.input(DType::Int64, {4, 8});
  p.output(DType::Int64, {8, 4});
  std::string why;
  EXPECT_FALSE(p.plan("transpose.scalar.f16", why));
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(p.plan("transpose.scalar.f32", why)) << why;
}

// Split-18 with num_outputs: the last chunk is smaller when the axis does not divide evenly.
TEST(MovementTactics, Split18UnevenLastChunkIsSmaller) {
  TacticPlanner p("Split", 18, {{"axis", int_attr(1)}, {"num_outputs", int_attr(3)}});
  p.input(DType::Float32, {2, 8});
  p.output(DType::Float32, {2, 3});
  p.output(DType::Float32, {2, 3});
  p.output(DType::Float32, {2, 2});
  std::string why;
  const auto plan = p.plan("split.single.f32", why);
  ASSERT_TRUE(plan) << why;
  ASSERT_EQ(plan->dispatches.size(), 1u);
  // n, row, then the end column of each output.
  const std::vector<uint32_t> push = {16, 8, 3, 6, 8, 8, 8, 8, 8, 8};
  EXPECT_EQ(plan->dispatches[0].push, push);
}

}  // namespace
}  // namespace vkg::test
