// Reference kernels of RNN, GRU and LSTM, against step-by-step recomputations in the
// test: the gate order and biases, reverse and bidirectional runs, sequence lengths,
// layout 1, named activations, and the errors of bad attributes.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {
namespace {

using namespace test;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Attribute strings_attr(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}

// One unit, one input feature: every matrix is a scalar per gate.
TEST(Recurrent, RnnStepsAndBias) {
  const Tensor x = Tensor::from_vector<float>({2, 1, 1}, {0.5f, -1.0f});
  const Tensor w = Tensor::from_vector<float>({1, 1, 1}, {2.0f});
  const Tensor r = Tensor::from_vector<float>({1, 1, 1}, {0.5f});
  const Tensor b = Tensor::from_vector<float>({1, 2}, {0.1f, 0.2f});
  const auto out = run(make_named_node("rnn", "RNN", 4, 2, {{"hidden_size", int_attr(1)}}), 14, {&x, &w, &r, &b});
  const double h1 = std::tanh(2 * 0.5 + 0.3), h2 = std::tanh(2 * -1.0 + 0.5 * h1 + 0.3);
  EXPECT_NEAR(out[0].get_as_double(0), h1, 1e-6);
  EXPECT_NEAR(out[0].get_as_double(1), h2, 1e-6);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_NEAR(out[1].get_as_double(0), h2, 1e-6);
}

TEST(Recurrent, GruGateOrderAndLinearBeforeReset) {
  // Gates z, r, h with weights 1, 2, 3 and recurrences 0.5, 0.25, 0.75; h0 = 0.4.
  const Tensor x = Tensor::from_vector<float>({1, 1, 1}, {0.3f});
  const Tensor w = Tensor::from_vector<float>({1, 3, 1}, {1.0f, 2.0f, 3.0f});
  const Tensor r = Tensor::from_vector<float>({1, 3, 1}, {0.5f, 0.25f, 0.75f});
  const Tensor b = Tensor::from_vector<float>({1, 6}, {0, 0, 0, 0, 0, 0.1f});  // Rb_h = 0.1
  const Tensor h0 = Tensor::from_vector<float>({1, 1, 1}, {0.4f});
  for (int lbr : {0, 1}) {
    const Node node =
        make_named_node("gru", "GRU", 6, 2, {{"hidden_size", int_attr(1)}, {"linear_before_reset", int_attr(lbr)}});
    const auto out = run(node, 14, {&x, &w, &r, &b, nullptr, &h0});
    const double z = sigmoid(0.3 + 0.5 * 0.4), rg = sigmoid(0.6 + 0.25 * 0.4);
    const double pre = lbr ? 0.9 + rg * (0.75 * 0.4 + 0.1) : 0.9 + 0.75 * (rg * 0.4) + 0.1;
    EXPECT_NEAR(out[1].get_as_double(0), (1 - z) * std::tanh(pre) + z * 0.4, 1e-6) << "linear_before_reset " << lbr;
  }
}

TEST(Recurrent, LstmPeepholesAndCellState) {
  // Gates i, o, f, c; P = [Pi, Po, Pf].
  const Tensor x = Tensor::from_vector<float>({1, 1, 1}, {1.0f});
  const Tensor w = Tensor::from_vector<float>({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f});
  const Tensor r = Tensor::from_vector<float>({1, 4, 1}, {0, 0, 0, 0});
  const Tensor h0 = Tensor::from_vector<float>({1, 1, 1}, {0.0f});
  const Tensor c0 = Tensor::from_vector<float>({1, 1, 1}, {0.5f});
  const Tensor p = Tensor::from_vector<float>({1, 3}, {1.0f, 2.0f, 3.0f});
  const auto out = run(make_named_node("lstm", "LSTM", 8, 3, {{"hidden_size", int_attr(1)}}), 14,
                       {&x, &w, &r, nullptr, nullptr, &h0, &c0, &p});
  const double i = sigmoid(0.1 + 1.0 * 0.5), f = sigmoid(0.3 + 3.0 * 0.5);
  const double c = f * 0.5 + i * std::tanh(0.4);
  const double o = sigmoid(0.2 + 2.0 * c);
  EXPECT_NEAR(out[2].get_as_double(0), c, 1e-6);
  EXPECT_NEAR(out[1].get_as_double(0), o * std::tanh(c), 1e-6);
}

TEST(Recurrent, ReverseIsForwardOnTheReversedSequenceAndLengthsPadWithZeros) {
  const Tensor x = random_floats({4, 2, 3}, 7);
  const Tensor w = random_floats({2, 4 * 5, 3}, 8, -0.5f, 0.5f), r = random_floats({2, 4 * 5, 5}, 9, -0.5f, 0.5f);
  const Tensor lens = Tensor::from_vector<int32_t>({2}, {4, 2});
  const Node bi = make_named_node("lstm", "LSTM", 5, 3,
                                  {{"hidden_size", int_attr(5)}, {"direction", string_attr("bidirectional")}});
  const auto both = run(bi, 14, {&x, &w, &r, nullptr, &lens});
  // Direction 1, batch 1 (length 2): forward over [x1, x0] with direction 1's weights.
  Tensor x_rev({DType::Float32}, {2, 1, 3});
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t i = 0; i < 3; ++i) x_rev.set_from_double(t * 3 + i, x.get_as_double(((1 - t) * 2 + 1) * 3 + i));
  const Tensor w1 =
      Tensor::from_vector<float>({1, 20, 3}, std::vector<float>(w.data<float>() + 60, w.data<float>() + 120));
  const Tensor r1 =
      Tensor::from_vector<float>({1, 20, 5}, std::vector<float>(r.data<float>() + 100, r.data<float>() + 200));
  const auto fwd = run(make_named_node("lstm", "LSTM", 3, 3, {{"hidden_size", int_attr(5)}}), 14, {&x_rev, &w1, &r1});
  for (int64_t k = 0; k < 5; ++k) {
    // Y_h [dirs, batch, hidden] at (1, 1, k); Y [seq, dirs, batch, hidden] at (0, 1, 1, k) is the last step.
    EXPECT_NEAR(both[1].get_as_double((1 * 2 + 1) * 5 + k), fwd[1].get_as_double(k), 1e-6);
    EXPECT_NEAR(both[0].get_as_double(((0 * 2 + 1) * 2 + 1) * 5 + k), fwd[1].get_as_double(k), 1e-6);
    // Steps 2 and 3 of batch 1 are past its length: zeros in both directions.
    for (int64_t t = 2; t < 4; ++t)
      for (int64_t d = 0; d < 2; ++d) EXPECT_EQ(both[0].get_as_double(((t * 2 + d) * 2 + 1) * 5 + k), 0.0);
  }
}

TEST(Recurrent, LayoutOneTransposesBatchAndSequence) {
  const Tensor x = random_floats({3, 2, 4}, 11);  // [seq, batch, input]
  Tensor xb({DType::Float32}, {2, 3, 4});         // [batch, seq, input]
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 4; ++i) xb.set_from_double((n * 3 + t) * 4 + i, x.get_as_double((t * 2 + n) * 4 + i));
  const Tensor w = random_floats({1, 3 * 6, 4}, 12, -0.5f, 0.5f), r = random_floats({1, 3 * 6, 6}, 13, -0.5f, 0.5f);
  const auto a = run(make_named_node("gru", "GRU", 3, 2, {{"hidden_size", int_attr(6)}}), 14, {&x, &w, &r});
  const auto b = run(make_named_node("gru", "GRU", 3, 2, {{"hidden_size", int_attr(6)}, {"layout", int_attr(1)}}), 14,
                     {&xb, &w, &r});
  EXPECT_EQ(b[0].shape(), (Shape{2, 3, 1, 6}));
  EXPECT_EQ(b[1].shape(), (Shape{2, 1, 6}));
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t k = 0; k < 6; ++k)
        EXPECT_EQ(a[0].get_as_double((t * 2 + n) * 6 + k), b[0].get_as_double((n * 3 + t) * 6 + k));
}

TEST(Recurrent, NamedActivationsTakeAlphaAndBetaInOrder) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 1}, {2.0f});
  const Tensor w = Tensor::from_vector<float>({1, 1, 1}, {1.0f});
  const Tensor r = Tensor::from_vector<float>({1, 1, 1}, {0.0f});
  const Node affine = make_named_node("rnn", "RNN", 3, 2,
                                      {{"hidden_size", int_attr(1)},
                                       {"activations", strings_attr({"Affine"})},
                                       {"activation_alpha", floats_attr({3.0f})},
                                       {"activation_beta", floats_attr({-1.0f})}});
  EXPECT_NEAR(run(affine, 14, {&x, &w, &r})[1].get_as_double(0), 5.0, 1e-6);
  const Node unknown =
      make_named_node("rnn", "RNN", 3, 2, {{"hidden_size", int_attr(1)}, {"activations", strings_attr({"Swish"})}});
  EXPECT_THROW(run(unknown, 14, {&x, &w, &r}), Error);
  const Node two = make_named_node("rnn", "RNN", 3, 2,
                                   {{"hidden_size", int_attr(1)}, {"activations", strings_attr({"Tanh", "Tanh"})}});
  EXPECT_THROW(run(two, 14, {&x, &w, &r}), Error);
  const Node direction =
      make_named_node("rnn", "RNN", 3, 2, {{"hidden_size", int_attr(1)}, {"direction", string_attr("sideways")}});
  EXPECT_THROW(run(direction, 14, {&x, &w, &r}), Error);
}

}  // namespace
}  // namespace vkg
