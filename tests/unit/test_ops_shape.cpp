// Reference kernels of the data-movement, shape, constant, Pad and Resize ops,
// run through run_reference_node at the opsets where their signatures differ.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {
namespace {

using namespace test;

// A node named "n1" with `num_inputs` inputs and `num_outputs` outputs.
Node shape_node(const std::string& op, size_t num_inputs, size_t num_outputs = 1, Attrs attrs = {}) {
  return make_named_node("n1", op, num_inputs, num_outputs, std::move(attrs));
}

Tensor i64(Shape shape, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(std::move(shape), v); }
Tensor i64s(std::vector<int64_t> v) { return i64({int64_t(v.size())}, v); }
Tensor f32(Shape shape, std::vector<float> v) { return Tensor::from_vector<float>(std::move(shape), v); }

// Expects an Error whose message names node "n1" and contains `part`.
void expect_node_error(const Node& node, int64_t opset, const std::vector<const Tensor*>& inputs,
                       const std::string& part) {
  try {
    run(node, opset, inputs);
    FAIL() << "expected an Error containing '" << part << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'n1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(ShapeOps, ConcatInt64AndBool) {
  const Tensor a = i64({2, 1}, {1, 2}), b = i64({2, 2}, {3, 4, 5, 6});
  const Tensor out = run1(shape_node("Concat", 2, 1, {{"axis", int_attr(-1)}}), 13, {&a, &b});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));

  const Tensor c = Tensor::from_vector<bool>({1}, {true}), d = Tensor::from_vector<bool>({2}, {false, true});
  EXPECT_EQ(values<bool>(run1(shape_node("Concat", 2, 1, {{"axis", int_attr(0)}}), 13, {&c, &d})),
            (std::vector<bool>{true, false, true}));
  const Tensor bad = i64({3, 1}, {1, 2, 3});
  expect_node_error(shape_node("Concat", 2, 1, {{"axis", int_attr(1)}}), 13, {&a, &bad}, "does not match");
}

TEST(ShapeOps, SplitAttributeBefore13InputFrom13) {
  const Tensor x = f32({5}, {1, 2, 3, 4, 5});
  const auto by_attr = run(shape_node("Split", 1, 2, {{"split", ints_attr({2, 3})}}), 11, {&x});
  EXPECT_EQ(values<float>(by_attr[1]), (std::vector<float>{3, 4, 5}));
  const Tensor sizes = i64s({4, 1});
  const auto by_input = run(shape_node("Split", 2, 2), 13, {&x, &sizes});
  EXPECT_EQ(values<float>(by_input[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(by_input[1].shape(), (Shape{1}));

  const Tensor y = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto equal = run(shape_node("Split", 1, 2, {{"axis", int_attr(1)}}), 13, {&y, nullptr});
  EXPECT_EQ(values<float>(equal[1]), (std::vector<float>{3, 4, 7, 8}));
  expect_node_error(shape_node("Split", 1, 2), 13, {&x}, "equal parts");
  const Tensor wrong = i64s({1, 1});
  expect_node_error(shape_node("Split", 2, 2), 13, {&x, &wrong}, "do not add up");
}

TEST(ShapeOps, SliceAttributesBefore10) {
  const Tensor x = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Node n =
      shape_node("Slice", 1, 1, {{"starts", ints_attr({1})}, {"ends", ints_attr({1000})}, {"axes", ints_attr({1})}});
  const Tensor out = run1(n, 9, {&x});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3, 5, 6, 7}));
}

TEST(ShapeOps, SliceNegativeStepsAndHugeIndices) {
  const Tensor x = i64s({0, 1, 2, 3, 4, 5});
  const Tensor starts = i64s({-1}), ends = i64s({std::numeric_limits<int64_t>::min()}), axes = i64s({0}),
               steps = i64s({-2});
  EXPECT_EQ(values<int64_t>(run1(shape_node("Slice", 5), 13, {&x, &starts, &ends, &axes, &steps})),
            (std::vector<int64_t>{5, 3, 1}));
  const Tensor s2 = i64s({2}), e2 = i64s({std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(values<int64_t>(run1(shape_node("Slice", 3), 13, {&x, &s2, &e2})), (std::vector<int64_t>{2, 3, 4, 5}));
  const Tensor s3 = Tensor::from_vector<int32_t>({1}, {4}), e3 = Tensor::from_vector<int32_t>({1}, {1});
  EXPECT_EQ(run1(shape_node("Slice", 3), 13, {&x, &s3, &e3}).shape(), (Shape{0}));
  const Tensor zero = i64s({0});
  expect_node_error(shape_node("Slice", 5), 13, {&x, &starts, &ends, &axes, &zero}, "step");
}

TEST(ShapeOps, GatherNegativeIndicesAndRangeCheck) {
  const Tensor data = i64({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::from_vector<int32_t>({2}, {-1, 0});
  const Tensor rows = run1(shape_node("Gather", 2), 13, {&data, &idx});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(rows), (std::vector<int64_t>{5, 6, 1, 2}));
  const Tensor cols = run1(shape_node("Gather", 2, 1, {{"axis", int_attr(1)}}), 13, {&data, &idx});
  EXPECT_EQ(values<int64_t>(cols), (std::vector<int64_t>{2, 1, 4, 3, 6, 5}));
  const Tensor scalar_idx = Tensor::scalar<int64_t>(1);
  EXPECT_EQ(run1(shape_node("Gather", 2), 13, {&data, &scalar_idx}).shape(), (Shape{2}));
  const Tensor bad = i64s({3});
  expect_node_error(shape_node("Gather", 2), 13, {&data, &bad}, "out of range");
}

TEST(ShapeOps, GatherElementsAndScatter) {
  const Tensor data = f32({2, 2}, {1, 2, 3, 4});
  const Tensor idx = i64({2, 2}, {0, 0, 1, 0});
  EXPECT_EQ(values<float>(run1(shape_node("GatherElements", 2, 1, {{"axis", int_attr(1)}}), 13, {&data, &idx})),
            (std::vector<float>{1, 1, 4, 3}));
  const Tensor upd = f32({2, 2}, {10, 20, 30, 40});
  const Tensor scattered = run1(shape_node("ScatterElements", 3, 1, {{"axis", int_attr(1)}}), 13, {&data, &idx, &upd});
  EXPECT_EQ(values<float>(scattered), (std::vector<float>{20, 2, 40, 30}));
  const Tensor summed =
      run1(shape_node("ScatterElements", 3, 1, {{"axis", int_attr(1)}, {"reduction", string_attr("add")}}), 16,
           {&data, &idx, &upd});
  EXPECT_EQ(values<float>(summed), (std::vector<float>{31, 2, 43, 34}));

  const Tensor v = i64s({1, 2, 3, 4});
  const Tensor nd_idx = i64({3, 1}, {1, 1, -1});
  const Tensor nd_upd = i64s({10, 20, 30});
  const Tensor nd =
      run1(shape_node("ScatterND", 3, 1, {{"reduction", string_attr("add")}}), 16, {&v, &nd_idx, &nd_upd});
  EXPECT_EQ(values<int64_t>(nd), (std::vector<int64_t>{1, 32, 3, 34}));
  const Tensor gathered = run1(shape_node("GatherND", 2), 13, {&v, &nd_idx});
  EXPECT_EQ(values<int64_t>(gathered), (std::vector<int64_t>{2, 2, 4}));
}

TEST(ShapeOps, ReshapeCopiesZeroInfersMinusOne) {
  const Tensor x = f32({2, 3, 4}, std::vector<float>(24, 1.0f));
  const Tensor shape = i64s({0, -1});
  EXPECT_EQ(run1(shape_node("Reshape", 2), 13, {&x, &shape}).shape(), (Shape{2, 12}));
  const Tensor empty = f32({0, 3}, {});
  const Tensor keep_zero = i64s({3, 0});
  EXPECT_EQ(run1(shape_node("Reshape", 2, 1, {{"allowzero", int_attr(1)}}), 14, {&empty, &keep_zero}).shape(),
            (Shape{3, 0}));
  const Tensor bad = i64s({5, -1});
  expect_node_error(shape_node("Reshape", 2), 13, {&x, &bad}, "cannot reshape");
  const Tensor two_infer = i64s({-1, -1});
  expect_node_error(shape_node("Reshape", 2), 13, {&x, &two_infer}, "more than one -1");
}

TEST(ShapeOps, FlattenAxisMayEqualRank) {
  const Tensor x = f32({2, 3, 4}, std::vector<float>(24, 0.0f));
  EXPECT_EQ(run1(shape_node("Flatten", 1, 1, {{"axis", int_attr(3)}}), 13, {&x}).shape(), (Shape{24, 1}));
  EXPECT_EQ(run1(shape_node("Flatten", 1, 1, {{"axis", int_attr(0)}}), 13, {&x}).shape(), (Shape{1, 24}));
  EXPECT_EQ(run1(shape_node("Flatten", 1), 13, {&x}).shape(), (Shape{2, 12}));
  expect_node_error(shape_node("Flatten", 1, 1, {{"axis", int_attr(4)}}), 13, {&x}, "out of range");
}

TEST(ShapeOps, TransposeDefaultReversesAndChecksPerm) {
  const Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor t = run1(shape_node("Transpose", 1), 13, {&x});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  expect_node_error(shape_node("Transpose", 1, 1, {{"perm", ints_attr({0, 0})}}), 13, {&x}, "more than once");
}

TEST(ShapeOps, SqueezeUnsqueezeAttributeBefore13InputFrom13) {
  const Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run1(shape_node("Squeeze", 1), 13, {&x}).shape(), (Shape{3}));
  EXPECT_EQ(run1(shape_node("Squeeze", 1, 1, {{"axes", ints_attr({-1})}}), 11, {&x}).shape(), (Shape{1, 3}));
  const Tensor axes = i64s({0});
  EXPECT_EQ(run1(shape_node("Squeeze", 2), 13, {&x, &axes}).shape(), (Shape{3, 1}));
  const Tensor axis1 = i64s({1});
  expect_node_error(shape_node("Squeeze", 2), 13, {&x, &axis1}, "cannot squeeze");

  const Tensor y = f32({3}, {1, 2, 3});
  EXPECT_EQ(run1(shape_node("Unsqueeze", 1, 1, {{"axes", ints_attr({0, -1})}}), 11, {&y}).shape(), (Shape{1, 3, 1}));
  const Tensor uaxes = i64s({2, 0});
  EXPECT_EQ(run1(shape_node("Unsqueeze", 2), 13, {&y, &uaxes}).shape(), (Shape{1, 3, 1}));
  const Tensor out_of_range = i64s({3});
  expect_node_error(shape_node("Unsqueeze", 2), 13, {&y, &out_of_range}, "out of range");
}

TEST(ShapeOps, ExpandAndTile) {
  const Tensor x = i64({3, 1}, {1, 2, 3});
  const Tensor shape = i64s({2, 1, 2});
  const Tensor e = run1(shape_node("Expand", 2), 13, {&x, &shape});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<int64_t>(e), (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  const Tensor bad = i64s({2, 2});
  expect_node_error(shape_node("Expand", 2), 13, {&x, &bad}, "broadcast");

  const Tensor b = Tensor::from_vector<bool>({1, 2}, {true, false});
  const Tensor repeats = i64s({2, 2});
  const Tensor t = run1(shape_node("Tile", 2), 13, {&b, &repeats});
  EXPECT_EQ(t.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<bool>(t), (std::vector<bool>{true, false, true, false, true, false, true, false}));
}

TEST(ShapeOps, ConstantsAndShapeQueries) {
  EXPECT_EQ(values<int64_t>(run1(shape_node("Constant", 0, 1, {{"value_ints", ints_attr({4, 5})}}), 13, {})),
            (std::vector<int64_t>{4, 5}));
  const Tensor f = run1(shape_node("Constant", 0, 1, {{"value_float", float_attr(2.5f)}}), 13, {});
  EXPECT_EQ(f.shape(), Shape{});
  EXPECT_EQ(f.data<float>()[0], 2.5f);
  EXPECT_EQ(values<float>(run1(shape_node("Constant", 0, 1, {{"value_floats", floats_attr({1, 2})}}), 13, {})),
            (std::vector<float>{1, 2}));
  const Tensor t = i64s({7});
  EXPECT_TRUE(run1(shape_node("Constant", 0, 1, {{"value", tensor_attr(t)}}), 13, {}).bit_equal(t));
  expect_node_error(shape_node("Constant", 0, 1, {{"value_string", string_attr("hi")}}), 13, {}, "string");

  const Tensor shape = i64s({2, 3});
  const Tensor zeros = run1(shape_node("ConstantOfShape", 1), 13, {&shape});
  EXPECT_EQ(zeros.describe(), "float32[2, 3]");
  const Tensor seven = run1(shape_node("ConstantOfShape", 1, 1, {{"value", tensor_attr(i64s({7}))}}), 13, {&shape});
  EXPECT_EQ(values<int64_t>(seven), std::vector<int64_t>(6, 7));

  const Tensor x = f32({2, 3, 4}, std::vector<float>(24, 0.0f));
  EXPECT_EQ(values<int64_t>(run1(shape_node("Shape", 1), 13, {&x})), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(run1(shape_node("Shape", 1, 1, {{"start", int_attr(-2)}}), 15, {&x})),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(run1(shape_node("Shape", 1, 1, {{"start", int_attr(1)}, {"end", int_attr(-1)}}), 15, {&x})),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(run1(shape_node("Size", 1), 13, {&x}).data<int64_t>()[0], 24);
}

TEST(ShapeOps, RangeAndNonZero) {
  const Tensor s = Tensor::scalar<int32_t>(10), l = Tensor::scalar<int32_t>(1), d = Tensor::scalar<int32_t>(-3);
  EXPECT_EQ(values<int32_t>(run1(shape_node("Range", 3), 11, {&s, &l, &d})), (std::vector<int32_t>{10, 7, 4}));
  const Tensor fs = Tensor::scalar<float>(1), fl = Tensor::scalar<float>(2), fd = Tensor::scalar<float>(0.25f);
  EXPECT_EQ(values<float>(run1(shape_node("Range", 3), 11, {&fs, &fl, &fd})),
            (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  const Tensor zero = Tensor::scalar<int32_t>(0);
  expect_node_error(shape_node("Range", 3), 11, {&s, &l, &zero}, "delta");

  const Tensor x = i64({2, 2}, {0, 5, 7, 0});
  const Tensor nz = run1(shape_node("NonZero", 1), 13, {&x});
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(nz), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(PadOp, AttributesBefore11) {
  const Tensor x = Tensor::from_vector<int32_t>({2}, {1, 2});
  const Tensor out = run1(shape_node("Pad", 1, 1, {{"pads", ints_attr({1, 2})}, {"value", float_attr(7.0f)}}), 2, {&x});
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{7, 1, 2, 7, 7}));
  const Tensor old = run1(shape_node("Pad", 1, 1, {{"paddings", ints_attr({0, 1})}}), 1, {&x});
  EXPECT_EQ(values<int32_t>(old), (std::vector<int32_t>{1, 2, 0}));
}

TEST(PadOp, ConstantValueInputAndModes) {
  const Tensor x = i64s({1, 2, 3, 4, 5});
  const Tensor pads = i64s({1, 1}), value = Tensor::scalar<int64_t>(-9);
  EXPECT_EQ(values<int64_t>(run1(shape_node("Pad", 3), 13, {&x, &pads, &value})),
            (std::vector<int64_t>{-9, 1, 2, 3, 4, 5, -9}));
  // Negative pads crop first; the other side is then reflected from the cropped data.
  const Tensor crop_reflect = i64s({-1, 2});
  EXPECT_EQ(values<int64_t>(run1(shape_node("Pad", 2, 1, {{"mode", string_attr("reflect")}}), 13, {&x, &crop_reflect})),
            (std::vector<int64_t>{2, 3, 4, 5, 4, 3}));
  const Tensor crop_edge = i64s({2, -3});
  EXPECT_EQ(values<int64_t>(run1(shape_node("Pad", 2, 1, {{"mode", string_attr("edge")}}), 13, {&x, &crop_edge})),
            (std::vector<int64_t>{1, 1, 1, 2}));
  const Tensor big = i64s({6, 0});  // reflect further than the data: numpy's repeated reflection
  EXPECT_EQ(values<int64_t>(run1(shape_node("Pad", 2, 1, {{"mode", string_attr("reflect")}}), 13, {&x, &big})),
            (std::vector<int64_t>{3, 4, 5, 4, 3, 2, 1, 2, 3, 4, 5}));

  const Tensor y = f32({2, 2}, {1, 2, 3, 4});
  const Tensor pads2 = i64s({0, 1, 1, 0});
  const Tensor out = run1(shape_node("Pad", 2), 11, {&y, &pads2});
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 1, 2, 0, 3, 4, 0, 0, 0}));
  const Tensor wrong = i64s({1, 1});
  expect_node_error(shape_node("Pad", 2), 11, {&y, &wrong}, "pads");
  const Tensor too_much = i64s({-3, 0});
  const Tensor small = i64s({1, 2});
  expect_node_error(shape_node("Pad", 2), 11, {&small, &too_much}, "crop");
}

TEST(ResizeOp, Opset10NearestUsesLegacyRounding) {
  const Tensor x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor scales = f32({4}, {1, 1, 0.6f, 0.6f});
  const Tensor out = run1(shape_node("Resize", 2), 10, {&x, &scales});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 3}));
}

TEST(ResizeOp, UpsampleAttributeAndInputScales) {
  const Tensor x = f32({1, 2}, {1, 3});
  const Tensor nearest = run1(shape_node("Upsample", 1, 1, {{"scales", floats_attr({2, 2})}}), 7, {&x});
  EXPECT_EQ(nearest.shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(nearest), (std::vector<float>{1, 1, 3, 3, 1, 1, 3, 3}));
  const Tensor scales = f32({2}, {1, 2});
  const Tensor linear = run1(shape_node("Upsample", 2, 1, {{"mode", string_attr("linear")}}), 9, {&x, &scales});
  EXPECT_EQ(values<float>(linear), (std::vector<float>{1, 2, 3, 3}));
}

TEST(ResizeOp, SizesWithCoordinateModes) {
  const Tensor x = f32({1, 4}, {1, 2, 3, 4});
  const Tensor sizes = i64s({1, 3});
  const Node align =
      shape_node("Resize", 4, 1,
                 {{"mode", string_attr("linear")}, {"coordinate_transformation_mode", string_attr("align_corners")}});
  EXPECT_EQ(values<float>(run1(align, 13, {&x, nullptr, nullptr, &sizes})), (std::vector<float>{1, 2.5f, 4}));

  const Tensor half = i64s({1, 2});
  const Node nn = shape_node("Resize", 4, 1, {{"coordinate_transformation_mode", string_attr("tf_half_pixel_for_nn")}});
  const Tensor empty = f32({0}, {});
  EXPECT_EQ(values<float>(run1(nn, 11, {&x, &empty, &empty, &half})), (std::vector<float>{2, 4}));

  // Nearest copies bytes, so integer types keep every bit.
  const Tensor big = i64({1, 2}, {std::numeric_limits<int64_t>::max(), 3});
  const Tensor up = i64s({1, 4});
  EXPECT_EQ(values<int64_t>(run1(shape_node("Resize", 4), 13, {&big, nullptr, nullptr, &up})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max(), 3, 3}));
}

TEST(ResizeOp, ScalesOrSizesExactlyOne) {
  const Tensor x = f32({1, 4}, {1, 2, 3, 4});
  const Tensor sizes = i64s({1, 3});
  const Tensor scales = f32({2}, {1, 2});
  expect_node_error(shape_node("Resize", 4), 13, {&x, nullptr, &scales, &sizes}, "exactly one");
  expect_node_error(shape_node("Resize", 4), 13, {&x, nullptr, nullptr, nullptr}, "exactly one");
  expect_node_error(shape_node("Resize", 4, 1, {{"mode", string_attr("bogus")}}), 13, {&x, nullptr, &scales}, "bogus");
}

TEST(ShapeOps, UniqueSortedAndInOrderOfFirstOccurrence) {
  const Tensor x = Tensor::from_vector<float>({6}, {2, 1, 1, 3, 4, 3});
  const std::vector<Tensor> s = run(shape_node("Unique", 1, 4), 11, {&x});
  EXPECT_EQ(values<float>(s[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(s[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(s[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(s[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  const std::vector<Tensor> u = run(shape_node("Unique", 1, 4, {{"sorted", int_attr(0)}}), 11, {&x});
  EXPECT_EQ(values<float>(u[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  // Rows along axis 0: [1, 0] twice and [0, 1], sorted lexicographically.
  const Tensor m = Tensor::from_vector<int64_t>({3, 2}, {1, 0, 0, 1, 1, 0});
  const std::vector<Tensor> rows = run(shape_node("Unique", 1, 4, {{"axis", int_attr(0)}}), 11, {&m});
  EXPECT_EQ(rows[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(rows[0]), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(values<int64_t>(rows[2]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_THROW(run(shape_node("Unique", 1, 4, {{"axis", int_attr(2)}}), 11, {&m}), Error);
  // NaNs sort last and count as one value.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor nans = Tensor::from_vector<float>({3}, {nan, 1, nan});
  const std::vector<Tensor> n = run(shape_node("Unique", 1, 4), 11, {&nans});
  EXPECT_EQ(values<int64_t>(n[1]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(n[3]), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace vkg
