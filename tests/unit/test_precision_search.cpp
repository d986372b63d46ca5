// `debug precision`'s searches as library code, with a shell check that passes
// when the marked layers include a given set, and the fp16-risk analysis that
// seeds the minimal search.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "debug/fp16_risk.h"
#include "debug/precision_search.h"
#include "tests/unit/test_data_util.h"

namespace vkg::debug {
namespace {

namespace fs = std::filesystem;

// Runs minimal_precision_set over `n` layers with a check that passes exactly
// when every layer of `needed` is marked; counts the checks.
class MinimalSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    cwd_ = fs::current_path();
    fs::current_path(tmp_.path());
  }
  void TearDown() override { fs::current_path(cwd_); }

  std::optional<std::vector<size_t>> search(size_t n, const std::vector<size_t>& needed,
                                            const std::vector<double>& risk, int* checks = nullptr) {
    std::string script = "true";
    for (size_t i : needed) script += " && grep -qx " + std::to_string(i) + " marked.txt";
    IterationOptions o;
    o.check.command = {"sh", "-c", script};
    IterationLoop loop("precision", o);
    std::vector<std::string> layers;
    for (size_t i = 0; i < n; ++i) layers.push_back("layer" + std::to_string(i));
    const auto result = minimal_precision_set(layers, risk, "fp32", loop, [&](const std::vector<size_t>& marked) {
      std::ofstream out("marked.txt");
      for (size_t i : marked) out << i << "\n";
    });
    if (checks) *checks = loop.iterations();
    return result;
  }

  test::TempDir tmp_;
  fs::path cwd_;
};

TEST_F(MinimalSearch, ExactRiskTakesOneCheckPlusOnePerLayer) {
  std::vector<double> risk(12, 0.0);
  risk[3] = 1.5;
  risk[7] = 1.2;
  int checks = 0;
  EXPECT_EQ(search(12, {3, 7}, risk, &checks), (std::vector<size_t>{3, 7}));
  EXPECT_EQ(checks, 3);
}

TEST_F(MinimalSearch, RiskThatMissesALayerStillEndsOneMinimal) {
  // The analysis flags 3 (overflow) and 5 (underflow) but the check also needs 9:
  // the seed fails, all layers pass, and dropping finds {3, 9}.
  std::vector<double> risk(16, 0.0);
  risk[3] = 1.5;
  risk[5] = 0.2;
  int checks = 0;
  EXPECT_EQ(search(16, {3, 9}, risk, &checks), (std::vector<size_t>{3, 9}));
  EXPECT_LE(checks, 16);
}

TEST_F(MinimalSearch, ExtraRiskIsDropped) {
  std::vector<double> risk(10, 0.0);
  for (size_t i : {1, 2, 4, 8}) risk[i] = 1.1;
  risk[6] = 0.5;
  EXPECT_EQ(search(10, {2, 8}, risk), (std::vector<size_t>{2, 8}));
}

TEST_F(MinimalSearch, WithoutRiskNoLayerIsTriedFirst) {
  int checks = 0;
  EXPECT_EQ(search(8, {}, std::vector<double>(8, 0.0), &checks), std::vector<size_t>{});
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(search(8, {6}, std::vector<double>(8, 0.0)), (std::vector<size_t>{6}));
}

TEST_F(MinimalSearch, NothingPassingIsNullopt) {
  // Layer 20 does not exist, so no configuration passes.
  std::vector<double> risk(6, 0.0);
  risk[2] = 2;
  int checks = 0;
  EXPECT_EQ(search(6, {20}, risk, &checks), std::nullopt);
  EXPECT_EQ(checks, 2);  // the seed, then every layer
}

TEST_F(MinimalSearch, EveryAnswerIsOneMinimal) {
  // Any needed set and any risk: the answer is exactly the needed set (the check is monotonic).
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const size_t n = 4 + rng() % 12;
    std::set<size_t> needed;
    for (size_t k = rng() % 4; k > 0; --k) needed.insert(rng() % n);
    std::vector<double> risk(n, 0.0);
    for (double& r : risk) r = std::vector<double>{0, 0, 0, 0.3, 1.4}[rng() % 5];
    EXPECT_EQ(search(n, {needed.begin(), needed.end()}, risk), (std::vector<size_t>{needed.begin(), needed.end()}))
        << "trial " << trial;
  }
}

TEST(Fp16Risk, FlagsOverflowAndSignificantUnderflowOnly) {
  // x -> Mul(big) -> Mul(back) -> Softmax; a second branch that lives near zero.
  Graph g;
  g.opset = 17;
  ValueInfo x;
  x.name = "x";
  x.dtype = DType::Float32;
  x.shape = std::vector<Dim>{Dim{2, ""}, Dim{4, ""}};
  g.inputs = {x};
  g.initializers["big"] = Tensor::scalar<float>(1e6f);
  g.initializers["back"] = Tensor::scalar<float>(1e-6f);
  g.initializers["tiny"] = Tensor::scalar<float>(1e-9f);
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> ins) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(ins);
    n.outputs = {name};
    g.nodes.push_back(n);
  };
  node("up", "Mul", {"x", "big"});
  node("down", "Mul", {"up", "back"});
  node("soft", "Softmax", {"down"});
  node("near_zero", "Mul", {"x", "tiny"});
  node("", "Relu", {"near_zero"});
  g.nodes.back().outputs = {"Relu_4"};
  g.outputs.resize(2);
  g.outputs[0].name = "soft";
  g.outputs[1].name = "Relu_4";

  TensorMap feed;
  feed["x"] = Tensor::from_vector<float>({2, 4}, {0.5f, 1, 2, 3, 0.25f, 0.75f, 1.5f, 0.1f});
  const Fp16RiskAnalysis analysis = analyze_fp16_risk(g, {feed, feed});
  std::map<std::string, Fp16Risk> risk;
  for (const NodeRisk& n : analysis.nodes()) risk[n.node] = n.risk();
  EXPECT_EQ(risk["up"], Fp16Risk::Overflow);
  EXPECT_EQ(risk["down"], Fp16Risk::Overflow);  // it reads the overflowing tensor
  EXPECT_EQ(risk["soft"], Fp16Risk::None);
  EXPECT_EQ(risk["near_zero"], Fp16Risk::Underflow);
  EXPECT_EQ(risk["Relu_4"], Fp16Risk::Underflow);  // unnamed: the builder's name for it
  const NodeRisk& up = analysis.nodes()[0];
  ASSERT_EQ(up.tensors.size(), 3u);  // x, big, and the output
  EXPECT_EQ(up.tensors[2].overflow, 16u);  // every element of both runs
  EXPECT_EQ(up.tensors[2].elements, 16u);
  EXPECT_GT(up.score(), 1.0);
  EXPECT_EQ(analysis.at_risk().front()->node, "up");
  const std::string text = fp16_risk_text(analysis, 2);
  EXPECT_NE(text.find("4 of 5 node(s) with float tensors see values fp16 cannot hold"), std::string::npos) << text;
  EXPECT_NE(text.find("output 'up': 16 of 16 value(s) beyond +-65504"), std::string::npos) << text;
  EXPECT_NE(text.find("The other 1 node(s) are fp16-safe"), std::string::npos) << text;
}

}  // namespace
}  // namespace vkg::debug
