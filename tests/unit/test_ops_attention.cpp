// Reference kernels of RotaryEmbedding, Attention and GridSample against values worked by
// hand, and the Attention semantics where vkgraphy departs from ONNX 1.18's reference (3-D
// inputs split into heads with a transpose; query heads sharing K/V heads in consecutive
// groups): tests/node/known_exceptions_opset23.txt lists the node tests this changes.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

namespace vkg {
namespace {

using namespace test;

// Elements of a [b, s, h * d] tensor rearranged as [b, h, s, d].
Tensor heads_first(const Tensor& t, int64_t heads) {
  const int64_t b = t.dim(0), s = t.dim(1), d = t.dim(2) / heads;
  Tensor out(DType::Float32, {b, heads, s, d});
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t k = 0; k < d; ++k)
          out.data<float>()[((i * heads + h) * s + j) * d + k] = t.data<float>()[((i * s + j) * heads + h) * d + k];
  return out;
}

TEST(RotaryEmbedding, RotatesHalvesAndInterleavedPairs) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor cos = Tensor::from_vector<float>({2, 2}, {1, 1, 0.5f, 0.25f});
  const Tensor sin = Tensor::from_vector<float>({2, 2}, {0, 0, 0.75f, 0.5f});
  const Tensor pos = Tensor::from_vector<int64_t>({1, 1}, {1});
  const Node split = make_named_node("rope", "RotaryEmbedding", 4);
  // Pairs (0, 2) and (1, 3) with cos (0.5, 0.25), sin (0.75, 0.5).
  expect_all_near(run1(split, 23, {&x, &cos, &sin, &pos}), {0.5 - 2.25, 0.5 - 2, 0.75 + 1.5, 1 + 1});
  const Node interleaved = make_named_node("rope", "RotaryEmbedding", 4, 1, {{"interleaved", int_attr(1)}});
  // Pairs (0, 1) and (2, 3).
  expect_all_near(run1(interleaved, 23, {&x, &cos, &sin, &pos}), {0.5 - 1.5, 0.75 + 1, 0.75 - 2, 1.5 + 1});
}

TEST(Attention, EqualScoresAverageValuesAndCausalRowsSeeTheirPrefix) {
  const Tensor q = Tensor::from_vector<float>({1, 1, 2, 2}, {0, 0, 0, 0});
  const Tensor k = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor v = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_all_near(run1(make_named_node("attn", "Attention", 3), 23, {&q, &k, &v}), {2, 3, 2, 3});
  const Node causal = make_named_node("attn", "Attention", 3, 1, {{"is_causal", int_attr(1)}});
  expect_all_near(run1(causal, 23, {&q, &k, &v}), {1, 2, 2, 3});
  // A bool mask hiding key 0 from query 1.
  const Tensor mask = Tensor::from_vector<bool>({2, 2}, {true, true, false, true});
  expect_all_near(run1(make_named_node("attn", "Attention", 4), 23, {&q, &k, &v, &mask}), {2, 3, 3, 4});
}

TEST(Attention, ThreeDInputsAreSplitIntoHeadsWithATranspose) {
  const Tensor q = random_floats({2, 3, 8}, 1), k = random_floats({2, 4, 8}, 2), v = random_floats({2, 4, 6}, 3);
  const Node three_d =
      make_named_node("attn", "Attention", 3, 1, {{"q_num_heads", int_attr(2)}, {"kv_num_heads", int_attr(2)}});
  const Tensor y3 = run1(three_d, 23, {&q, &k, &v});
  const Tensor q4 = heads_first(q, 2), k4 = heads_first(k, 2), v4 = heads_first(v, 2);
  const Tensor y4 = run1(make_named_node("attn", "Attention", 3), 23, {&q4, &k4, &v4});
  ASSERT_EQ(y3.shape(), Shape({2, 3, 6}));
  const Tensor y3_as_4 = heads_first(y3, 2);
  expect_all_near(y4, std::vector<double>(y3_as_4.data<float>(), y3_as_4.data<float>() + y3_as_4.size()));
}

TEST(Attention, QueryHeadsShareKeyValueHeadsInConsecutiveGroups) {
  // 4 query heads over 2 K/V heads: heads 0 and 1 read K/V head 0, heads 2 and 3 head 1.
  const Tensor q = random_floats({1, 4, 3, 4}, 4), k = random_floats({1, 2, 5, 4}, 5),
               v = random_floats({1, 2, 5, 4}, 6);
  Tensor k_rep(DType::Float32, {1, 4, 5, 4}), v_rep(DType::Float32, {1, 4, 5, 4});
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 20; ++i) {
      k_rep.data<float>()[h * 20 + i] = k.data<float>()[(h / 2) * 20 + i];
      v_rep.data<float>()[h * 20 + i] = v.data<float>()[(h / 2) * 20 + i];
    }
  const Node node = make_named_node("attn", "Attention", 3);
  const Tensor grouped = run1(node, 23, {&q, &k, &v}), repeated = run1(node, 23, {&q, &k_rep, &v_rep});
  expect_all_near(grouped, std::vector<double>(repeated.data<float>(), repeated.data<float>() + repeated.size()));
}

TEST(Attention, PresentCachesAppendThisStepAndQkOutputModes) {
  const Tensor q = Tensor::from_vector<float>({1, 1, 1, 1}, {1});
  const Tensor k = Tensor::from_vector<float>({1, 1, 1, 1}, {2});
  const Tensor v = Tensor::from_vector<float>({1, 1, 1, 1}, {5});
  const Tensor past_k = Tensor::from_vector<float>({1, 1, 1, 1}, {0});
  const Tensor past_v = Tensor::from_vector<float>({1, 1, 1, 1}, {1});
  for (int64_t mode : {0, 3}) {
    const Node node = make_named_node("attn", "Attention", 6, 4, {{"qk_matmul_output_mode", int_attr(mode)}});
    const std::vector<Tensor> out = run(node, 23, {&q, &k, &v, nullptr, &past_k, &past_v});
    // Scores (scale 1): 0 and 2; softmax weights 1 / (1 + e^2) and e^2 / (1 + e^2).
    const double w1 = std::exp(2.0) / (1 + std::exp(2.0));
    expect_all_near(out[0], {(1 - w1) * 1 + w1 * 5});
    expect_all_near(out[1], {0, 2});
    expect_all_near(out[2], {1, 5});
    expect_all_near(out[3], mode == 0 ? std::vector<double>{0, 2} : std::vector<double>{1 - w1, w1});
  }
}

TEST(GridSample, CornersCentresAndPadding) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // Grid points (x, y): the centre, the top-left corner, and a point left of the image.
  const Tensor grid = Tensor::from_vector<float>({1, 1, 3, 2}, {0, 0, -1, -1, -2, 0});
  const auto sample = [&](const std::string& mode, const std::string& padding, int64_t align) {
    const Node node = make_named_node(
        "gs", "GridSample", 2, 1,
        {{"mode", string_attr(mode)}, {"padding_mode", string_attr(padding)}, {"align_corners", int_attr(align)}});
    return run1(node, 20, {&x, &grid});
  };
  // align_corners: -1 and 1 are the corner pixels' centres, so x = -2 is half a pixel left
  // of column 0 (taps -1 and 0, the first reading zero).
  expect_all_near(sample("linear", "zeros", 1), {2.5, 1, 0.5 * (0.5 * 1 + 0.5 * 3)});
  expect_all_near(sample("linear", "border", 1), {2.5, 1, 2});
  // Without: -1 is the image's outer edge, half a pixel outside the corner pixel's centre.
  expect_all_near(sample("linear", "zeros", 0), {2.5, 0.25, 0});
  // Nearest rounds half to even (0.5 -> 0, -0.5 -> 0); x = -1.5 rounds to -2, which
  // reflects about -0.5 and 1.5 to 1.
  expect_all_near(sample("nearest", "reflection", 0), {1, 1, 2});
}

}  // namespace
}  // namespace vkg
