// Reference kernels of the linalg family: the shared GEMM, Conv, ConvTranspose,
// Gemm, MatMul and the pools. Expected values are hand-computed or come from a
// brute-force recomputation in the test (direct loops in double precision).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "runtime/core/einsum_equation.h"
#include "runtime/core/window_geometry.h"
#include "runtime/reference/ops/linalg_kernels.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {
namespace {

using namespace test;

// A node named "<op>_node"; expect_error checks that the message names it.
Tensor random_tensor(Shape shape, uint32_t seed, DType dt = DType::Float32) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor t(dt, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.set_from_double(i, dist(rng));
  return t;
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(size_t(actual.size()), expected.size()) << actual.describe();
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual.get_as_double(int64_t(i)), expected[i], tol * (1.0 + std::abs(expected[i]))) << "element " << i;
}

void expect_error(const Node& node, const std::vector<const Tensor*>& inputs, const std::string& fragment) {
  try {
    run1(node, 17, inputs);
    FAIL() << "expected an Error containing '" << fragment << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(node.name), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

// ---------------------------------------------------------------------------------
// The shared GEMM.

template <class T> void check_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, T beta) {
  std::mt19937 rng(uint32_t(m * 131 + n * 17 + k));
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<T> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  for (T& v : a) v = T(dist(rng));
  for (T& v : b) v = T(dist(rng));
  for (T& v : c) v = T(dist(rng));
  std::vector<T> expected(c.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = T(0);
      for (int64_t p = 0; p < k; ++p)
        acc += (ta ? a[size_t(p * m + i)] : a[size_t(i * k + p)]) * (tb ? b[size_t(j * k + p)] : b[size_t(p * n + j)]);
      expected[size_t(i * n + j)] = alpha * acc + beta * c[size_t(i * n + j)];
    }
  }
  linalg::gemm<T>(ta, tb, m, n, k, alpha, a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(), n);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], expected[i]) << m << "x" << n << "x" << k << " at " << i;
}

TEST(LinalgGemmRoutine, MatchesNaiveProductForOddShapesAndTransposes) {
  // Small integers keep every float sum exact, so results must be bit-identical.
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},    {3, 5, 7},      {4, 8, 1},    {5, 17, 3},
                                                      {33, 9, 300}, {130, 70, 513}, {1, 300, 20}, {70, 1, 20}};
  for (const auto& [m, n, k] : shapes) {
    for (int t = 0; t < 4; ++t) {
      check_gemm<float>(t & 1, t & 2, m, n, k, 1.0f, 0.0f);
      check_gemm<float>(t & 1, t & 2, m, n, k, 2.0f, -1.0f);
      check_gemm<double>(t & 1, t & 2, m, n, k, 0.5, 2.0);
      check_gemm<int32_t>(t & 1, t & 2, m, n, k, 1, 1);
      check_gemm<int64_t>(t & 1, t & 2, m, n, k, 3, 0);
    }
  }
}

TEST(LinalgGemmRoutine, LargeProductIsExactAndSplitsOverThreads) {
  check_gemm<float>(false, false, 300, 520, 260, 1.0f, 0.0f);
  check_gemm<float>(false, true, 520, 300, 260, 1.0f, 1.0f);
}

TEST(LinalgGemmRoutine, BetaZeroIgnoresNaNInC) {
  std::vector<float> a{1, 2}, b{3, 4}, c{NAN};
  linalg::gemm<float>(false, false, 1, 1, 2, 1.0f, a.data(), 2, b.data(), 1, 0.0f, c.data(), 1);
  EXPECT_EQ(c[0], 11.0f);
  // k == 0 gives beta * C.
  std::vector<float> d{5.0f};
  linalg::gemm<float>(false, false, 1, 1, 0, 1.0f, a.data(), 0, b.data(), 1, 2.0f, d.data(), 1);
  EXPECT_EQ(d[0], 10.0f);
}

// ---------------------------------------------------------------------------------
// Conv and ConvTranspose against direct loops.

struct ConvCase {
  ConvCase(Shape x_, Shape w_, int64_t group_ = 1, std::vector<int64_t> strides_ = {},
           std::vector<int64_t> dilations_ = {}, std::vector<int64_t> pads_ = {}, std::string auto_pad_ = "",
           bool bias_ = true)
      : x(std::move(x_)),
        w(std::move(w_)),
        group(group_),
        strides(std::move(strides_)),
        dilations(std::move(dilations_)),
        pads(std::move(pads_)),
        auto_pad(std::move(auto_pad_)),
        bias(bias_) {}
  Shape x;  // N, C, spatial...
  Shape w;  // M, C/group, kernel...
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // empty: defaults
  std::string auto_pad;                           // empty: attribute absent
  bool bias;
};

// Index helpers over up to 3 spatial dims (missing dims are 1).
int64_t dim_or_1(const Shape& s, size_t i) { return i < s.size() ? s[i] : 1; }

std::vector<double> naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group,
                               const WindowGeometry& g) {
  const size_t r = g.rank();
  const int64_t n_batch = x.dim(0), c_in = x.dim(1), m_out = w.dim(0);
  const int64_t cg = c_in / group, mg = m_out / group;
  auto d = [&](const Shape& s, size_t i) { return dim_or_1(s, i); };
  auto v = [&](const std::vector<int64_t>& s, size_t i, int64_t def) { return i < r ? s[i] : def; };
  const std::vector<double> xs = x.to_doubles(), ws = w.to_doubles();
  std::vector<double> out;
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t m = 0; m < m_out; ++m)
      for (int64_t o0 = 0; o0 < d(g.out, 0); ++o0)
        for (int64_t o1 = 0; o1 < d(g.out, 1); ++o1)
          for (int64_t o2 = 0; o2 < d(g.out, 2); ++o2) {
            double acc = b ? b->get_as_double(m) : 0.0;
            const int64_t gi = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t k0 = 0; k0 < d(g.kernel, 0); ++k0)
                for (int64_t k1 = 0; k1 < d(g.kernel, 1); ++k1)
                  for (int64_t k2 = 0; k2 < d(g.kernel, 2); ++k2) {
                    const int64_t i0 = o0 * v(g.strides, 0, 1) + k0 * v(g.dilations, 0, 1) - v(g.pads_begin, 0, 0);
                    const int64_t i1 = o1 * v(g.strides, 1, 1) + k1 * v(g.dilations, 1, 1) - v(g.pads_begin, 1, 0);
                    const int64_t i2 = o2 * v(g.strides, 2, 1) + k2 * v(g.dilations, 2, 1) - v(g.pads_begin, 2, 0);
                    if (i0 < 0 || i0 >= d(g.in, 0) || i1 < 0 || i1 >= d(g.in, 1) || i2 < 0 || i2 >= d(g.in, 2))
                      continue;
                    const int64_t xi =
                        (((n * c_in + gi * cg + c) * d(g.in, 0) + i0) * d(g.in, 1) + i1) * d(g.in, 2) + i2;
                    const int64_t wi =
                        (((m * cg + c) * d(g.kernel, 0) + k0) * d(g.kernel, 1) + k1) * d(g.kernel, 2) + k2;
                    acc += xs[size_t(xi)] * ws[size_t(wi)];
                  }
            out.push_back(acc);
          }
  return out;
}

Node conv_node(const ConvCase& c) {
  std::map<std::string, Attribute> attrs;
  if (c.group != 1) attrs["group"] = int_attr(c.group);
  if (!c.strides.empty()) attrs["strides"] = ints_attr(c.strides);
  if (!c.dilations.empty()) attrs["dilations"] = ints_attr(c.dilations);
  if (!c.pads.empty()) attrs["pads"] = ints_attr(c.pads);
  if (!c.auto_pad.empty()) attrs["auto_pad"] = string_attr(c.auto_pad);
  return op_node("Conv", c.bias ? 3 : 2, 1, attrs);
}

void check_conv(const ConvCase& c, uint32_t seed) {
  const Tensor x = random_tensor(c.x, seed);
  const Tensor w = random_tensor(c.w, seed + 1);
  const Tensor b = random_tensor({c.w[0]}, seed + 2);
  const Node node = conv_node(c);
  const Tensor y = c.bias ? run1(node, 17, {&x, &w, &b}) : run1(node, 17, {&x, &w});
  const Shape spatial(c.x.begin() + 2, c.x.end());
  const Shape kernel(c.w.begin() + 2, c.w.end());
  const WindowGeometry g = resolve_window(node, spatial, kernel, false);
  Shape expected_shape{c.x[0], c.w[0]};
  expected_shape.insert(expected_shape.end(), g.out.begin(), g.out.end());
  ASSERT_EQ(y.shape(), expected_shape);
  expect_close(y, naive_conv(x, w, c.bias ? &b : nullptr, c.group, g), 1e-4);
}

TEST(LinalgConv, MatchesDirectLoops) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 9}, {4, 3, 3}},                                         // 1-D
      {{2, 4, 11}, {6, 2, 3}, 2, {2}, {2}, {1, 2}},                   // 1-D groups, stride, dilation
      {{1, 3, 7, 8}, {5, 3, 3, 3}},                                   // 2-D
      {{2, 3, 7, 8}, {5, 3, 3, 2}, 1, {2, 1}, {1, 2}, {1, 0, 2, 1}},  // asymmetric pads
      {{1, 8, 10, 10}, {8, 1, 3, 3}, 8, {1, 1}, {}, {1, 1, 1, 1}},    // depthwise
      {{1, 4, 9, 9}, {8, 1, 3, 3}, 4, {2, 2}, {}, {1, 1, 1, 1}},      // depthwise multiplier, stride
      {{1, 6, 9, 9}, {6, 3, 3, 3}, 2, {}, {2, 2}, {2, 2, 2, 2}},      // groups + dilations
      {{1, 16, 6, 5}, {12, 16, 1, 1}, 1, {}, {}, {}, "", false},      // pointwise, no bias
      {{1, 4, 6, 5}, {3, 4, 1, 1}, 1, {2, 2}},                        // strided pointwise
      {{1, 3, 7, 6}, {2, 3, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},  // auto_pad
      {{1, 3, 7, 6}, {2, 3, 4, 4}, 1, {1, 1}, {}, {}, "SAME_LOWER"},
      {{1, 3, 7, 6}, {2, 3, 3, 2}, 1, {2, 3}, {}, {}, "VALID"},
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, 1, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}},  // 3-D
      {{1, 4, 3, 4, 5}, {4, 2, 2, 2, 2}, 2, {}, {}, {}, "SAME_UPPER"},
      {{1, 2, 2, 2}, {3, 2, 5, 5}, 1, {}, {}, {2, 2, 2, 2}},  // kernel larger than input
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    check_conv(cases[i], uint32_t(10 * i + 1));
  }
}

TEST(LinalgConv, LargeConvMatchesDirectLoops) {
  check_conv({{1, 32, 20, 20}, {48, 32, 3, 3}, 1, {1, 1}, {}, {1, 1, 1, 1}}, 7);
}

TEST(LinalgConv, LargeImageIsDoneInRowSlices) {
  // 576 x 16384 im2col elements exceed the 2^23 buffer limit: two row slices.
  check_conv({{1, 64, 128, 128}, {1, 64, 3, 3}, 1, {1, 1}, {}, {1, 1, 1, 1}}, 8);
}

TEST(LinalgConv, HandComputed) {
  // ONNX's test_basic_conv_with_padding: 5x5 ramp, 3x3 ones, pads 1.
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[size_t(i)] = float(i);
  const Tensor x = Tensor::from_vector<float>({1, 1, 5, 5}, xv);
  const Tensor w = Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const Node node = op_node("Conv", 2, 1, {{"kernel_shape", ints_attr({3, 3})}, {"pads", ints_attr({1, 1, 1, 1})}});
  expect_close(run1(node, 17, {&x, &w}), {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
}

TEST(LinalgConv, Float16AndFloat64) {
  const Tensor x = random_tensor({1, 3, 6, 6}, 3);
  const Tensor w = random_tensor({4, 3, 3, 3}, 4);
  const Node node = op_node("Conv", 2, 1, {{"pads", ints_attr({1, 1, 1, 1})}});
  const Tensor ref = run1(node, 17, {&x, &w});
  const Tensor x16 = x.cast(DType::Float16), w16 = w.cast(DType::Float16);
  const Tensor y16 = run1(node, 17, {&x16, &w16});
  EXPECT_EQ(y16.dtype(), DType::Float16);
  expect_close(y16, ref.to_doubles(), 2e-2);
  const Tensor x64 = x.cast(DType::Float64), w64 = w.cast(DType::Float64);
  const Tensor y64 = run1(node, 17, {&x64, &w64});
  EXPECT_EQ(y64.dtype(), DType::Float64);
  expect_close(y64, ref.to_doubles(), 1e-5);
}

TEST(LinalgConv, Errors) {
  const Tensor x = random_tensor({1, 4, 5, 5}, 1);
  const Tensor w_bad_channels = random_tensor({2, 3, 3, 3}, 2);
  expect_error(op_node("Conv", 2, 1), {&x, &w_bad_channels}, "channels");
  const Tensor w = random_tensor({6, 2, 3, 3}, 3);
  expect_error(op_node("Conv", 2, 1, {{"group", int_attr(3)}}), {&x, &w}, "group");
  expect_error(op_node("Conv", 2, 1, {{"group", int_attr(0)}}), {&x, &w}, "group");
  const Tensor w_rank = random_tensor({6, 4, 3}, 4);
  expect_error(op_node("Conv", 2, 1), {&x, &w_rank}, "rank");
  const Tensor w4 = random_tensor({6, 4, 3, 3}, 5);
  expect_error(op_node("Conv", 2, 1, {{"auto_pad", string_attr("SAME")}}), {&x, &w4}, "auto_pad");
  expect_error(op_node("Conv", 2, 1, {{"pads", ints_attr({1, 1})}}), {&x, &w4}, "pads");
  expect_error(op_node("Conv", 2, 1, {{"strides", ints_attr({0, 1})}}), {&x, &w4}, "strides");
  expect_error(op_node("Conv", 2, 1, {{"kernel_shape", ints_attr({2, 2})}}), {&x, &w4}, "kernel_shape");
  const Tensor big = random_tensor({6, 4, 7, 7}, 6);
  expect_error(op_node("Conv", 2, 1), {&x, &big}, "does not fit");
  const Tensor bias = random_tensor({5}, 7);
  expect_error(op_node("Conv", 3, 1), {&x, &w4, &bias}, "bias");
  const Tensor xi = Tensor(DType::Int32, {1, 4, 5, 5});
  const Tensor wi = Tensor(DType::Int32, {6, 4, 3, 3});
  expect_error(op_node("Conv", 2, 1), {&xi, &wi}, "int32");
}

// Direct scatter form of ConvTranspose over 1 or 2 spatial dims.
std::vector<double> naive_conv_transpose(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group,
                                         const Shape& out, const std::vector<int64_t>& strides,
                                         const std::vector<int64_t>& dilations,
                                         const std::vector<int64_t>& pads_begin) {
  const size_t r = out.size();
  const int64_t n_batch = x.dim(0), c_in = x.dim(1), mg = w.dim(1), cg = c_in / group;
  const int64_t m_out = mg * group;
  const int64_t ih = x.dim(2), iw = r > 1 ? x.dim(3) : 1;
  const int64_t kh = w.dim(2), kw = r > 1 ? w.dim(3) : 1;
  const int64_t oh = out[0], ow = r > 1 ? out[1] : 1;
  std::vector<double> y(size_t(n_batch * m_out * oh * ow), 0.0);
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t m = 0; m < m_out; ++m) {
      const int64_t gi = m / mg, ml = m % mg;
      for (int64_t i = 0; i < oh * ow; ++i) y[size_t((n * m_out + m) * oh * ow + i)] = b ? b->get_as_double(m) : 0.0;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t i0 = 0; i0 < ih; ++i0)
          for (int64_t i1 = 0; i1 < iw; ++i1)
            for (int64_t k0 = 0; k0 < kh; ++k0)
              for (int64_t k1 = 0; k1 < kw; ++k1) {
                const int64_t o0 = i0 * strides[0] + k0 * dilations[0] - pads_begin[0];
                const int64_t o1 = r > 1 ? i1 * strides[1] + k1 * dilations[1] - pads_begin[1] : 0;
                if (o0 < 0 || o0 >= oh || o1 < 0 || o1 >= ow) continue;
                const double xv = x.get_as_double(((n * c_in + gi * cg + c) * ih + i0) * iw + i1);
                const double wv = w.get_as_double((((gi * cg + c) * mg + ml) * kh + k0) * kw + k1);
                y[size_t(((n * m_out + m) * oh + o0) * ow + o1)] += xv * wv;
              }
    }
  return y;
}

TEST(LinalgConvTranspose, MatchesDirectScatter) {
  struct Case {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, dilations, pads, output_padding;
  };
  const std::vector<Case> cases = {
      {{1, 2, 5}, {2, 3, 3}, 1, {2}, {1}, {0, 0}, {0}},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}},
      {{2, 4, 3, 4}, {4, 3, 3, 2}, 2, {3, 2}, {1, 2}, {1, 0, 1, 1}, {1, 1}},
      {{1, 3, 4, 4}, {3, 1, 4, 4}, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0, 0}},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    SCOPED_TRACE("case " + std::to_string(ci));
    const Case& c = cases[ci];
    const size_t r = c.x.size() - 2;
    const Tensor x = random_tensor(c.x, uint32_t(ci + 20));
    const Tensor w = random_tensor(c.w, uint32_t(ci + 40));
    const Tensor b = random_tensor({c.w[1] * c.group}, uint32_t(ci + 60));
    const Node node = op_node("ConvTranspose", 3, 1,
                              {{"group", int_attr(c.group)},
                               {"strides", ints_attr(c.strides)},
                               {"dilations", ints_attr(c.dilations)},
                               {"pads", ints_attr(c.pads)},
                               {"output_padding", ints_attr(c.output_padding)}});
    Shape out;
    std::vector<int64_t> pads_begin;
    for (size_t i = 0; i < r; ++i) {
      out.push_back(c.strides[i] * (c.x[i + 2] - 1) + c.output_padding[i] + (c.w[i + 2] - 1) * c.dilations[i] + 1 -
                    c.pads[i] - c.pads[i + r]);
      pads_begin.push_back(c.pads[i]);
    }
    const Tensor y = run1(node, 17, {&x, &w, &b});
    Shape expected_shape{c.x[0], c.w[1] * c.group};
    expected_shape.insert(expected_shape.end(), out.begin(), out.end());
    ASSERT_EQ(y.shape(), expected_shape);
    expect_close(y, naive_conv_transpose(x, w, &b, c.group, out, c.strides, c.dilations, pads_begin), 1e-4);
  }
}

TEST(LinalgConvTranspose, LargeImageIsDoneInRowSlices) {
  // 32 * 9 column rows x 172 * 172 input positions exceed the 2^23 buffer limit.
  const Tensor x = random_tensor({1, 1, 172, 172}, 1);
  const Tensor w = random_tensor({1, 32, 3, 3}, 2);
  const Node node = op_node("ConvTranspose", 2, 1, {{"pads", ints_attr({1, 1, 1, 1})}});
  const Tensor y = run1(node, 17, {&x, &w});
  ASSERT_EQ(y.shape(), (Shape{1, 32, 172, 172}));
  expect_close(y, naive_conv_transpose(x, w, nullptr, 1, {172, 172}, {1, 1}, {1, 1}, {1, 1}), 1e-4);
}

TEST(LinalgConvTranspose, OutputShapeAndAutoPad) {
  // ONNX's test_convtranspose_autopad_same: SAME_UPPER puts the odd padding at the end.
  std::vector<float> xv(9);
  for (int i = 0; i < 9; ++i) xv[size_t(i)] = float(i);
  const Tensor x = Tensor::from_vector<float>({1, 1, 3, 3}, xv);
  const Tensor w = Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const Tensor same =
      run1(op_node("ConvTranspose", 2, 1, {{"auto_pad", string_attr("SAME_UPPER")}, {"strides", ints_attr({2, 2})}}),
           17, {&x, &w});
  ASSERT_EQ(same.shape(), (Shape{1, 1, 6, 6}));
  expect_close(same, naive_conv_transpose(x, w, nullptr, 1, {6, 6}, {2, 2}, {1, 1}, {0, 0}));
  // output_shape larger than the natural size extends the end (zeros there).
  const Tensor big =
      run1(op_node("ConvTranspose", 2, 1, {{"output_shape", ints_attr({10, 8})}, {"strides", ints_attr({3, 2})}}), 17,
           {&x, &w});
  ASSERT_EQ(big.shape(), (Shape{1, 1, 10, 8}));
  expect_close(big, naive_conv_transpose(x, w, nullptr, 1, {10, 8}, {3, 2}, {1, 1}, {0, 0}));
  // output_shape may also list N and C.
  const Tensor full =
      run1(op_node("ConvTranspose", 2, 1, {{"output_shape", ints_attr({1, 1, 10, 8})}, {"strides", ints_attr({3, 2})}}),
           17, {&x, &w});
  EXPECT_TRUE(full.bit_equal(big));
}

TEST(LinalgConvTranspose, Errors) {
  const Tensor x = random_tensor({1, 4, 3, 3}, 1);
  const Tensor w = random_tensor({3, 2, 3, 3}, 2);
  expect_error(op_node("ConvTranspose", 2, 1), {&x, &w}, "channels");
  const Tensor w4 = random_tensor({4, 2, 3, 3}, 3);
  expect_error(op_node("ConvTranspose", 2, 1, {{"group", int_attr(3)}}), {&x, &w4}, "group");
  expect_error(op_node("ConvTranspose", 2, 1, {{"output_padding", ints_attr({1})}}), {&x, &w4}, "output_padding");
  expect_error(op_node("ConvTranspose", 2, 1, {{"pads", ints_attr({3, 3, 3, 3})}}), {&x, &w4}, "empty");
}

// ---------------------------------------------------------------------------------
// Gemm and MatMul.

std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n,
                                 int64_t k) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[size_t(i * n + j)] += a[size_t(i * k + p)] * b[size_t(p * n + j)];
  return c;
}

TEST(LinalgMatMul, PromotesOneDimensionalOperands) {
  const Node node = op_node("MatMul", 2, 1);
  const Tensor v = Tensor::from_vector<float>({3}, {1, 2, 3});
  const Tensor m = Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor vm = run1(node, 17, {&v, &m});
  EXPECT_EQ(vm.shape(), (Shape{2}));
  expect_close(vm, {22, 28});
  const Tensor mt = Tensor::from_vector<float>({2, 3}, {1, 3, 5, 2, 4, 6});
  const Tensor mv = run1(node, 17, {&mt, &v});
  EXPECT_EQ(mv.shape(), (Shape{2}));
  expect_close(mv, {22, 28});
  const Tensor vv = run1(node, 17, {&v, &v});
  EXPECT_EQ(vv.shape(), Shape{});
  expect_close(vv, {14});
  // A 1-D operand against a batch: [2, 2, 3] x [3] -> [2, 2].
  const Tensor batch = random_tensor({2, 2, 3}, 5);
  const Tensor bv = run1(node, 17, {&batch, &v});
  EXPECT_EQ(bv.shape(), (Shape{2, 2}));
}

TEST(LinalgMatMul, BroadcastsBatchDims) {
  const Node node = op_node("MatMul", 2, 1);
  const Tensor a = random_tensor({2, 1, 3, 4}, 1);
  const Tensor b = random_tensor({3, 4, 5}, 2);
  const Tensor y = run1(node, 17, {&a, &b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3, 5}));
  const std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      const std::vector<double> as(av.begin() + i * 12, av.begin() + (i + 1) * 12);
      const std::vector<double> bs(bv.begin() + j * 20, bv.begin() + (j + 1) * 20);
      const std::vector<double> c = naive_matmul(as, bs, 3, 5, 4);
      expected.insert(expected.end(), c.begin(), c.end());
    }
  }
  expect_close(y, expected);
  // Shared right operand: the batch folds into one product.
  const Tensor b2 = random_tensor({4, 5}, 3);
  const Tensor y2 = run1(node, 17, {&a, &b2});
  ASSERT_EQ(y2.shape(), (Shape{2, 1, 3, 5}));
  expect_close(y2, naive_matmul(av, b2.to_doubles(), 6, 5, 4));
}

TEST(LinalgMatMul, IntegerAndFloatTypes) {
  const Node node = op_node("MatMul", 2, 1);
  const Tensor a = Tensor::from_vector<int64_t>({2, 2}, {int64_t(1) << 40, 2, 3, 4});
  const Tensor b = Tensor::from_vector<int64_t>({2, 1}, {3, 1});
  const Tensor y = run1(node, 17, {&a, &b});
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.data<int64_t>()[0], (int64_t(3) << 40) + 2);
  EXPECT_EQ(y.data<int64_t>()[1], 13);
  const Tensor ai = Tensor::from_vector<int32_t>({1, 2}, {-3, 7});
  const Tensor bi = Tensor::from_vector<int32_t>({2, 1}, {5, 2});
  EXPECT_EQ(run1(node, 17, {&ai, &bi}).data<int32_t>()[0], -1);
  const Tensor ad = random_tensor({3, 4}, 1, DType::Float64), bd = random_tensor({4, 2}, 2, DType::Float64);
  const Tensor yd = run1(node, 17, {&ad, &bd});
  EXPECT_EQ(yd.dtype(), DType::Float64);
  expect_close(yd, naive_matmul(ad.to_doubles(), bd.to_doubles(), 3, 2, 4), 1e-12);
  const Tensor ah = ad.cast(DType::Float16), bh = bd.cast(DType::Float16);
  const Tensor yh = run1(node, 17, {&ah, &bh});
  EXPECT_EQ(yh.dtype(), DType::Float16);
  expect_close(yh, naive_matmul(ah.to_doubles(), bh.to_doubles(), 3, 2, 4), 2e-3);
}

TEST(LinalgMatMul, Errors) {
  const Node node = op_node("MatMul", 2, 1);
  const Tensor a = random_tensor({2, 3}, 1);
  const Tensor b = random_tensor({4, 2}, 2);
  expect_error(node, {&a, &b}, "inner dims");
  const Tensor c = random_tensor({3, 3, 2}, 3);
  const Tensor d = random_tensor({2, 2, 4}, 4);
  expect_error(node, {&c, &d}, "broadcast");
  const Tensor e = Tensor(DType::Int8, {3, 2});
  const Tensor f = Tensor(DType::Int8, {2, 2});
  expect_error(node, {&e, &f}, "int8");
  const Tensor g = random_tensor({2, 2}, 6, DType::Float64);
  expect_error(node, {&a, &g}, "different types");
}

TEST(LinalgGemm, AttributesAndBroadcastC) {
  const Tensor a = random_tensor({4, 3}, 1);  // transA: op(A) is 3 x 4
  const Tensor b = random_tensor({5, 4}, 2);  // transB: op(B) is 4 x 5
  const std::vector<double> at = [&] {
    std::vector<double> v(12), src = a.to_doubles();
    for (int i = 0; i < 3; ++i)
      for (int p = 0; p < 4; ++p) v[size_t(i * 4 + p)] = src[size_t(p * 3 + i)];
    return v;
  }();
  const std::vector<double> bt = [&] {
    std::vector<double> v(20), src = b.to_doubles();
    for (int p = 0; p < 4; ++p)
      for (int j = 0; j < 5; ++j) v[size_t(p * 5 + j)] = src[size_t(j * 4 + p)];
    return v;
  }();
  const std::vector<double> ab = naive_matmul(at, bt, 3, 5, 4);
  const std::map<std::string, Attribute> attrs = {
      {"transA", int_attr(1)}, {"transB", int_attr(1)}, {"alpha", float_attr(0.25f)}, {"beta", float_attr(0.5f)}};
  for (const Shape& c_shape : {Shape{}, Shape{1}, Shape{5}, Shape{3, 1}, Shape{1, 5}, Shape{3, 5}}) {
    SCOPED_TRACE(shape_to_string(c_shape));
    const Tensor c = random_tensor(c_shape, 3);
    const std::vector<int64_t> cs = broadcast_strides(c_shape, {3, 5});
    std::vector<double> expected(15);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        expected[size_t(i * 5 + j)] = 0.25 * ab[size_t(i * 5 + j)] + 0.5 * c.get_as_double(i * cs[0] + j * cs[1]);
    expect_close(run1(op_node("Gemm", 3, 1, attrs), 17, {&a, &b, &c}), expected);
  }
  // No C (opset 11+).
  std::vector<double> scaled(ab);
  for (double& v : scaled) v *= 0.25;
  expect_close(run1(op_node("Gemm", 2, 1, attrs), 17, {&a, &b}), scaled);
}

TEST(LinalgGemm, IntegerAndErrors) {
  const Tensor a = Tensor::from_vector<int32_t>({1, 2}, {2, 3});
  const Tensor b = Tensor::from_vector<int32_t>({2, 1}, {4, 5});
  const Tensor c = Tensor::from_vector<int32_t>({1}, {-1});
  EXPECT_EQ(run1(op_node("Gemm", 3, 1), 17, {&a, &b, &c}).data<int32_t>()[0], 22);
  const Tensor f = random_tensor({2, 3}, 1);
  const Tensor g = random_tensor({2, 3}, 2);
  expect_error(op_node("Gemm", 2, 1), {&f, &g}, "cannot multiply");
  const Tensor bad_c = random_tensor({3}, 3);
  expect_error(op_node("Gemm", 3, 1, {{"transB", int_attr(1)}}), {&f, &g, &bad_c}, "broadcast");
  const Tensor r3 = random_tensor({1, 2, 3}, 4);
  expect_error(op_node("Gemm", 2, 1), {&r3, &g}, "2-D");
}

// ---------------------------------------------------------------------------------
// Pools.

TEST(LinalgPool, MaxPoolWithIndicesAndStorageOrder) {
  std::vector<float> xv(25);
  for (int i = 0; i < 25; ++i) xv[size_t(i)] = float(i + 1);
  const Tensor x = Tensor::from_vector<float>({1, 1, 5, 5}, xv);
  const Node node = op_node("MaxPool", 1, 2, {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  const auto out = run_reference_node(node, 12, {&x});
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0], {7, 9, 17, 19});
  EXPECT_EQ(out[1].dtype(), DType::Int64);
  EXPECT_EQ(out[1].to_int64s(), (std::vector<int64_t>{6, 8, 16, 18}));
  Node col = node;
  col.attrs["storage_order"] = int_attr(1);
  EXPECT_EQ(run_reference_node(col, 12, {&x})[1].to_int64s(), (std::vector<int64_t>{6, 16, 8, 18}));
  // The second plane's indices count from the start of the tensor.
  const Tensor x2 = Tensor::from_vector<float>({1, 2, 1, 2}, {1, 2, 4, 3});
  const Node n2 = op_node("MaxPool", 1, 2, {{"kernel_shape", ints_attr({1, 2})}});
  EXPECT_EQ(run_reference_node(n2, 12, {&x2})[1].to_int64s(), (std::vector<int64_t>{1, 2}));
}

TEST(LinalgPool, MaxPoolCeilModeDilationsAndIntegers) {
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[size_t(i)] = float(i + 1);
  const Tensor x = Tensor::from_vector<float>({1, 1, 4, 4}, xv);
  const Node ceil =
      op_node("MaxPool", 1, 1,
              {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}, {"ceil_mode", int_attr(1)}});
  expect_close(run1(ceil, 17, {&x}), {11, 12, 15, 16});
  const Node dil = op_node("MaxPool", 1, 1, {{"kernel_shape", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}});
  expect_close(run1(dil, 17, {&x}), {11, 12, 15, 16});
  const Tensor xu = x.cast(DType::UInt8);
  const Tensor yu = run1(ceil, 17, {&xu});
  EXPECT_EQ(yu.dtype(), DType::UInt8);
  expect_close(yu, {11, 12, 15, 16});
  const Tensor xn = Tensor::from_vector<int8_t>({1, 1, 1, 3}, {-5, -7, -6});
  const Node pad = op_node("MaxPool", 1, 1, {{"kernel_shape", ints_attr({1, 2})}, {"pads", ints_attr({0, 1, 0, 1})}});
  // Padding never wins, even over negative values.
  expect_close(run1(pad, 17, {&xn}), {-5, -5, -6, -6});
}

TEST(LinalgPool, AveragePoolPadding) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  std::map<std::string, Attribute> attrs = {{"kernel_shape", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}};
  expect_close(run1(op_node("AveragePool", 1, 1, attrs), 17, {&x}), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  attrs["count_include_pad"] = int_attr(1);
  expect_close(run1(op_node("AveragePool", 1, 1, attrs), 17, {&x}), {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
  // SAME_UPPER without count_include_pad averages only the real values.
  const Node same =
      op_node("AveragePool", 1, 1, {{"kernel_shape", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_UPPER")}});
  expect_close(run1(same, 17, {&x}), {2.5, 3, 3.5, 4});
  // 1-D and float64.
  const Tensor x1 = Tensor::from_vector<double>({1, 1, 4}, {1, 2, 3, 5});
  const Tensor y1 = run1(op_node("AveragePool", 1, 1, {{"kernel_shape", ints_attr({2})}}), 17, {&x1});
  EXPECT_EQ(y1.dtype(), DType::Float64);
  expect_close(y1, {1.5, 2.5, 4});
}

TEST(LinalgPool, GlobalAndLpPools) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  const Tensor avg = run1(op_node("GlobalAveragePool", 1, 1), 17, {&x});
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 1, 1}));
  expect_close(avg, {2.5, -2.5});
  expect_close(run1(op_node("GlobalMaxPool", 1, 1), 17, {&x}), {4, -1});
  expect_close(run1(op_node("GlobalLpPool", 1, 1), 17, {&x}), {std::sqrt(30.0), std::sqrt(30.0)});
  expect_close(run1(op_node("GlobalLpPool", 1, 1, {{"p", int_attr(1)}}), 17, {&x}), {10, 10});
  const Tensor lp = run1(op_node("LpPool", 1, 1, {{"kernel_shape", ints_attr({1, 2})}}), 17, {&x});
  EXPECT_EQ(lp.shape(), (Shape{1, 2, 2, 1}));
  expect_close(lp, {std::sqrt(5.0), 5, std::sqrt(5.0), 5});
  const Tensor x3 = random_tensor({1, 1, 2, 3, 4}, 9);
  const Tensor g3 = run1(op_node("GlobalAveragePool", 1, 1), 17, {&x3});
  EXPECT_EQ(g3.shape(), (Shape{1, 1, 1, 1, 1}));
  double sum = 0;
  for (double v : x3.to_doubles()) sum += v;
  expect_close(g3, {sum / 24});
}

TEST(LinalgPool, Errors) {
  const Tensor x = random_tensor({1, 1, 4, 4}, 1);
  expect_error(op_node("MaxPool", 1, 1), {&x}, "kernel_shape");
  expect_error(op_node("MaxPool", 1, 1, {{"kernel_shape", ints_attr({2})}}), {&x}, "kernel shape");
  expect_error(op_node("AveragePool", 1, 1, {{"kernel_shape", ints_attr({5, 5})}}), {&x}, "does not fit");
  const Tensor flat = random_tensor({4, 4}, 2);
  expect_error(op_node("GlobalAveragePool", 1, 1), {&flat}, "rank");
  const Tensor xi = Tensor(DType::Int32, {1, 1, 4, 4});
  expect_error(op_node("AveragePool", 1, 1, {{"kernel_shape", ints_attr({2, 2})}}), {&xi}, "int32");
}

TEST(LinalgPool, MaxUnpool) {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor idx = Tensor::from_vector<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  const Node node = op_node("MaxUnpool", 2, 1, {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  const Tensor y = run1(node, 17, {&x, &idx});
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  expect_close(y, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  // An explicit output_shape keeps the coordinates of the unpooled 4x4 shape.
  const Tensor shape = Tensor::from_vector<int64_t>({4}, {1, 1, 5, 5});
  const Tensor big = run1(op_node("MaxUnpool", 3, 1, node.attrs), 17, {&x, &idx, &shape});
  ASSERT_EQ(big.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(big.get_as_double(6), 1.0);
  EXPECT_EQ(big.get_as_double(18), 4.0);
  const Tensor bad = Tensor::from_vector<int64_t>({1, 1, 2, 2}, {5, 7, 13, 16});
  expect_error(node, {&x, &bad}, "outside");
}

// ---------------------------------------------------------------------------------
// Quantized forms.

TEST(LinalgQuantized, ConvIntegerMatchesFloatConvOfShiftedValues) {
  const Tensor x =
      Tensor::from_vector<uint8_t>({1, 2, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17});
  const Tensor w = Tensor::from_vector<int8_t>({2, 2, 2, 2}, {1, -1, 2, 0, 3, 1, -2, 1, 0, 1, 1, 1, -1, 2, 2, -3});
  const Tensor x_zp = Tensor::scalar<uint8_t>(3);
  const Tensor w_zp = Tensor::from_vector<int8_t>({2}, {1, -1});
  const std::map<std::string, Attribute> attrs = {{"pads", ints_attr({1, 1, 0, 0})}};
  const Tensor y = run1(op_node("ConvInteger", 4, 1, attrs), 17, {&x, &w, &x_zp, &w_zp});
  EXPECT_EQ(y.dtype(), DType::Int32);
  // Same conv in float on the shifted values; padding is zero after the shift.
  Tensor xf(DType::Float32, x.shape()), wf(DType::Float32, w.shape());
  for (int64_t i = 0; i < x.size(); ++i) xf.set_from_double(i, x.get_as_double(i) - 3);
  for (int64_t i = 0; i < w.size(); ++i) wf.set_from_double(i, w.get_as_double(i) - (i < 8 ? 1 : -1));
  const Tensor ref = run1(op_node("Conv", 2, 1, attrs), 17, {&xf, &wf});
  EXPECT_EQ(y.shape(), ref.shape());
  expect_close(y, ref.to_doubles(), 0);
}

TEST(LinalgQuantized, MatMulIntegerPerRowAndColumnZeroPoints) {
  const Tensor a = Tensor::from_vector<uint8_t>({2, 3}, {10, 20, 30, 40, 50, 60});
  const Tensor b = Tensor::from_vector<int8_t>({3, 2}, {1, -2, 3, -4, 5, -6});
  const Tensor a_zp = Tensor::from_vector<uint8_t>({2}, {10, 40});
  const Tensor b_zp = Tensor::from_vector<int8_t>({2}, {0, -1});
  const Tensor y = run1(op_node("MatMulInteger", 4, 1), 17, {&a, &b, &a_zp, &b_zp});
  EXPECT_EQ(y.dtype(), DType::Int32);
  // Rows (0, 10, 20) and (0, 10, 20); columns (1, 3, 5) and (-1, -3, -5).
  EXPECT_EQ(y.to_int64s(), (std::vector<int64_t>{130, -130, 130, -130}));
}

TEST(LinalgQuantized, QLinearMatMulRoundsHalfToEvenAndSaturates) {
  const Tensor a = Tensor::from_vector<uint8_t>({1, 2}, {2, 4});
  const Tensor b = Tensor::from_vector<uint8_t>({2, 3}, {1, 2, 200, 3, 6, 250});
  const Tensor one = Tensor::scalar<float>(1.0f), half = Tensor::scalar<float>(0.5f);
  const Tensor zero = Tensor::scalar<uint8_t>(0), b_zp = Tensor::scalar<uint8_t>(1);
  const Tensor y_zp = Tensor::scalar<uint8_t>(10);
  const Node node = op_node("QLinearMatMul", 8, 1);
  // acc = (2*0 + 4*2, 2*1 + 4*5, 2*199 + 4*249) = (8, 22, 1394); * 0.5 = (4, 11, 697).
  const Tensor y = run1(node, 17, {&a, &one, &zero, &b, &half, &b_zp, &one, &y_zp});
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(y.to_int64s(), (std::vector<int64_t>{14, 21, 255}));
  // 5 * 0.5 = 2.5 rounds to 2.
  const Tensor a5 = Tensor::from_vector<uint8_t>({1, 1}, {5});
  const Tensor b1 = Tensor::from_vector<uint8_t>({1, 1}, {2});
  EXPECT_EQ(run1(node, 17, {&a5, &one, &zero, &b1, &half, &b_zp, &one, &zero}).to_int64s(), (std::vector<int64_t>{2}));
}

TEST(LinalgQuantized, QLinearConvPerChannelScalesAndBias) {
  const Tensor x = Tensor::from_vector<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = Tensor::from_vector<int8_t>({2, 1, 1, 1}, {2, -3});
  const Tensor x_scale = Tensor::scalar<float>(1.0f), x_zp = Tensor::scalar<int8_t>(0);
  const Tensor w_scale = Tensor::from_vector<float>({2}, {0.5f, 2.0f});
  const Tensor w_zp = Tensor::from_vector<int8_t>({2}, {0, 0});
  const Tensor y_scale = Tensor::scalar<float>(1.0f), y_zp = Tensor::scalar<int8_t>(-1);
  const Tensor bias = Tensor::from_vector<int32_t>({2}, {1, 0});
  const Tensor y =
      run1(op_node("QLinearConv", 9, 1), 17, {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &y_zp, &bias});
  EXPECT_EQ(y.dtype(), DType::Int8);
  // Channel 0: (2x + 1) * 0.5 = 1.5, 2.5, 3.5, 4.5 rounds (half to even) to 2, 2, 4, 4, then the
  // zero point -1; channel 1: -3x * 2 - 1.
  EXPECT_EQ(y.to_int64s(), (std::vector<int64_t>{1, 1, 3, 3, -7, -13, -19, -25}));
  const Tensor xf = x.cast(DType::Float32);
  expect_error(op_node("ConvInteger", 2, 1), {&xf, &w}, "uint8 or int8");
}

// ---------------------------------------------------------------------------------
// Throughput, for the record (prints, never fails on speed).

TEST(LinalgPerformance, Conv3x3AndMatMul) {
#ifndef NDEBUG
  GTEST_SKIP() << "timings of an unoptimized build mean nothing";
#endif
  const Tensor x = random_tensor({1, 64, 56, 56}, 1);
  const Tensor w = random_tensor({64, 64, 3, 3}, 2);
  const Node conv = op_node("Conv", 2, 1, {{"pads", ints_attr({1, 1, 1, 1})}});
  run1(conv, 17, {&x, &w});
  auto t0 = std::chrono::steady_clock::now();
  const int reps = 5;
  for (int i = 0; i < reps; ++i) run1(conv, 17, {&x, &w});
  const double conv_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  const double conv_flops = 2.0 * 64 * 64 * 9 * 56 * 56;

  const Tensor a = random_tensor({1024, 1024}, 3);
  const Tensor b = random_tensor({1024, 1024}, 4);
  const Node mm = op_node("MatMul", 2, 1);
  run1(mm, 17, {&a, &b});
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) run1(mm, 17, {&a, &b});
  const double mm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf(
      "[ perf ] conv 1x64x56x56 3x3 -> 64: %.2f ms, %.1f GFLOP/s; matmul 1024^3: %.2f ms, %.1f GFLOP/s "
      "(%d threads)\n",
      conv_s * 1e3, conv_flops / conv_s * 1e-9, mm_s * 1e3, 2.0 * 1024 * 1024 * 1024 / mm_s * 1e-9,
      linalg::reference_threads());
}

// ---------------------------------------------------------------------------------
// Einsum (values worked by hand).

TEST(LinalgEinsum, ImplicitOutputIsSortedSingleLetters) {
  // "ba,b": a occurs once, b twice, so the output is "a": y[a] = sum_b x[b, a] * v[b].
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor v = Tensor::from_vector<float>({2}, {10, 100});
  const Tensor y = run1(op_node("Einsum", 2, 1, {{"equation", string_attr("ba,b")}}), 12, {&x, &v});
  EXPECT_EQ(y.shape(), Shape({3}));
  expect_close(y, {410, 520, 630});
}

TEST(LinalgEinsum, DiagonalTraceAndBroadcastEllipsis) {
  const Tensor m = Tensor::from_vector<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_close(run1(op_node("Einsum", 1, 1, {{"equation", string_attr("ii->i")}}), 12, {&m}), {1, 5, 9});
  expect_close(run1(op_node("Einsum", 1, 1, {{"equation", string_attr("ii")}}), 12, {&m}), {15});
  // [2, 1, 2] against [3, 2]: the ellipsis broadcasts to [2, 3].
  const Tensor a = Tensor::from_vector<float>({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_vector<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  const Tensor y = run1(op_node("Einsum", 2, 1, {{"equation", string_attr("...i,...i->...")}}), 12, {&a, &b});
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  expect_close(y, {1, 2, 3, 3, 4, 7});
}

TEST(LinalgEinsum, IntegersAreExact) {
  const Tensor a = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_vector<int64_t>({2, 2}, {5, 6, 7, 8});
  const Tensor y = run1(op_node("Einsum", 2, 1, {{"equation", string_attr("ij,jk->ik")}}), 12, {&a, &b});
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{19, 22, 43, 50}));
}

TEST(LinalgDet, BatchedWithPivotingAndSingular) {
  // [[0, 2], [3, 4]] needs a row swap: det = -6; the second matrix is singular.
  const Tensor x = Tensor::from_vector<float>({2, 2, 2}, {0, 2, 3, 4, 1, 2, 2, 4});
  const Tensor y = run1(op_node("Det", 1, 1), 11, {&x});
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_close(y, {-6.0, 0.0});
  const Tensor m3 = Tensor::from_vector<float>({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2});
  expect_close(run1(op_node("Det", 1, 1), 11, {&m3}), {6.0});  // 2 * (6 - 2) - 0 + 1 * (1 - 3)
  const Tensor wide = random_tensor({2, 3}, 2);
  expect_error(op_node("Det", 1, 1), {&wide}, "square matrices");
}

TEST(LinalgEinsum, BadEquationsNameTheNode) {
  const Tensor m = random_tensor({2, 3}, 1);
  expect_error(op_node("Einsum", 1, 1, {{"equation", string_attr("ij,jk->ik")}}), {&m}, "2 operand(s)");
  expect_error(op_node("Einsum", 1, 1, {{"equation", string_attr("ijk->i")}}), {&m}, "names 3 axes");
  expect_error(op_node("Einsum", 1, 1, {{"equation", string_attr("i2->i")}}), {&m}, "invalid character '2'");
  expect_error(op_node("Einsum", 1, 1, {{"equation", string_attr("ij->k")}}), {&m}, "in no input");
  expect_error(op_node("Einsum", 1, 1, {{"equation", string_attr("ii->i")}}), {&m}, "sizes 2 and 3");
}

TEST(EinsumEquation, MatrixProductForms) {
  std::string why;
  const auto g = einsum_as_gemm(parse_einsum("bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 7, 8}}, "t"), why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(g->a, 0u);
  EXPECT_EQ(g->M, 5);
  EXPECT_EQ(g->N, 7);
  EXPECT_EQ(g->K, 8);
  EXPECT_EQ(g->a_sm, 8);
  EXPECT_EQ(g->b_sn, 8);
  EXPECT_EQ(g->a_sk, 1);
  EXPECT_EQ(g->b_sk, 1);
  EXPECT_EQ(g->a_offsets.size(), 6u);
  EXPECT_EQ(g->b_offsets[1], 56);
  // The output's N labels belong to operand 0: operands swap.
  const auto t = einsum_as_gemm(parse_einsum("ij,jk->ki", {{4, 5}, {5, 6}}, "t"), why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->a, 1u);
  EXPECT_EQ(t->M, 6);
  EXPECT_EQ(t->N, 4);
  EXPECT_FALSE(einsum_as_gemm(parse_einsum("ij,jk->i", {{4, 5}, {5, 6}}, "t"), why));
  EXPECT_NE(why.find("one operand only"), std::string::npos) << why;
}

}  // namespace
}  // namespace vkg
