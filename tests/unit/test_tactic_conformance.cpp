// Op conformance on Vulkan: every registered tactic, in its precision, against
// the reference backend on every registered case (tests/unit/vk_cases_*.cpp)
// of its ops that it can serve, on lavapipe with the validation layer on. A
// tactic that serves no case fails: every tactic must be exercised.
// VKGRAPHY_CONFORMANCE_FILTER=<glob> limits the run to matching tactic names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/reference/kernel.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// The case classes each tactic may decline (tests/unit/tactic_declines.txt):
// "<tactic glob>  <class>...  # why". A tactic claims to serve every class not
// listed for it.
struct DeclineRule {
  std::string glob;
  std::set<std::string> classes;
  std::string why;
};

const std::vector<DeclineRule>& decline_rules() {
  static const std::vector<DeclineRule> rules = [] {
    const std::string path = std::string(VKGRAPHY_SOURCE_DIR) + "/tests/unit/tactic_declines.txt";
    std::ifstream in(path);
    VKG_CHECK(in, "cannot open " << path);
    std::vector<DeclineRule> out;
    std::string line;
    while (std::getline(in, line)) {
      const size_t hash = line.find('#');
      std::istringstream words(line.substr(0, hash));
      DeclineRule rule;
      if (!(words >> rule.glob)) continue;
      for (std::string c; words >> c;) rule.classes.insert(c);
      VKG_CHECK(!rule.classes.empty(), path << ": '" << rule.glob << "' lists no class");
      if (hash != std::string::npos) rule.why = line.substr(hash + 1);
      out.push_back(std::move(rule));
    }
    return out;
  }();
  return rules;
}

std::set<std::string> declinable_classes(const std::string& tactic) {
  std::set<std::string> out;
  for (const DeclineRule& r : decline_rules())
    if (glob_match(r.glob, tactic)) out.insert(r.classes.begin(), r.classes.end());
  return out;
}

// A rule's class, or several joined by '+' (all of them): "broadcast+tail".
bool matches_all(const std::string& rule, const std::set<std::string>& classes) {
  size_t start = 0;
  while (true) {
    const size_t plus = rule.find('+', start);
    if (!classes.count(rule.substr(start, plus == std::string::npos ? std::string::npos : plus - start))) return false;
    if (plus == std::string::npos) return true;
    start = plus + 1;
  }
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : " ") + x;
  return out;
}

// .f16acc32 tactics whose plans round values to fp16 on the way, beyond the
// inputs and the output: the extra absolute error they may add. Conformance
// values are O(1) (at most ~10), where fp16's half-ulp is at most 2^-8.
double f16acc32_intermediate_rounding(const std::string& tactic) {
  struct Rule {
    const char* glob;
    double atol;
    const char* why;
  };
  static const Rule rules[] = {
      {"conv.winograd_f23*", 3e-2,
       "transformed input tiles pass through fp16 scratch (measured: 0.013 at 32 channels)"},
      {"batchnorm.*", 4e-3, "the folded scale and shift (x * a + b) are weights, stored in fp16"},
      {"binary.*", 1e-2, "Sum/Mean/Max/Min of 3+ inputs add pairwise through fp16 intermediates"},
  };
  for (const Rule& r : rules)
    if (glob_match(r.glob, tactic)) return r.atol;
  return 0;
}

// Tactics that serve only layers the graph optimizer makes out of several nodes, which no single
// node's reference covers: where their fused patterns run against the reference instead.
const char* fused_only(const std::string& tactic) {
  struct Rule {
    const char* glob;
    const char* tested_by;
  };
  static const Rule rules[] = {
      {"global_pool.gate*",
       "squeeze-and-excitation gates (tests/cli/test_fusion.py, test_squeeze_excitation_gates_run_as_one_layer)"},
      {"conv.transpose_pair*",
       "pairs of ConvTransposes (tests/cli/test_fusion.py, test_two_upsampling_conv_transposes_run_as_one_layer)"},
  };
  for (const Rule& r : rules)
    if (glob_match(r.glob, tactic)) return r.tested_by;
  return nullptr;
}

class TacticConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(TacticConformance, MatchesReference) {
  const Tactic* tactic = TacticRegistry::builtin().find(GetParam());
  ASSERT_NE(tactic, nullptr);
  if (const char* filter = std::getenv("VKGRAPHY_CONFORMANCE_FILTER"); filter && !glob_match(filter, tactic->name))
    GTEST_SKIP() << "not matched by VKGRAPHY_CONFORMANCE_FILTER";
  if (const char* tested_by = fused_only(tactic->name))
    GTEST_SKIP() << tactic->name << " serves only fused layers, run against the reference with " << tested_by;
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  const vk::DeviceInfo& device = test_vk_context()->device().info();
  if (!tactic->device_feature.empty() && !device.has_feature(tactic->device_feature))
    GTEST_SKIP() << tactic->name << " needs the device feature '" << tactic->device_feature << "', which "
                 << device.name << " lacks";

  const std::set<std::string> declinable = declinable_classes(tactic->name);
  const double intermediate_rounding =
      tactic->arith == Arith::F16Acc32 ? f16acc32_intermediate_rounding(tactic->name) : 0.0;
  std::map<std::string, int> served_per_op, cases_per_op, left_to_other_precision;
  std::map<std::string, int> declined_classes;       // declinable class -> cases it explains
  std::map<std::string, int> nonfinite_per_op;       // cases not run: NaN or infinities the device may not keep
  std::map<std::string, int> device_limited_per_op;  // cases beyond the device's limits
  int served = 0, declined = 0, nonfinite_skipped = 0;
  const bool keeps_nan = tactic->arith == Arith::F32 ? device.nan_preserve : device.nan_preserve_fp16;
  for (const VkCase& c : all_vk_cases()) {
    if (std::find(tactic->ops.begin(), tactic->ops.end(), c.node.op_type) == tactic->ops.end()) continue;
    if (!keeps_nan && has_nonfinite_input(c)) {
      ++nonfinite_skipped;
      ++nonfinite_per_op[c.node.op_type];
      continue;
    }
    ++cases_per_op[c.node.op_type];
    VkCaseRun run;
    try {
      run = run_case_with_tactic(c, *tactic);
    } catch (const Error& e) {
      ADD_FAILURE() << tactic->name << " on case '" << c.name << "': " << e.what();
      continue;
    }
    if (!run.served) {
      ++declined;
      // Beyond this device's limits (shared memory, invocations), or a shader without an emulated build:
      // properties of the device, not of the case.
      if (run.why_not.rfind("the device cannot run workgroups of", 0) == 0 ||
          run.why_not.rfind("the emulated cooperative matrices", 0) == 0) {
        ++declined_classes["device-limits"];
        ++device_limited_per_op[c.node.op_type];
        continue;
      }
      const std::set<std::string> classes = case_classes(c);
      std::set<std::string> explained;
      for (const std::string& rule : declinable)
        if (matches_all(rule, classes)) explained.insert(rule);
      for (const std::string& cls : explained) ++declined_classes[cls];
      if (std::any_of(explained.begin(), explained.end(), [](const std::string& r) {
            return r == "int" || r == "max" || r == "nearest" || r.find("int-data") != std::string::npos;
          }))
        ++left_to_other_precision[c.node.op_type];
      EXPECT_FALSE(explained.empty()) << tactic->name << " declines case '" << c.name << "' (classes: " << join(classes)
                                      << "), all of which it claims to serve: " << run.why_not
                                      << "\n(declinable for it: " << join(declinable)
                                      << "; see tests/unit/tactic_declines.txt)";
      continue;
    }
    ++served;
    ++served_per_op[c.node.op_type];
    const std::string diff = compare_case_outputs(c, run, tactic->arith, intermediate_rounding);
    EXPECT_TRUE(diff.empty()) << tactic->name << " on case '" << c.name << "': " << diff;
  }
  if (served == 0 && declined_classes["device-limits"] > 0)
    GTEST_SKIP() << tactic->name << " is beyond " << device.name << "'s limits (or its emulated cooperative matrices)";
  for (const std::string& op : tactic->ops) {
    // An op whose every case is left to another precision's variant (integer
    // data for fp16, max pooling for f16acc32) runs through that variant.
    if (cases_per_op[op] > 0 && left_to_other_precision[op] == cases_per_op[op]) continue;
    if (cases_per_op[op] == 0 && nonfinite_per_op[op] > 0) continue;  // IsNaN, IsInf: every case not run
    if (cases_per_op[op] > 0 && device_limited_per_op[op] == cases_per_op[op]) continue;
    EXPECT_GT(served_per_op[op], 0) << tactic->name << " claims " << op << " but serves none of its "
                                    << cases_per_op[op] << " conformance case(s)";
  }
  std::cout << "[ declines ] " << tactic->name << ": served " << served << ", declined " << declined;
  for (const auto& [cls, n] : declined_classes) std::cout << " " << cls << "(" << n << ")";
  if (nonfinite_skipped > 0)
    std::cout << "; " << nonfinite_skipped << " case(s) with NaN or infinite inputs not run: " << device.name
              << " does not preserve them";
  std::cout << "\n";
  EXPECT_GT(served, 0) << tactic->name << " serves none of the conformance cases of its ops";
}

// The f16acc32 bound tells fp32 accumulation from fp16 accumulation. On sums of
// many positive terms the partial sums grow to hundreds, where fp16's spacing
// is 0.25: each fp16-accumulating (.f16) tactic breaks the bound while its
// .f16acc32 sibling, reading the very same fp16 inputs, keeps it.
TEST(F16Acc32Tolerance, RejectsFp16Accumulation) {
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  const auto positive = [](const Shape& shape, uint32_t seed) { return random_floats(shape, seed, 0.0f, 1.0f); };
  struct Pair {
    std::string base;  // tactic name without the arithmetic suffix
    VkCase c;
  };
  std::vector<Pair> pairs;
  pairs.push_back({"gemm.naive", make_case("MatMul 4x2048 * 2048x8 positive", "MatMul",
                                           {positive({4, 2048}, 1), positive({2048, 8}, 2)})});
  pairs.push_back({"gemm.reg4x4", make_case("MatMul 8x1024 * 1024x16 positive const B", "MatMul",
                                            {positive({8, 1024}, 3), positive({1024, 16}, 4)}, {}, 1, {1})});
  pairs.push_back({"conv.direct", make_case("Conv 1x128x6x6 * 8x128x3x3 positive", "Conv",
                                            {positive({1, 128, 6, 6}, 5), positive({8, 128, 3, 3}, 6)})});
  pairs.push_back({"reduce.row", make_case("ReduceSum 4x4096 positive", "ReduceSum", {positive({4, 4096}, 7)},
                                           {{"axes", ints_attr({1})}})});
  pairs.back().c.opset = 11;
  pairs.push_back({"pool.direct", make_case("AveragePool 32x32 window of 1x4x32x40 positive", "AveragePool",
                                            {positive({1, 4, 32, 40}, 8)}, {{"kernel_shape", ints_attr({32, 32})}})});
  for (Pair& p : pairs) {
    p.c.node.name = "layer";
    SCOPED_TRACE(p.base + " on '" + p.c.name + "'");
    const Tactic* acc32 = TacticRegistry::builtin().find(p.base + ".f16acc32");
    const Tactic* f16 = TacticRegistry::builtin().find(p.base + ".f16");
    ASSERT_TRUE(acc32 != nullptr && f16 != nullptr);
    const VkCaseRun good = run_case_with_tactic(p.c, *acc32);
    ASSERT_TRUE(good.served) << good.why_not;
    EXPECT_EQ(compare_case_outputs(p.c, good, Arith::F16Acc32), "");
    VkCaseRun bad = run_case_with_tactic(p.c, *f16);
    ASSERT_TRUE(bad.served) << bad.why_not;
    bad.reference_f16_inputs = good.reference_f16_inputs;
    const std::string diff = compare_case_outputs(p.c, bad, Arith::F16Acc32);
    EXPECT_NE(diff, "") << f16->name << " passes the f16acc32 bound: it cannot tell fp16 accumulation";
    std::cout << "[ f16acc32 ] " << f16->name << " against the f16acc32 bound: " << diff.substr(0, 160) << "\n";
  }
}

// A tactic's name as a GoogleTest name: "conv.winograd_f23.f16" -> "conv_winograd_f23_f16".
std::string test_name_of(std::string name) {
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

// The shaders with a texel build (`vkgraphy-texel-reads`) run it wherever the device has texel
// buffers, as lavapipe does: their storage-buffer builds pass every case too, both as planned for
// devices without texel buffers and as the builder switches a texel plan to them for a fused
// reformat (with the texel plan's specialization). One tactic per such shader and precision family,
// one test per tactic, so that sharded runs (ctest's unit shards, the sanitizer stage) spread them:
// together they were the longest unit test under ASan (67 s with clang, 164 s at GCC's -Og).
class StorageBufferBuildsOfTexelShaders : public ::testing::TestWithParam<const char*> {};

TEST_P(StorageBufferBuildsOfTexelShaders, MatchReference) {
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  if (!test_vk_context()->device().info().texel_buffers) GTEST_SKIP() << "the device has no texel buffers";
  const char* name = GetParam();
  const Tactic* tactic = TacticRegistry::builtin().find(name);
  ASSERT_NE(tactic, nullptr) << name;
  if (const char* filter = std::getenv("VKGRAPHY_CONFORMANCE_FILTER"); filter && !glob_match(filter, name))
    GTEST_SKIP() << "VKGRAPHY_CONFORMANCE_FILTER";
  int served = 0;
  for (const VkCase& c : all_vk_cases()) {
    if (std::find(tactic->ops.begin(), tactic->ops.end(), c.node.op_type) == tactic->ops.end()) continue;
    for (TexelBuilds mode : {TexelBuilds::PlannedWithout, TexelBuilds::SwitchedToStorage}) {
      const VkCaseRun run = run_case_with_tactic(c, *tactic, mode);
      if (!run.served) continue;
      ++served;
      const double extra = tactic->arith == Arith::F16Acc32 ? f16acc32_intermediate_rounding(name) : 0.0;
      const std::string diff = compare_case_outputs(c, run, tactic->arith, extra);
      EXPECT_TRUE(diff.empty()) << name << (mode == TexelBuilds::PlannedWithout ? " (planned without" : " (switched to")
                                << " storage buffers) on case '" << c.name << "': " << diff;
    }
  }
  EXPECT_GT(served, 0) << name;
}

INSTANTIATE_TEST_SUITE_P(Vulkan, StorageBufferBuildsOfTexelShaders,
                         ::testing::Values("gemm.block8x16.f16", "binary.vec4.f32", "conv.depthwise_tile4x8.f16",
                                           "conv.direct_tile2x8.f16acc32", "conv.winograd_f43_block24x16.f32",
                                           "conv.winograd_f23.f16", "global_pool.row.f32", "softmax.vec4_sg.f16acc32",
                                           "gemm.naive.f16"),
                         [](const auto& info) { return test_name_of(info.param); });

std::vector<std::string> tactic_names() {
  std::vector<std::string> names;
  for (const Tactic* t : TacticRegistry::builtin().all()) names.push_back(t->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Vulkan, TacticConformance, ::testing::ValuesIn(tactic_names()),
                         [](const auto& info) { return test_name_of(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TacticConformance);

}  // namespace
}  // namespace vkg::test

namespace vkg::test {
namespace {

// Every op the reference backend runs also runs on Vulkan: it has a tactic, or
// the builder computes it at build time (its result follows from constants and
// static shapes). The output shapes of NonZero, NonMaxSuppression and Unique depend on
// their data: only constant ones (folded at build time) can be part of an engine. The
// window functions and MelWeightMatrix take only sizes and parameters, which must be
// build-time constants. Control flow is folded: an If of a known condition becomes its
// branch, a Loop or Scan of a known length is unrolled (docs/builder.md).
TEST(TacticCoverage, EveryReferenceOpRunsOnVulkan) {
  const std::set<std::string> folded = {
      "Constant", "Shape",      "Size",          "NonZero",        "NonMaxSuppression",
      "Unique",   "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix",
      "If",       "Loop",       "Scan"};
  for (const std::string& op : OpRegistry::reference().op_types()) {
    if (folded.count(op)) continue;
    EXPECT_FALSE(TacticRegistry::builtin().for_op(op).empty()) << op << " has a reference kernel but no tactic";
  }
}

}  // namespace
}  // namespace vkg::test
