// Conformance cases of the signal family (runtime/tactics/signal.cpp): DFT-17 (axis
// attribute) and DFT-20 (axis input), forward and inverse, real and complex input,
// onesided, dft_length padding and truncating, inner axes after the transformed one;
// STFT with and without a window, a window shorter than the frame, complex signals and
// two-sided output; power-of-two lengths (the FFTs) and others. dft_length, axis, frame_step and frame_length are build-time
// constants; sizes reach many workgroups.
#include <cmath>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

Tensor i64(int64_t v) { return Tensor::scalar<int64_t>(v); }

Tensor hann(int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[size_t(i)] = float(0.5 - 0.5 * std::cos(2 * 3.14159265358979 * double(i) / double(n)));
  return Tensor::from_vector<float>({n}, w);
}

}  // namespace

VKG_VK_CASES(signal) {
  std::vector<VkCase> cases;
  cases.push_back(make_case("DFT-17 real [2,16,1] axis 1", "DFT", {random_floats({2, 16, 1}, 1)}));
  cases.push_back(make_case("DFT-17 complex inverse [3,10,2]", "DFT", {random_floats({3, 10, 2}, 2)},
                            {{"inverse", int_attr(1)}}));
  cases.push_back(make_case("DFT-17 onesided real [2,12,3,1] inner 3", "DFT", {random_floats({2, 12, 3, 1}, 3)},
                            {{"onesided", int_attr(1)}}));
  cases.push_back(make_case("DFT-17 complex axis 2 dft_length 7 [2,3,5,2]", "DFT",
                            {random_floats({2, 3, 5, 2}, 4), i64(7)}, {{"axis", int_attr(2)}}, 1, {1}));
  cases.push_back(at_opset(make_case("DFT-20 default axis [2,3,9,1]", "DFT", {random_floats({2, 3, 9, 1}, 5)}), 20));
  cases.push_back(at_opset(make_case("DFT-20 axis 1 dft_length 12 complex [1,9,4,2]", "DFT",
                                     {random_floats({1, 9, 4, 2}, 6), i64(12), i64(1)}, {}, 1, {1, 2}),
                           20));
  cases.push_back(at_opset(make_case("DFT-20 axis -3 dft_length 5 onesided [2,8,3,1]", "DFT",
                                     {random_floats({2, 8, 3, 1}, 7), i64(5), i64(-3)}, {{"onesided", int_attr(1)}}, 1,
                                     {1, 2}),
                           20));
  cases.push_back(at_opset(make_case("DFT-20 inverse axis 0 [6,5,2]", "DFT",
                                     {random_floats({6, 5, 2}, 8), std::nullopt, i64(0)}, {{"inverse", int_attr(1)}}, 1,
                                     {2}),
                           20));
  VkCase big = make_case("DFT-17 real [8,256,1] many workgroups", "DFT", {random_floats({8, 256, 1}, 9)});
  big.atol = big.atol_f16acc32 = 1e-3;
  cases.push_back(big);
  cases.push_back(make_case("DFT-17 complex inverse [2,32,2]", "DFT", {random_floats({2, 32, 2}, 14)},
                            {{"inverse", int_attr(1)}}));
  cases.push_back(at_opset(make_case("DFT-20 axis 1 dft_length 4 inverse onesided [1,10,3,2]", "DFT",
                                     {random_floats({1, 10, 3, 2}, 15), i64(4), i64(1)},
                                     {{"inverse", int_attr(1)}, {"onesided", int_attr(1)}}, 1, {1, 2}),
                           20));
  VkCase long_fft = make_case("DFT-17 complex onesided [3,1024,2]", "DFT", {random_floats({3, 1024, 2}, 16)},
                              {{"onesided", int_attr(1)}});
  long_fft.atol = long_fft.atol_f16acc32 = 2e-3;
  cases.push_back(long_fft);
  cases.push_back(make_case("STFT [2,64,1] step 8 hann 16", "STFT", {random_floats({2, 64, 1}, 10), i64(8), hann(16)},
                            {}, 1, {1}));
  cases.push_back(make_case("STFT complex [1,40,2] step 5 frame_length 10 two-sided", "STFT",
                            {random_floats({1, 40, 2}, 11), i64(5), std::nullopt, i64(10)},
                            {{"onesided", int_attr(0)}}, 1, {1, 3}));
  cases.push_back(make_case("STFT [3,50,1] step 7 window 12 frame_length 16", "STFT",
                            {random_floats({3, 50, 1}, 12), i64(7), random_floats({12}, 13, 0.0f, 1.0f), i64(16)}, {},
                            1, {1, 3}));
  return cases;
}

}  // namespace vkg::test
