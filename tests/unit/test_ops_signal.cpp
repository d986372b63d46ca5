// Reference kernels of the signal ops (window functions, MelWeightMatrix, DFT, STFT)
// against values worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace vkg {
namespace {

using namespace test;

TEST(SignalOps, WindowsArePeriodicByDefaultAndSymmetricOnRequest) {
  const Tensor four = Tensor::scalar<int64_t>(4), five = Tensor::scalar<int32_t>(5);
  expect_all_near(run1(make_named_node("w", "HannWindow", 1), 17, {&four}), {0, 0.5, 1, 0.5});
  const Node symmetric = make_named_node("w", "HannWindow", 1, 1, {{"periodic", int_attr(0)}});
  expect_all_near(run1(symmetric, 17, {&five}), {0, 0.5, 1, 0.5, 0});
  const double a = 25.0 / 46.0, b = 21.0 / 46.0;
  expect_all_near(run1(make_named_node("w", "HammingWindow", 1), 17, {&four}), {a - b, a, a + b, a});
  expect_all_near(run1(make_named_node("w", "BlackmanWindow", 1), 17, {&four}), {0, 0.34, 1, 0.34});
  const Node doubles = make_named_node("w", "HannWindow", 1, 1, {{"output_datatype", int_attr(11)}});
  EXPECT_EQ(run1(doubles, 17, {&four}).dtype(), DType::Float64);
  const Tensor negative = Tensor::scalar<int64_t>(-1);
  EXPECT_THROW(run1(make_named_node("w", "HannWindow", 1), 17, {&negative}), Error);
}

TEST(SignalOps, MelWeightMatrixHasTriangularFilters) {
  const Tensor bins = Tensor::scalar<int64_t>(2), length = Tensor::scalar<int64_t>(16),
               rate = Tensor::scalar<int64_t>(8000), lower = Tensor::scalar<float>(0),
               upper = Tensor::scalar<float>(4000);
  const Tensor w = run1(make_named_node("mel", "MelWeightMatrix", 5), 17, {&bins, &length, &rate, &lower, &upper});
  ASSERT_EQ(w.shape(), (Shape{9, 2}));
  // Every filter peaks at 1 on its center bin and is 0 outside its edges.
  for (int64_t m = 0; m < 2; ++m) {
    double peak = 0;
    for (int64_t k = 0; k < 9; ++k) peak = std::max(peak, w.get_as_double(k * 2 + m));
    EXPECT_NEAR(peak, 1.0, 1e-6) << "filter " << m;
  }
  EXPECT_EQ(w.get_as_double(8 * 2 + 0), 0.0);
  const Tensor bad_rate = Tensor::scalar<int64_t>(0);
  EXPECT_THROW(run1(make_named_node("mel", "MelWeightMatrix", 5), 17, {&bins, &length, &bad_rate, &lower, &upper}),
               Error);
}

TEST(SignalOps, DftOfRealAndComplexSignalsAndItsInverse) {
  const Tensor x = Tensor::from_vector<float>({1, 4, 1}, {1, 2, 3, 4});
  // X[k] = sum x[j] e^(-2 pi i jk / 4): 10, -2 + 2i, -2, -2 - 2i.
  const Tensor y = run1(make_named_node("dft", "DFT", 1), 17, {&x});
  expect_all_near(y, {10, 0, -2, 2, -2, 0, -2, -2});
  const Node onesided = make_named_node("dft", "DFT", 1, 1, {{"onesided", int_attr(1)}});
  expect_all_near(run1(onesided, 17, {&x}), {10, 0, -2, 2, -2, 0});
  const Node inverse = make_named_node("dft", "DFT", 1, 1, {{"inverse", int_attr(1)}});
  expect_all_near(run1(inverse, 17, {&y}), {1, 0, 2, 0, 3, 0, 4, 0});
  // DFT-20: the axis is an input; dft_length 2 truncates, 6 pads with zeros.
  const Tensor xt = Tensor::from_vector<float>({4, 1}, {1, 2, 3, 4});
  const Tensor axis = Tensor::scalar<int64_t>(0), two = Tensor::scalar<int64_t>(2);
  expect_all_near(run1(make_named_node("dft", "DFT", 3), 20, {&xt, &two, &axis}), {3, 0, -1, 0});
  const Tensor bad_axis = Tensor::scalar<int64_t>(1);
  EXPECT_THROW(run1(make_named_node("dft", "DFT", 3), 20, {&xt, nullptr, &bad_axis}), Error);
  const Tensor three_wide = Tensor::from_vector<float>({1, 4, 3}, std::vector<float>(12, 1.0f));
  EXPECT_THROW(run1(make_named_node("dft", "DFT", 1), 17, {&three_wide}), Error);
}

TEST(SignalOps, StftTransformsWindowedFrames) {
  const Tensor x = Tensor::from_vector<float>({1, 6, 1}, {1, 2, 3, 4, 5, 6});
  const Tensor step = Tensor::scalar<int64_t>(2), window = Tensor::from_vector<float>({2}, {1, -1});
  // Frames [1,2], [3,4], [5,6] times [1,-1]: DC -1 each, Nyquist 3, 7, 11 (onesided: 2 bins).
  const Tensor y = run1(make_named_node("stft", "STFT", 3), 17, {&x, &step, &window});
  ASSERT_EQ(y.shape(), (Shape{1, 3, 2, 2}));
  expect_all_near(y, {-1, 0, 3, 0, -1, 0, 7, 0, -1, 0, 11, 0});
  const Tensor zero = Tensor::scalar<int64_t>(0);
  EXPECT_THROW(run1(make_named_node("stft", "STFT", 3), 17, {&x, &zero, &window}), Error);
}

}  // namespace
}  // namespace vkg
