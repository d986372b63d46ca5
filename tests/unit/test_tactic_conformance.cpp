// Op conformance on Vulkan: every registered tactic, in its precision, against
// the reference backend on every registered case (tests/unit/vk_cases_*.cpp)
// of its ops that it can serve, on lavapipe with the validation layer on. A
// tactic that serves no case fails: every tactic must be exercised.
// VKGRAPHY_CONFORMANCE_FILTER=<glob> limits the run to matching tactic names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "runtime/reference/kernel.h"

#include "runtime/core/error.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

class TacticConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(TacticConformance, MatchesReference) {
  const Tactic* tactic = TacticRegistry::builtin().find(GetParam());
  ASSERT_NE(tactic, nullptr);
  if (const char* filter = std::getenv("VKGRAPHY_CONFORMANCE_FILTER"); filter && !glob_match(filter, tactic->name))
    GTEST_SKIP() << "not matched by VKGRAPHY_CONFORMANCE_FILTER";
  std::string why;
  if (test_vk_context(&why) == nullptr) GTEST_SKIP() << "no Vulkan driver: " << why;

  int served = 0;
  std::vector<std::string> declined;
  for (const VkCase& c : all_vk_cases()) {
    if (std::find(tactic->ops.begin(), tactic->ops.end(), c.node.op_type) == tactic->ops.end()) continue;
    VkCaseRun run;
    try {
      run = run_case_with_tactic(c, *tactic);
    } catch (const Error& e) {
      ADD_FAILURE() << tactic->name << " on case '" << c.name << "': " << e.what();
      continue;
    }
    if (!run.served) {
      declined.push_back(c.name + ": " + run.why_not);
      continue;
    }
    ++served;
    const std::string diff = compare_case_outputs(c, run, tactic->precision());
    EXPECT_TRUE(diff.empty()) << tactic->name << " on case '" << c.name << "': " << diff;
  }
  std::string reasons;
  for (size_t i = 0; i < declined.size() && i < 5; ++i) reasons += "\n  " + declined[i];
  EXPECT_GT(served, 0) << tactic->name << " serves none of the conformance cases of its ops" << reasons;
}

std::vector<std::string> tactic_names() {
  std::vector<std::string> names;
  for (const Tactic* t : TacticRegistry::builtin().all()) names.push_back(t->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Vulkan, TacticConformance, ::testing::ValuesIn(tactic_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TacticConformance);

}  // namespace
}  // namespace vkg::test

namespace vkg::test {
namespace {

// Every op the reference backend runs also runs on Vulkan: it has a tactic, or
// the builder computes it at build time (its result follows from constants and
// static shapes). NonZero's output shape depends on its data: only a constant
// NonZero (folded at build time) can be part of an engine.
TEST(TacticCoverage, EveryReferenceOpRunsOnVulkan) {
  const std::set<std::string> folded = {"Constant", "Shape", "Size", "NonZero"};
  for (const std::string& op : OpRegistry::reference().op_types()) {
    if (folded.count(op)) continue;
    EXPECT_FALSE(TacticRegistry::builtin().for_op(op).empty()) << op << " has a reference kernel but no tactic";
  }
}

}  // namespace
}  // namespace vkg::test
