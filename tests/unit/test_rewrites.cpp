// Rewrite kinds and their switches (runtime/engine/rewrites.h), the rewrites the graph optimizer
// records, and the search of `debug rewrites` (debug/rewrite_search.h) on simulated builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "debug/rewrite_search.h"
#include "runtime/core/error.h"
#include "runtime/engine/graph_optimizer.h"
#include "tests/unit/op_test_util.h"

namespace vkg {
namespace {

TEST(RewriteSwitch, ParsesKindsAndNodes) {
  for (RewriteKind k : all_rewrite_kinds()) {
    EXPECT_EQ(parse_rewrite_kind(rewrite_kind_name(k)), k);
    EXPECT_EQ(parse_rewrite_switch(rewrite_kind_name(k)), (RewriteSwitch{k, ""}));
  }
  EXPECT_EQ(parse_rewrite_switch("fuse-activation:relu1"), (RewriteSwitch{RewriteKind::FuseActivation, "relu1"}));
  // A node name may hold ':' after the first one.
  EXPECT_EQ(parse_rewrite_switch("fold-bias:a:b").node, "a:b");
  EXPECT_EQ(rewrite_switch_text({RewriteKind::PostScale, "s"}), "post-scale:s");
}

TEST(RewriteSwitch, UnknownKindListsTheKinds) {
  try {
    parse_rewrite_switch("fuse-everything:x");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown rewrite kind 'fuse-everything'"), std::string::npos) << what;
    EXPECT_NE(what.find(rewrite_kind_list()), std::string::npos) << what;
  }
  EXPECT_THROW(parse_rewrite_switch("fuse-activation:"), Error);
  EXPECT_THROW(parse_rewrite_switch(""), Error);
}

TEST(RewriteFilter, DisablesAKindEverywhereOrWhereANodeIsInvolved) {
  RewriteFilter f;
  EXPECT_TRUE(f.allows(RewriteKind::FuseActivation, "relu", {"conv", "relu"}));
  f.disabled = {{RewriteKind::FuseActivation, "conv"}};
  EXPECT_FALSE(f.allows(RewriteKind::FuseActivation, "relu", {"conv", "relu"}));  // the absorbing node
  EXPECT_TRUE(f.allows(RewriteKind::FuseActivation, "relu2", {"conv2", "relu2"}));
  EXPECT_TRUE(f.allows(RewriteKind::FoldBias, "add", {"conv", "add"}));  // another kind
  f.disabled = {{RewriteKind::ReformatFp32Read, "x"}};
  EXPECT_FALSE(f.allows(RewriteKind::ReformatFp32Read, "x", {"add"}));  // the subject (a tensor)
  f.disabled = {{RewriteKind::FoldBias, ""}};
  EXPECT_FALSE(f.allows(RewriteKind::FoldBias, "add", {"conv", "add"}));
  f = RewriteFilter{false, {}};  // --no-fusion
  for (RewriteKind k : all_rewrite_kinds()) EXPECT_FALSE(f.allows(k, "n", {"n"}));
}

// x -> Conv(w, b) -> c -> BatchNormalization -> n -> Relu -> r -> Reshape -> y, over 2 channels.
struct ConvBnRelu : ::testing::Test {
  std::vector<Node> nodes = {test::graph_node("conv", "Conv", {"x", "w", "b"}, {"c"}),
                             test::graph_node("bn", "BatchNormalization", {"c", "s", "o", "m", "v"}, {"n"}),
                             test::graph_node("relu", "Relu", {"n"}, {"r"}),
                             test::graph_node("reshape", "Reshape", {"r", "shape"}, {"y"})};
  std::map<std::string, Tensor> constants = {
      {"w", Tensor::from_vector<float>({2, 1, 1, 1}, {1, 2})}, {"b", Tensor::from_vector<float>({2}, {0, 1})},
      {"s", Tensor::from_vector<float>({2}, {1, 1})},          {"o", Tensor::from_vector<float>({2}, {0, 0})},
      {"m", Tensor::from_vector<float>({2}, {0, 0})},          {"v", Tensor::from_vector<float>({2}, {1, 1})},
      {"shape", Tensor::from_vector<int64_t>({1}, {-1})}};

  OptimizedGraph optimize(RewriteFilter filter) {
    std::vector<const Node*> in;
    for (const Node& n : nodes) in.push_back(&n);
    GraphOptimizerOptions options;
    options.rewrites = std::move(filter);
    options.is_float = [](const std::string&) { return true; };
    options.shape_of = [](const std::string&) -> std::optional<Shape> { return Shape{1, 2, 4, 4}; };
    return optimize_graph(
        in,
        [&](const std::string& name) -> const Tensor* {
          auto it = constants.find(name);
          return it == constants.end() ? nullptr : &it->second;
        },
        options);
  }
  static std::vector<std::string> layer_names(const OptimizedGraph& g) {
    std::vector<std::string> names;
    for (const OptimizedLayer& l : g.layers) names.push_back(l.node.name);
    return names;
  }
  static std::vector<std::string> ids(const OptimizedGraph& g) {
    std::vector<std::string> out;
    for (const AppliedRewrite& r : g.rewrites) out.push_back(r.id());
    return out;
  }
};

TEST_F(ConvBnRelu, RecordsEveryRewriteWithItsLayerAndNodes) {
  const OptimizedGraph g = optimize({});
  EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv+bn+relu"}));
  EXPECT_EQ(ids(g), (std::vector<std::string>{"noop-alias:reshape", "fold-batchnorm:bn", "fuse-activation:relu"}));
  const AppliedRewrite& act = g.rewrites[2];
  EXPECT_EQ(act.layer, "conv+bn+relu");
  EXPECT_EQ(act.nodes, (std::vector<std::string>{"conv", "relu"}));
  EXPECT_EQ(act.describe(), "fuse-activation at layer 'conv+bn+relu' (nodes conv, relu)");
  EXPECT_EQ(g.rewrites[0].describe(), "noop-alias of 'reshape' (nodes reshape)");
}

TEST_F(ConvBnRelu, ADisabledKindDoesNotApply) {
  OptimizedGraph g = optimize({true, {{RewriteKind::FuseActivation, ""}}});
  EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv+bn", "relu"}));
  EXPECT_EQ(ids(g), (std::vector<std::string>{"noop-alias:reshape", "fold-batchnorm:bn"}));
  // By either node it would involve.
  for (const char* n : {"relu", "conv"}) {
    g = optimize({true, {{RewriteKind::FuseActivation, n}}});
    EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv+bn", "relu"})) << n;
  }
  g = optimize({true, {{RewriteKind::FuseActivation, "other"}}});
  EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv+bn+relu"}));
  // Without the fold, the BatchNormalization is a layer, and nothing follows a Conv to fuse.
  g = optimize({true, {{RewriteKind::FoldBatchNorm, "bn"}}});
  EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv", "bn", "relu"}));
  g = optimize({true, {{RewriteKind::NoopAlias, ""}}});
  EXPECT_EQ(layer_names(g), (std::vector<std::string>{"conv+bn+relu", "reshape"}));
  EXPECT_TRUE(g.aliases.empty());
}

TEST_F(ConvBnRelu, NoFusionIsEveryKindDisabled) {
  RewriteFilter every;
  for (RewriteKind k : all_rewrite_kinds()) every.disabled.push_back({k, ""});
  const OptimizedGraph all_off = optimize(every), no_fusion = optimize({false, {}});
  EXPECT_EQ(layer_names(all_off), layer_names(no_fusion));
  EXPECT_EQ(layer_names(no_fusion), (std::vector<std::string>{"conv", "bn", "relu", "reshape"}));
  EXPECT_TRUE(all_off.rewrites.empty());
  EXPECT_TRUE(no_fusion.rewrites.empty());
}

// Counts the checks of minimal_cause against a set of items that must all be removed to pass.
struct CauseCase {
  size_t n;
  std::set<size_t> cause;
};

TEST(MinimalCause, FindsOneOrSeveralCulpritsInLogarithmicChecks) {
  for (const CauseCase& c : {CauseCase{1, {0}}, CauseCase{16, {11}}, CauseCase{17, {0}}, CauseCase{17, {16}},
                             CauseCase{40, {3, 30}}}) {
    int checks = 0;
    const auto found = debug::minimal_cause(c.n, [&](const std::vector<size_t>& removed) {
      ++checks;
      return std::all_of(c.cause.begin(), c.cause.end(), [&](size_t i) {
        return std::find(removed.begin(), removed.end(), i) != removed.end();
      });
    });
    ASSERT_TRUE(found.has_value()) << c.n;
    EXPECT_EQ(std::set<size_t>(found->begin(), found->end()), c.cause) << c.n;
    int log2n = 0;
    while ((size_t(1) << log2n) < c.n) ++log2n;
    EXPECT_LE(checks, int(c.cause.size()) * (log2n + 1)) << c.n;
  }
  // Nothing passes: nothing found.
  EXPECT_FALSE(debug::minimal_cause(5, [](const std::vector<size_t>&) { return false; }).has_value());
}

// Simulated builds: `applied` rewrites with every rewrite on; the engine fails while any rewrite
// of `faulty` applies.
struct FakeBuilds {
  std::vector<AppliedRewrite> applied;
  std::vector<RewriteSwitch> faulty;
  int builds = 0;
  bool fails_without_rewrites = false;

  debug::RewriteTrial operator()(const std::vector<RewriteSwitch>& disabled, bool all_off) {
    ++builds;
    debug::RewriteTrial t;
    for (const AppliedRewrite& r : applied) {
      const bool off = all_off || std::any_of(disabled.begin(), disabled.end(),
                                              [&](const RewriteSwitch& s) { return rewrite_matches(s, r); });
      if (!off) t.applied.push_back(r);
    }
    const bool faulty_applied = std::any_of(t.applied.begin(), t.applied.end(), [&](const AppliedRewrite& r) {
      return std::any_of(faulty.begin(), faulty.end(), [&](const RewriteSwitch& s) { return rewrite_matches(s, r); });
    });
    t.passed = !faulty_applied && !(all_off && fails_without_rewrites);
    if (!disabled.empty() || all_off) t.applied.clear();  // only the first build's are read
    return t;
  }
};

std::vector<AppliedRewrite> many_rewrites() {
  std::vector<AppliedRewrite> out;
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    out.push_back({RewriteKind::NoopAlias, "reshape" + n, "", {"reshape" + n}});
    out.push_back({RewriteKind::FoldBias, "add" + n, "conv" + n + "+add" + n + "+relu" + n, {"conv" + n, "add" + n}});
    out.push_back(
        {RewriteKind::FuseActivation, "relu" + n, "conv" + n + "+add" + n + "+relu" + n, {"conv" + n, "relu" + n}});
  }
  out.push_back({RewriteKind::ConcatElimination, "cat", "", {"cat", "conv0", "conv1"}});
  return out;
}

TEST(RewriteSearch, NamesTheOneFaultyInstance) {
  FakeBuilds fake{many_rewrites(), {{RewriteKind::FuseActivation, "relu5"}}};
  const debug::RewriteSearchResult r = debug::find_faulty_rewrites(std::ref(fake));
  ASSERT_EQ(r.outcome, debug::RewriteSearchResult::Outcome::Found);
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].id(), "fuse-activation:relu5");
  EXPECT_EQ(r.culprits[0].layer, "conv5+add5+relu5");
  // 2 (all on, all off) + kinds: log2(4) + 1 + instances: log2(8) + 1.
  EXPECT_LE(fake.builds, 2 + 3 + 4);
}

TEST(RewriteSearch, ASetOfRewritesTogether) {
  FakeBuilds fake{many_rewrites(), {{RewriteKind::FoldBias, "add2"}, {RewriteKind::ConcatElimination, ""}}};
  const debug::RewriteSearchResult r = debug::find_faulty_rewrites(std::ref(fake));
  ASSERT_EQ(r.outcome, debug::RewriteSearchResult::Outcome::Found);
  std::set<std::string> ids;
  for (const AppliedRewrite& c : r.culprits) ids.insert(c.id());
  EXPECT_EQ(ids, (std::set<std::string>{"fold-bias:add2", "concat-elimination:cat"}));
}

TEST(RewriteSearch, NothingToFindAndNotARewrite) {
  FakeBuilds passing{many_rewrites(), {}};
  EXPECT_EQ(debug::find_faulty_rewrites(std::ref(passing)).outcome, debug::RewriteSearchResult::Outcome::NoFailure);
  EXPECT_EQ(passing.builds, 1);
  FakeBuilds always{many_rewrites(), {{RewriteKind::FoldBias, "add1"}}, 0, true};
  EXPECT_EQ(debug::find_faulty_rewrites(std::ref(always)).outcome, debug::RewriteSearchResult::Outcome::NotRewrite);
  EXPECT_EQ(always.builds, 2);
}

}  // namespace
}  // namespace vkg
