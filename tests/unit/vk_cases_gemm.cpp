// Conformance cases of the gemm family (runtime/tactics/gemm.cpp): MatMul,
// Gemm, MatMulInteger and QLinearMatMul. Sizes are odd where tiles are not
// (4-column and 4/8/16-row register blocks, 8x8/16x16 tiles), B is runtime or
// constant (packed by the register-blocked tactics), and batch dims broadcast;
// and the planning of split-K and the cooperative-matrix tactics.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Inputs in [-1, 1): products stay O(sqrt(K)).
// fp16 tolerance for a float product with inner size k of values in [-1, 1):
// storage rounding of the inputs and fp16 accumulation grow like sqrt(k).
VkCase with_k(VkCase c, int64_t k, double scale = 1.0) {
  c.atol_fp16 = (0.01 + 0.005 * std::sqrt(double(k))) * scale;
  c.atol_f16acc32 = c.atol;  // fp32 accumulation of the same (fp16-rounded) products
  c.atol = 1e-4 * scale * std::max(1.0, std::sqrt(double(k)) / 4);
  return c;
}

VkCase matmul(const std::string& name, const Shape& a, const Shape& b, bool const_b, uint32_t seed) {
  const int64_t k = a.back();
  return with_k(make_case(name, "MatMul", {unit_floats(a, seed), unit_floats(b, seed + 1)}, {}, 1,
                          const_b ? std::set<size_t>{1} : std::set<size_t>{}),
                k);
}

std::vector<VkCase> matmul_cases() {
  std::vector<VkCase> cases;
  cases.push_back(matmul("MatMul 33x20 * 20x17", {33, 20}, {20, 17}, false, 1));
  cases.push_back(matmul("MatMul 64x48 * 48x32 runtime B", {64, 48}, {48, 32}, false, 3));
  cases.push_back(matmul("MatMul 37x19 * 19x30 const B", {37, 19}, {19, 30}, true, 5));
  cases.push_back(matmul("MatMul 128x64 * 64x96 const B", {128, 64}, {64, 96}, true, 7));
  cases.push_back(matmul("MatMul [3,17,24] * 24x12 const B (batches fold into rows)", {3, 17, 24}, {24, 12}, true, 9));
  cases.push_back(matmul("MatMul [2,1,5,8] * [3,8,12] broadcast batch", {2, 1, 5, 8}, {3, 8, 12}, false, 11));
  cases.push_back(matmul("MatMul [2,1,5,8] * [3,8,10] broadcast batch const B", {2, 1, 5, 8}, {3, 8, 10}, true, 13));
  cases.push_back(matmul("MatMul [4,9,16] * [4,16,7]", {4, 9, 16}, {4, 16, 7}, false, 15));
  cases.push_back(matmul("MatMul [4,9,16] * [4,16,8] const B", {4, 9, 16}, {4, 16, 8}, true, 17));
  cases.push_back(matmul("MatMul 9x16 * [3,16,8] (A broadcast)", {9, 16}, {3, 16, 8}, false, 19));
  cases.push_back(matmul("MatMul [3,1,6,5] * [1,2,5,4] (both broadcast)", {3, 1, 6, 5}, {1, 2, 5, 4}, false, 21));
  cases.push_back(matmul("MatMul 1-D [24] * 24x20 const B", {24}, {24, 20}, true, 23));
  cases.push_back(matmul("MatMul 1-D [16] * [2,3,16,8]", {16}, {2, 3, 16, 8}, false, 25));
  cases.push_back(matmul("MatMul 7x13 * 1-D [13]", {7, 13}, {13}, false, 27));
  cases.push_back(matmul("MatMul 7x12 * 1-D [12] const B", {7, 12}, {12}, true, 29));
  cases.push_back(matmul("MatMul 1-D [40] * 1-D [40]", {40}, {40}, false, 31));
  cases.push_back(matmul("MatMul [1,1,64] * 64x40 const B (GEMV)", {1, 1, 64}, {64, 40}, true, 33));
  cases.push_back(matmul("MatMul 1x36 * 36x24 runtime B (GEMV)", {1, 36}, {36, 24}, false, 35));
  cases.push_back(matmul("MatMul [2,1,32] * [2,32,12] (GEMV batches)", {2, 1, 32}, {2, 32, 12}, false, 37));
  cases.push_back(matmul("MatMul 300x64 * 64x100 const B (many workgroups)", {300, 64}, {64, 100}, true, 39));
  cases.push_back(matmul("MatMul 3x0 * 0x5 (K = 0)", {3, 0}, {0, 5}, false, 41));
  // Deep K over few output tiles: what split-K serves.
  cases.push_back(matmul("MatMul 24x1024 * 1024x20 const B (deep K)", {24, 1024}, {1024, 20}, true, 45));
  cases.push_back(matmul("MatMul [2,8,520] * [2,520,12] deep K batched", {2, 8, 520}, {2, 520, 12}, false, 47));
  cases.push_back(matmul("MatMul 130x36 * 36x136 runtime B (tiles past 128)", {130, 36}, {36, 136}, false, 49));
  // Nine row tiles of 128 by three column tiles: the _g8 forms' bands of eight row tiles (gemm_tile),
  // a whole band and a band of one.
  cases.push_back(matmul("MatMul 1152x16 * 16x264 runtime B (row tiles in bands)", {1152, 16}, {16, 264}, false, 51));
  {
    VkCase c = matmul("MatMul float16 tensors 20x24 * 24x16", {20, 24}, {24, 16}, false, 43);
    for (auto& [name, t] : c.inputs) t = t.cast(DType::Float16);
    cases.push_back(c);
  }
  return cases;
}

// Gemm with attributes; `c` is the shape of C (nullopt: no C).
VkCase gemm(const std::string& name, int64_t m, int64_t k, int64_t n, bool trans_a, bool trans_b, float alpha,
            float beta, std::optional<Shape> c_shape, std::set<size_t> constants, uint32_t seed) {
  Attrs attrs;
  if (trans_a) attrs["transA"] = int_attr(1);
  if (trans_b) attrs["transB"] = int_attr(1);
  if (alpha != 1.0f) attrs["alpha"] = float_attr(alpha);
  if (beta != 1.0f) attrs["beta"] = float_attr(beta);
  const Shape a = trans_a ? Shape{k, m} : Shape{m, k};
  const Shape b = trans_b ? Shape{n, k} : Shape{k, n};
  std::vector<std::optional<Tensor>> inputs = {unit_floats(a, seed), unit_floats(b, seed + 1)};
  if (c_shape) inputs.push_back(unit_floats(*c_shape, seed + 2));
  const double scale = std::max({1.0, double(std::abs(alpha)), double(std::abs(beta))});
  return with_k(make_case(name, "Gemm", inputs, attrs, 1, constants), k, scale);
}

std::vector<VkCase> gemm_cases() {
  std::vector<VkCase> cases;
  cases.push_back(gemm("Gemm 20x25 * 25x30", 20, 25, 30, false, false, 1, 1, std::nullopt, {}, 101));
  cases.push_back(gemm("Gemm transA transB alpha beta C[N] const B, C", 19, 24, 21, true, true, 0.5f, 2.0f, Shape{21},
                       {1, 2}, 103));
  cases.push_back(
      gemm("Gemm Linear transB const B, runtime C[1,N]", 33, 40, 36, false, true, 1, 1, Shape{1, 36}, {1}, 105));
  cases.push_back(gemm("Gemm transA C[M,1] beta", 17, 12, 20, true, false, 1, -1.5f, Shape{17, 1}, {}, 107));
  cases.push_back(gemm("Gemm scalar C const", 10, 8, 12, false, false, 1.25f, 0.75f, Shape{}, {2}, 109));
  cases.push_back(gemm("Gemm C[M,N] runtime, transB runtime", 23, 16, 9, false, true, 1, 0.5f, Shape{23, 9}, {}, 111));
  cases.push_back(gemm("Gemm C[M,N] beta 0", 8, 16, 8, false, false, 1, 0.0f, Shape{8, 8}, {2}, 113));
  cases.push_back(
      gemm("Gemm M=1 Linear transB const B, C[N] (GEMV)", 1, 64, 50, false, true, 1, 1, Shape{50}, {1, 2}, 115));
  cases.push_back(gemm("Gemm transA deep K beta C[M,N]", 9, 600, 11, true, false, 1, 0.5f, Shape{9, 11}, {}, 119));
  cases.push_back(gemm("Gemm alpha beta C[N] const B and C, N % 4 == 3 (a bias per column)", 20, 24, 23, false, false,
                       1.5f, 0.5f, Shape{23}, {1, 2}, 121));
  cases.push_back(
      gemm("Gemm 64x72 * 72x100 alpha const B", 64, 72, 100, false, false, 2.0f, 1, Shape{100}, {1, 2}, 117));
  return cases;
}

std::vector<VkCase> integer_cases() {
  std::vector<VkCase> cases;
  // MatMulInteger: zero points one value, per row (A) or per column (B), constant or runtime.
  cases.push_back(make_case("MatMulInteger uint8 5x7 * 7x6 scalar zero points", "MatMulInteger",
                            {integers<uint8_t>({5, 7}, 201, 0, 255), integers<uint8_t>({7, 6}, 202, 0, 255),
                             scalar_of<uint8_t>(128), scalar_of<uint8_t>(3)},
                            {}, 1, {2, 3}));
  cases.push_back(make_case("MatMulInteger int8 [2,5,9] * 9x4 per-row and per-column zero points", "MatMulInteger",
                            {integers<int8_t>({2, 5, 9}, 203, -128, 127), integers<int8_t>({9, 4}, 204, -128, 127),
                             integers<int8_t>({5}, 205, -10, 10), integers<int8_t>({4}, 206, -10, 10)},
                            {}, 1, {2, 3}));
  cases.push_back(make_case("MatMulInteger uint8 * int8 no zero points, const B", "MatMulInteger",
                            {integers<uint8_t>({6, 11}, 207, 0, 255), integers<int8_t>({11, 5}, 208, -128, 127)}, {}, 1,
                            {1}));
  cases.push_back(make_case("MatMulInteger [2,1,3,8] * [3,8,5] broadcast, runtime zero points", "MatMulInteger",
                            {integers<uint8_t>({2, 1, 3, 8}, 209, 0, 255), integers<uint8_t>({3, 8, 5}, 210, 0, 255),
                             scalar_of<uint8_t>(100), integers<uint8_t>({5}, 211, 0, 255)}));
  cases.push_back(make_case(
      "MatMulInteger 1-D [9] * 9x70", "MatMulInteger",
      {integers<int8_t>({9}, 212, -128, 127), integers<int8_t>({9, 70}, 213, -128, 127), scalar_of<int8_t>(-3)}, {}, 1,
      {2}));

  // QLinearMatMul: multiplier 0.5 makes ties (round half to even) and both ends saturate.
  auto qlinear = [](const std::string& name, Tensor a, Tensor b, float a_scale, float b_scale, float y_scale,
                    Tensor a_zp, Tensor b_zp, Tensor y_zp, std::set<size_t> constants) {
    return make_case(name, "QLinearMatMul",
                     {std::move(a), scalar_of<float>(a_scale), std::move(a_zp), std::move(b), scalar_of<float>(b_scale),
                      std::move(b_zp), scalar_of<float>(y_scale), std::move(y_zp)},
                     {}, 1, constants);
  };
  cases.push_back(qlinear("QLinearMatMul uint8 6x10 * 10x7 ties", integers<uint8_t>({6, 10}, 301, 0, 255),
                          integers<uint8_t>({10, 7}, 302, 0, 255), 0.25f, 0.5f, 0.25f, scalar_of<uint8_t>(120),
                          scalar_of<uint8_t>(130), scalar_of<uint8_t>(128), {1, 2, 4, 5, 6, 7}));
  cases.push_back(qlinear("QLinearMatMul uint8 small scale saturates", integers<uint8_t>({6, 10}, 303, 0, 255),
                          integers<uint8_t>({10, 7}, 304, 0, 255), 0.02f, 0.03f, 0.001f, scalar_of<uint8_t>(120),
                          scalar_of<uint8_t>(130), scalar_of<uint8_t>(100), {1, 2, 4, 5, 6, 7}));
  cases.push_back(qlinear("QLinearMatMul int8 [2,4,12] * 12x5 const B", integers<int8_t>({2, 4, 12}, 305, -128, 127),
                          integers<int8_t>({12, 5}, 306, -128, 127), 0.05f, 0.02f, 0.1f, scalar_of<int8_t>(-5),
                          scalar_of<int8_t>(7), scalar_of<int8_t>(-20), {1, 2, 3, 4, 5, 6, 7}));
  cases.push_back(qlinear("QLinearMatMul int8 runtime zero points", integers<int8_t>({5, 8}, 307, -128, 127),
                          integers<int8_t>({8, 9}, 308, -128, 127), 0.1f, 0.1f, 0.3f, scalar_of<int8_t>(4),
                          scalar_of<int8_t>(-4), scalar_of<int8_t>(0), {1, 4, 6, 7}));

  // MatMul and Gemm on integer tensors (exact, gemm.naive.f32 only).
  cases.push_back(
      make_case("MatMul int32 5x6 * 6x7", "MatMul",
                {integers<int32_t>({5, 6}, 401, -1000, 1000), integers<int32_t>({6, 7}, 402, -1000, 1000)}));
  cases.push_back(make_case(
      "MatMul int64 [2,3,4] * [4,5] const B", "MatMul",
      {integers<int64_t>({2, 3, 4}, 403, -1000, 1000), integers<int64_t>({4, 5}, 404, -1000, 1000)}, {}, 1, {1}));
  {
    Attrs attrs;
    attrs["transB"] = int_attr(1);
    cases.push_back(make_case("Gemm int32 transB C[N]", "Gemm",
                              {integers<int32_t>({4, 6}, 405, -100, 100), integers<int32_t>({5, 6}, 406, -100, 100),
                               integers<int32_t>({5}, 407, -100, 100)},
                              attrs));
  }
  return cases;
}

TEST(GemmTactics, SplitKServesFewTilesOfDeepK) {
  TacticPlanner p("MatMul", 13);
  p.input(DType::Float32, {24, 1024});
  p.input(DType::Float32, {1024, 20});
  p.output(DType::Float32, {24, 20});
  std::string why;
  const std::optional<LayerPlan> plan = p.plan("gemm.smem32x32_splitk.f32", why);
  ASSERT_TRUE(plan) << why;
  ASSERT_EQ(plan->dispatches.size(), 2u);  // partial sums, then their reduction, which writes the output
  EXPECT_EQ(plan->dispatches[0].shader, "gemm/smem.f32");
  EXPECT_EQ(plan->dispatches[0].bindings[3], BindingRef::scratch(0));
  EXPECT_EQ(plan->dispatches[0].groups[2], 8u);  // 1024 / 128 splits of one batch
  EXPECT_EQ(plan->dispatches[1].shader, "gemm/splitk_reduce.f32");
  EXPECT_EQ(plan->dispatches[1].bindings[3], BindingRef::output(0));
  EXPECT_EQ(plan->scratch_bytes, std::vector<uint64_t>{8 * 24 * 20 * 4});

  TacticPlanner wide("MatMul", 13);
  wide.input(DType::Float32, {512, 1024});
  wide.input(DType::Float32, {1024, 512});
  wide.output(DType::Float32, {512, 512});
  EXPECT_FALSE(wide.plan("gemm.smem32x32_splitk.f32", why));
  EXPECT_NE(why.find("already spreads over 256 workgroups"), std::string::npos) << why;
}

TEST(GemmTactics, CooperativeMatrixNeedsTheFeatureAndPinsTheSubgroupSize) {
  TacticPlanner p("MatMul", 13);
  p.input(DType::Float32, {100, 64});
  p.input(DType::Float32, {64, 72});
  p.output(DType::Float32, {100, 72});
  p.device().max_shared_memory_bytes = 48 << 10;
  std::string why;
  EXPECT_FALSE(p.plan("gemm.coopmat64x64.f16acc32", why));
  EXPECT_NE(why.find("cooperative matrices"), std::string::npos) << why;
  EXPECT_EQ(TacticRegistry::builtin().find("gemm.coopmat64x64.f16acc32")->device_feature, "cooperative-matrix");

  p.device().cooperative_matrix = true;
  p.device().cooperative_matrix_shapes = {{16, 16, 16, true}};
  EXPECT_FALSE(p.plan("gemm.coopmat64x64.f16", why));  // fp16 accumulators are not offered
  EXPECT_NE(why.find("fp16 accumulators"), std::string::npos) << why;
  EXPECT_FALSE(p.plan("gemm.coopmat64x64.f16acc32", why));
  EXPECT_NE(why.find("subgroup size control"), std::string::npos) << why;

  p.device().subgroup_size = 32;
  p.device().subgroup_size_control = true;
  p.device().min_subgroup_size = p.device().max_subgroup_size = 32;
  const std::optional<LayerPlan> plan = p.plan("gemm.coopmat64x64.f16acc32", why);
  ASSERT_TRUE(plan) << why;
  const Dispatch& d = plan->dispatches.at(0);
  EXPECT_EQ(d.shader, "gemm/coopmat.f16acc32");
  EXPECT_EQ(d.subgroup_size, 32u);
  EXPECT_EQ(d.spec.at(0), (SpecValue{0, 4 * 32}));  // 2 x 2 subgroups
  EXPECT_EQ(d.groups, (std::array<uint32_t, 3>{2, 2, 1}));
  // 128 x 64 needs 44 KiB of shared memory (fp32 accumulator tile).
  p.device().max_shared_memory_bytes = 32 << 10;
  EXPECT_FALSE(p.plan("gemm.coopmat128x64.f16acc32", why));
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
}

}  // namespace

// Det: a batch of well-conditioned matrices (pivoting), a singular one, 1x1 and a 5x5.
std::vector<VkCase> det_cases() {
  std::vector<VkCase> cases;
  const auto det = [&](const std::string& name, Tensor x) {
    VkCase c = make_case(name, "Det", {std::move(x)});
    c.opset = 11;
    c.atol = 1e-3;
    cases.push_back(std::move(c));
  };
  det("Det 2x3 of 3x3", random_floats({2, 3, 3, 3}, 400));
  det("Det singular 3x3", Tensor::from_vector<float>({3, 3}, {1, 2, 3, 2, 4, 6, 0, 1, 5}));
  det("Det 4 of 1x1", random_floats({4, 1, 1}, 401));
  det("Det 5x5", random_floats({5, 5}, 402, -1.0f, 1.0f));
  return cases;
}

VKG_VK_CASES(gemm) {
  std::vector<VkCase> cases = matmul_cases();
  for (auto* more : {&gemm_cases, &integer_cases, &det_cases}) {
    for (VkCase& c : more()) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace vkg::test
