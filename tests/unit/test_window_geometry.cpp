// The shared window rules (runtime/core/window_geometry.h) and Resize's coordinate
// transforms (runtime/core/resize_sampling.h), pinned to values worked out from the
// ONNX spec and its node tests, so that a change to a rule shows here before it shows
// as a mismatch between the reference and the Vulkan backend.
#include <gtest/gtest.h>

#include <string>

#include "op_test_util.h"
#include "runtime/core/error.h"
#include "runtime/core/resize_sampling.h"
#include "runtime/core/window_geometry.h"

namespace vkg {
namespace {

using namespace test;

Node window_node(const std::string& op, Attrs attrs) {
  return make_named_node(op + "_node", op, 2, 1, std::move(attrs));
}

// Runs `fn`, expecting an Error whose message holds `fragment` and names the node.
template <class Fn> void expect_error(Fn&& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_NE(what.find("_node"), std::string::npos) << what;
  }
}

TEST(WindowGeometry, DilatedExtent) {
  EXPECT_EQ(window::dilated_extent(3, 1), 3);
  EXPECT_EQ(window::dilated_extent(3, 2), 5);
  EXPECT_EQ(window::dilated_extent(4, 3), 10);
  EXPECT_EQ(window::dilated_extent(1, 5), 1);
}

TEST(WindowGeometry, SamePaddingSplitsOddTotalsByMode) {
  // in 6, kernel 3, stride 2: 3 outputs need (3 - 1) * 2 + 3 - 6 = 1 pad.
  window::Axis upper = window::same_axis(6, 3, 2, true), lower = window::same_axis(6, 3, 2, false);
  EXPECT_EQ(upper.out, 3);
  EXPECT_EQ(lower.out, 3);
  EXPECT_EQ(upper.pad_begin, 0);
  EXPECT_EQ(upper.pad_end, 1);
  EXPECT_EQ(lower.pad_begin, 1);
  EXPECT_EQ(lower.pad_end, 0);
  // in 4, kernel 4, stride 1: a total of 3, the odd one at the end (UPPER) or the start (LOWER).
  upper = window::same_axis(4, 4, 1, true);
  lower = window::same_axis(4, 4, 1, false);
  EXPECT_EQ(upper.out, 4);
  EXPECT_EQ(upper.pad_begin, 1);
  EXPECT_EQ(upper.pad_end, 2);
  EXPECT_EQ(lower.pad_begin, 2);
  EXPECT_EQ(lower.pad_end, 1);
}

TEST(WindowGeometry, SamePaddingEvenTotalsAndNoNegativePads) {
  // in 5, kernel 3, stride 2: a total of 2 splits evenly in both modes.
  for (bool upper : {true, false}) {
    const window::Axis a = window::same_axis(5, 3, 2, upper);
    EXPECT_EQ(a.out, 3);
    EXPECT_EQ(a.pad_begin, 1);
    EXPECT_EQ(a.pad_end, 1);
  }
  // in 8, kernel 1, stride 3: 3 outputs would need -1; padding never goes negative.
  const window::Axis a = window::same_axis(8, 1, 3, true);
  EXPECT_EQ(a.out, 3);
  EXPECT_EQ(a.pad_begin, 0);
  EXPECT_EQ(a.pad_end, 0);
  // Dilation widens the window: kernel 2 with dilation 3 spans 4, in 6 stride 1 needs 3.
  const window::Axis d = window::same_axis(6, window::dilated_extent(2, 3), 1, false);
  EXPECT_EQ(d.out, 6);
  EXPECT_EQ(d.pad_begin, 2);
  EXPECT_EQ(d.pad_end, 1);
}

TEST(WindowGeometry, ExplicitPadsFloorAndCeil) {
  // MaxPool 4 wide, kernel 3, stride 2 (ONNX's maxpool_2d_ceil): floor 1, ceil 2.
  EXPECT_EQ(window::padded_output(4, 3, 2, 0, 0, false), 1);
  EXPECT_EQ(window::padded_output(4, 3, 2, 0, 0, true), 2);
  // in 6, kernel 3, stride 2, pads 1 and 1: the ceil window starts at input 5, inside.
  EXPECT_EQ(window::padded_output(6, 3, 2, 1, 1, false), 3);
  EXPECT_EQ(window::padded_output(6, 3, 2, 1, 1, true), 4);
  // Dilation: kernel 3, dilation 2 over 7 leaves 3 positions.
  EXPECT_EQ(window::padded_output(7, window::dilated_extent(3, 2), 1, 0, 0, false), 3);
  // A window larger than the padded input does not fit.
  EXPECT_EQ(window::padded_output(2, 5, 1, 1, 1, false), std::nullopt);
}

TEST(WindowGeometry, CeilModeDropsAWindowStartingPastTheInput) {
  // ONNX's maxpool_2d_ceil_output_size_reduce_by_one: in 2, kernel 1, stride 2. Ceil
  // would add a window starting at 2, past the input: it is dropped, leaving 1.
  EXPECT_EQ(window::padded_output(2, 1, 2, 0, 0, true), 1);
  // in 4, end pad 1, kernel 1, stride 2: the window at 4 starts in the end padding.
  // Floor mode keeps it (the plain formula); ceil mode drops it.
  EXPECT_EQ(window::padded_output(4, 1, 2, 0, 1, false), 3);
  EXPECT_EQ(window::padded_output(4, 1, 2, 0, 1, true), 2);
  // A window starting in the begin padding is kept: in 3, pads 2 and 0, kernel 2, stride 2.
  EXPECT_EQ(window::padded_output(3, 2, 2, 2, 0, true), 3);
}

TEST(WindowGeometry, ValidAutoPad) {
  EXPECT_EQ(window::valid_output(7, 3, 2), 3);
  EXPECT_EQ(window::valid_output(5, 5, 1), 1);
  EXPECT_EQ(window::valid_output(4, 5, 1), std::nullopt);
}

TEST(WindowGeometry, ResolveWindowReadsTheNode) {
  Node n = window_node("Conv", {{"auto_pad", string_attr("SAME_LOWER")}, {"strides", ints_attr({2, 1})}});
  WindowGeometry g = resolve_window(n, {6, 4}, {3, 4}, false);
  EXPECT_EQ(g.out, Shape({3, 4}));
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({1, 2}));
  EXPECT_EQ(g.pads_end, std::vector<int64_t>({0, 1}));

  n = window_node("MaxPool", {{"strides", ints_attr({2, 2})}, {"ceil_mode", int_attr(1)}});
  g = resolve_window(n, {2, 2}, {1, 1}, true);
  EXPECT_EQ(g.out, Shape({1, 1}));

  n = window_node("AveragePool", {{"pads", ints_attr({1, 0, 1, 0})}, {"dilations", ints_attr({2, 1})}});
  g = resolve_window(n, {5, 3}, {3, 2}, false);
  EXPECT_EQ(g.out, Shape({3, 2}));  // (5 + 2 - 5) / 1 + 1 and (3 - 2) / 1 + 1
  EXPECT_EQ(g.extent(0), 5);
  // Output 2, kernel offset 1 along dim 0 reads input 2 + 1 * 2 - 1 = 3.
  EXPECT_EQ(g.tap(0, 2, 1), 3);
}

TEST(WindowGeometry, PoolAndConvKernels) {
  const Node pool = window_node("AveragePool", {{"kernel_shape", ints_attr({3})},
                                                {"strides", ints_attr({2})},
                                                {"pads", ints_attr({1, 1})},
                                                {"ceil_mode", int_attr(1)}});
  EXPECT_EQ(resolve_pool_window(pool, {6}).out, Shape({4}));
  expect_error([] { resolve_pool_window(window_node("MaxPool", {}), {6}); }, "'kernel_shape' is missing");
  EXPECT_EQ(conv_kernel_shape(window_node("Conv", {}), {8, 3, 5, 1}), Shape({5, 1}));
  expect_error(
      [] {
        conv_kernel_shape(window_node("Conv", {{"kernel_shape", ints_attr({3, 3})}}), {8, 3, 5, 1});
      },
      "does not match the weights");
}

TEST(WindowGeometry, ResolveWindowErrorsNameTheNode) {
  expect_error(
      [] {
        resolve_window(window_node("Conv", {{"auto_pad", string_attr("SAME")}}), {4}, {3}, false);
      },
      "unknown auto_pad 'SAME'");
  expect_error(
      [] {
        resolve_window(window_node("Conv", {{"pads", ints_attr({1, 1})}}), {2}, {5}, false);
      },
      "does not fit the padded input");
  expect_error(
      [] {
        resolve_window(window_node("Conv", {{"auto_pad", string_attr("VALID")}}), {2}, {3}, false);
      },
      "larger than the input");
  expect_error(
      [] {
        resolve_window(window_node("Conv", {{"strides", ints_attr({1, 1})}}), {4}, {3}, false);
      },
      "attribute 'strides' has 2 values, expected 1");
  expect_error([] { resolve_window(window_node("Conv", {}), {4, 4}, {3}, false); }, "kernel shape");
}

TEST(WindowGeometry, TransposeOutputFromPadsAndOutputPadding) {
  EXPECT_EQ(window::transpose_full_output(3, 3, 2, 0), 7);
  EXPECT_EQ(window::transpose_full_output(3, 3, 2, 1), 8);
  EXPECT_EQ(window::transpose_full_output(3, window::dilated_extent(3, 2), 1, 0), 7);
  // ONNX's convtranspose_pads: X 3x3, W 3x3, strides (3, 2), pads (1, 2, 1, 2): Y 7x3.
  Node n = window_node("ConvTranspose", {{"strides", ints_attr({3, 2})}, {"pads", ints_attr({1, 2, 1, 2})}});
  WindowGeometry g = resolve_transpose_window(n, {3, 3}, {3, 3});
  EXPECT_EQ(g.out, Shape({7, 3}));
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({1, 2}));
  // ONNX's convtranspose_pad: output_padding (1, 1) lengthens the end: Y 10x8.
  n = window_node("ConvTranspose", {{"strides", ints_attr({3, 2})}, {"output_padding", ints_attr({1, 1})}});
  g = resolve_transpose_window(n, {3, 3}, {3, 3});
  EXPECT_EQ(g.out, Shape({10, 8}));
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({0, 0}));
  EXPECT_EQ(g.pads_end, std::vector<int64_t>({0, 0}));
}

TEST(WindowGeometry, TransposeOutputShapeWinsOverPads) {
  // ONNX's convtranspose_output_shape: full lengths 9 and 7 for output_shape (10, 8): a
  // total of -1 each, split by floor division so the end grows (pads_end -1).
  for (const std::vector<int64_t>& output_shape : {std::vector<int64_t>{10, 8}, std::vector<int64_t>{1, 2, 10, 8}}) {
    const Node n = window_node(
        "ConvTranspose",
        {{"strides", ints_attr({3, 2})}, {"pads", ints_attr({1, 2, 1, 2})}, {"output_shape", ints_attr(output_shape)}});
    const WindowGeometry g = resolve_transpose_window(n, {3, 3}, {3, 3});
    EXPECT_EQ(g.out, Shape({10, 8}));
    EXPECT_EQ(g.pads_begin, std::vector<int64_t>({0, 0}));
    EXPECT_EQ(g.pads_end, std::vector<int64_t>({-1, -1}));
  }
  const window::Axis upper = window::transpose_axis_for_output(9, 10, true);
  EXPECT_EQ(upper.pad_begin, -1);
  EXPECT_EQ(upper.pad_end, 0);
  const window::Axis lower = window::transpose_axis_for_output(8, 5, false);
  EXPECT_EQ(lower.pad_begin, 2);
  EXPECT_EQ(lower.pad_end, 1);
}

TEST(WindowGeometry, TransposeSameAndValid) {
  // SAME: output in * stride = 6 of a full 7, the one pad at the end (UPPER) or start (LOWER).
  WindowGeometry g = resolve_transpose_window(
      window_node("ConvTranspose", {{"strides", ints_attr({2})}, {"auto_pad", string_attr("SAME_UPPER")}}), {3}, {3});
  EXPECT_EQ(g.out, Shape({6}));
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({0}));
  EXPECT_EQ(g.pads_end, std::vector<int64_t>({1}));
  g = resolve_transpose_window(
      window_node("ConvTranspose", {{"strides", ints_attr({2})}, {"auto_pad", string_attr("SAME_LOWER")}}), {3}, {3});
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({1}));
  EXPECT_EQ(g.pads_end, std::vector<int64_t>({0}));
  // VALID ignores pads.
  g = resolve_transpose_window(
      window_node("ConvTranspose",
                  {{"strides", ints_attr({2})}, {"pads", ints_attr({1, 1})}, {"auto_pad", string_attr("VALID")}}),
      {3}, {3});
  EXPECT_EQ(g.out, Shape({7}));
  EXPECT_EQ(g.pads_begin, std::vector<int64_t>({0}));
  expect_error(
      [] {
        resolve_transpose_window(window_node("ConvTranspose", {{"output_shape", ints_attr({4, 4, 4})}}), {3, 3},
                                 {3, 3});
      },
      "attribute 'output_shape' has 3 values, expected 2");
  expect_error(
      [] {
        resolve_transpose_window(window_node("ConvTranspose", {{"pads", ints_attr({2, 2})}}), {1}, {3});
      },
      "is empty");
}

TEST(WindowGeometry, GlobalUnpoolAndLrnWindows) {
  const WindowGeometry g = global_window({3, 4});
  EXPECT_EQ(g.kernel, Shape({3, 4}));
  EXPECT_EQ(g.out, Shape({1, 1}));
  EXPECT_EQ(g.pads_end, std::vector<int64_t>({0, 0}));

  EXPECT_EQ(window::unpooled_length(2, 2, 2, 0, 0), 4);
  EXPECT_EQ(window::unpooled_length(2, 3, 2, 1, 1), 3);
  const Node unpool = window_node("MaxUnpool", {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  EXPECT_EQ(unpooled_shape(unpool, {1, 3, 2, 2}), Shape({1, 3, 4, 4}));
  expect_error([] { unpooled_shape(window_node("MaxUnpool", {}), {1, 1, 2, 2}); }, "kernel_shape");

  // LRN: floor((size - 1) / 2) channels before, ceil after.
  EXPECT_EQ(window::lrn_channel_window(5).before, 2);
  EXPECT_EQ(window::lrn_channel_window(5).after, 2);
  EXPECT_EQ(window::lrn_channel_window(4).before, 1);
  EXPECT_EQ(window::lrn_channel_window(4).after, 2);
  EXPECT_EQ(window::lrn_channel_window(1).after, 0);
}

// Resize parameters of one axis of length `in` resized by `scale` to `out`.
resize::Params one_axis(resize::CoordinateMode mode, double scale, int64_t out, bool sizes_given = false) {
  resize::Params p;
  p.coordinates = mode;
  p.scales = {scale};
  p.out_shape = {out};
  p.sizes_given = sizes_given;
  p.roi = {0.0, 1.0};
  return p;
}

TEST(WindowGeometry, ResizeCoordinateTransforms) {
  using resize::CoordinateMode;
  using resize::source_coordinate;
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::HalfPixel, 2, 8), 0, 0, 4), -0.25);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::HalfPixel, 2, 8), 0, 3, 4), 1.25);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::Asymmetric, 2, 8), 0, 3, 4), 1.5);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::TfHalfPixelForNn, 2, 8), 0, 3, 4), 1.75);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::AlignCorners, 2, 8), 0, 3, 4), 9.0 / 7.0);
  // pytorch_half_pixel maps a one-long output to 0, else as half_pixel.
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::PytorchHalfPixel, 0.25, 1), 0, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::PytorchHalfPixel, 2, 8), 0, 0, 4), -0.25);
  // half_pixel_symmetric equals half_pixel for a whole scale, and re-centres a rounded one:
  // in 4, scale 1.7, out 6: 2 * (1 - 6 / 6.8) + 0.5 / 1.7 - 0.5.
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::HalfPixelSymmetric, 2, 8), 0, 3, 4), 1.25);
  EXPECT_NEAR(source_coordinate(one_axis(CoordinateMode::HalfPixelSymmetric, 1.7, 6), 0, 0, 4), 0.0294117647, 1e-9);
}

TEST(WindowGeometry, ResizeAlignCornersAndCropLengths) {
  using resize::CoordinateMode;
  using resize::source_coordinate;
  // align_corners divides by the unrounded length 6.8 for scales, by 6 for sizes.
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::AlignCorners, 1.7, 6), 0, 5, 4), 15.0 / 5.8);
  EXPECT_DOUBLE_EQ(source_coordinate(one_axis(CoordinateMode::AlignCorners, 1.5, 6, true), 0, 5, 4), 3.0);
  // tf_crop_and_resize: roi 0.25 .. 0.75 of 5 inputs onto 3 outputs reads 1, 2, 3.
  resize::Params crop = one_axis(CoordinateMode::TfCropAndResize, 0.6, 3);
  crop.roi = {0.25, 0.75};
  for (int64_t x = 0; x < 3; ++x) EXPECT_DOUBLE_EQ(source_coordinate(crop, 0, x, 5), double(x + 1));
  crop.out_shape = {1};  // one output reads the roi's centre
  EXPECT_DOUBLE_EQ(source_coordinate(crop, 0, 0, 5), 2.0);
}

TEST(WindowGeometry, ResizeKeepAspectRatio) {
  // sizes (4, 6) of a 2x2 input: not_larger keeps scale 2, not_smaller takes 3.
  EXPECT_DOUBLE_EQ(resize::aspect_ratio_scale(true, {4, 6}, {2, 2}), 2.0);
  EXPECT_DOUBLE_EQ(resize::aspect_ratio_scale(false, {4, 6}, {2, 2}), 3.0);
  EXPECT_EQ(resize::aspect_ratio_length(3, 0.5), 2);  // 1.5 rounds half up
  Node n =
      window_node("Resize", {{"axes", ints_attr({2, 3})}, {"keep_aspect_ratio_policy", string_attr("not_larger")}});
  resize::Inputs inputs;
  inputs.sizes = Shape{4, 6};
  const resize::Params p = resize::params(n, 18, {1, 1, 2, 2}, inputs);
  EXPECT_EQ(p.out_shape, Shape({1, 1, 4, 4}));
  EXPECT_DOUBLE_EQ(p.scales[3], 2.0);
}

}  // namespace
}  // namespace vkg
