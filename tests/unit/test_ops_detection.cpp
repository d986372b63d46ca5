// Reference kernels of NonMaxSuppression and RoiAlign against values worked by hand.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace vkg {
namespace {

using namespace test;

TEST(DetectionOps, NonMaxSuppressionKeepsTheBestOfOverlappingBoxes) {
  // Box 1 overlaps box 0 (IoU 0.9 / 1.1) and scores higher; box 2 is apart.
  const Tensor boxes = Tensor::from_vector<float>({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3});
  const Tensor scores = Tensor::from_vector<float>({1, 1, 3}, {0.9f, 0.95f, 0.5f});
  const Tensor ten = Tensor::scalar<int64_t>(10), one = Tensor::scalar<int64_t>(1);
  const Tensor iou = Tensor::scalar<float>(0.5f), score = Tensor::scalar<float>(0.6f);
  const Node nms = make_named_node("nms", "NonMaxSuppression", 5);
  Tensor y = run1(nms, 11, {&boxes, &scores, &ten, &iou, nullptr});
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  EXPECT_EQ(values<int64_t>(run1(nms, 11, {&boxes, &scores, &one, &iou, nullptr})), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(values<int64_t>(run1(nms, 11, {&boxes, &scores, &ten, &iou, &score})), (std::vector<int64_t>{0, 0, 1}));
  // Without max_output_boxes_per_class nothing is selected.
  EXPECT_EQ(run1(nms, 11, {&boxes, &scores}).shape(), (Shape{0, 3}));
  const Tensor bad_scores = Tensor::from_vector<float>({1, 1, 2}, {0.9f, 0.95f});
  EXPECT_THROW(run1(nms, 11, {&boxes, &bad_scores, &ten}), Error);
}

TEST(DetectionOps, RoiAlignSamplesBilinearlyInEitherCoordinateMode) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor roi = Tensor::from_vector<float>({1, 4}, {0, 0, 1, 1});
  const Tensor batch = Tensor::from_vector<int64_t>({1}, {0});
  const Attrs one_sample = {{"sampling_ratio", int_attr(1)}};
  // Opset 10 (output_half_pixel): the sample sits at (0.5, 0.5), between all four.
  EXPECT_FLOAT_EQ(run1(make_named_node("roi", "RoiAlign", 3, 1, one_sample), 10, {&x, &roi, &batch}).data<float>()[0],
                  2.5f);
  // Opset 16 (half_pixel): the ROI shifts by half a pixel, the sample onto X[0, 0].
  EXPECT_FLOAT_EQ(run1(make_named_node("roi", "RoiAlign", 3, 1, one_sample), 16, {&x, &roi, &batch}).data<float>()[0],
                  1.0f);
  // Max mode keeps the largest weighted corner: 0.25 * 4.
  Attrs max_mode = one_sample;
  max_mode["mode"] = string_attr("max");
  max_mode["coordinate_transformation_mode"] = string_attr("output_half_pixel");
  EXPECT_FLOAT_EQ(run1(make_named_node("roi", "RoiAlign", 3, 1, max_mode), 16, {&x, &roi, &batch}).data<float>()[0],
                  1.0f);
  const Tensor bad_batch = Tensor::from_vector<int64_t>({1}, {3});
  EXPECT_THROW(run1(make_named_node("roi", "RoiAlign", 3, 1, one_sample), 16, {&x, &roi, &bad_batch}), Error);
}

}  // namespace
}  // namespace vkg
