// The machinery under every debug tool: pass/fail rules, the check runner,
// artifact sorting, debug replays, markers and the iteration loop.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "debug/artifact_sorter.h"
#include "debug/check_command.h"
#include "debug/debug_replay.h"
#include "debug/iteration_loop.h"
#include "debug/markers.h"
#include "runtime/core/error.h"
#include "tests/unit/test_data_util.h"

namespace vkg::debug {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(CheckPassed, FollowsPolygraphysRules) {
  CheckOptions o;
  EXPECT_TRUE(check_passed(o, 0, ""));
  EXPECT_FALSE(check_passed(o, 1, ""));
  o.ignore_fail_codes = {3};
  EXPECT_TRUE(check_passed(o, 3, ""));
  EXPECT_FALSE(check_passed(o, 1, ""));

  CheckOptions codes;
  codes.fail_codes = {1};
  EXPECT_FALSE(check_passed(codes, 1, ""));
  EXPECT_TRUE(check_passed(codes, 2, ""));
  EXPECT_TRUE(check_passed(codes, 0, ""));

  CheckOptions regex;
  regex.fail_regexes = {"REALLY BAD", "BAD NODE"};
  EXPECT_FALSE(check_passed(regex, 0, "x BAD NODE y"));  // a match fails whatever the code
  EXPECT_TRUE(check_passed(regex, 1, "all fine"));        // no match passes whatever the code

  CheckOptions both = regex;
  both.fail_codes = {0};
  EXPECT_FALSE(check_passed(both, 0, "REALLY BAD"));
  EXPECT_TRUE(check_passed(both, 0, "fine"));
  EXPECT_TRUE(check_passed(both, 1, "REALLY BAD"));  // code not listed
}

TEST(CheckCommand, RunsWithoutAShellAndCapturesOutput) {
  CheckOptions o;
  o.command = {"sh", "-c", "echo out; echo err 1>&2; exit 3"};
  const CheckResult r = CheckCommand(o).run("x");
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("out"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
  // Arguments reach the program as they are: no shell expansion.
  o.command = {"test", "$HOME", "=", "$HOME"};
  EXPECT_TRUE(CheckCommand(o).run("x").passed);
}

TEST(CheckCommand, TimeoutKillsTheCheckAndEverythingItStarted) {
  CheckOptions o;
  o.command = {"sh", "-c", "sleep 30 & sleep 30"};
  o.timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  const CheckResult r = CheckCommand(o).run("x");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.passed);
}

TEST(CheckCommand, BadCommandOrRegexIsAnError) {
  CheckOptions o;
  o.command = {"/nonexistent/vkgraphy_checker"};
  EXPECT_THROW(CheckCommand(o).run("x"), Error);
  CheckOptions r;
  r.fail_regexes = {"(unclosed"};
  EXPECT_THROW(CheckCommand{r}, Error);
  CheckOptions both;
  both.fail_codes = {1};
  both.ignore_fail_codes = {1};
  EXPECT_THROW(CheckCommand{both}, Error);
}

TEST(ArtifactSorter, MovesFilesAndFoldersWithoutOverwriting) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  const fs::path file = dir / "replay.json", folder = dir / "dumps";
  write(file, "1");
  fs::create_directories(folder);
  write(folder / "a.txt", "a");
  const ArtifactSorter sorter({file.string(), folder.string(), (dir / "missing.txt").string()}, (dir / "arts").string());
  const std::vector<std::string> first = sorter.sort(false, 4);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(std::regex_match(fs::path(first[0]).filename().string(),
                               std::regex(R"(replay_iter4_\d{8}T\d{6}Z\.json)")));
  EXPECT_EQ(fs::path(first[0]).parent_path().filename(), "bad");
  EXPECT_TRUE(fs::exists(fs::path(first[1]) / "a.txt"));
  EXPECT_FALSE(fs::exists(file));
  // The same iteration again (a second session, same second): a new name, nothing lost.
  write(file, "2");
  const std::vector<std::string> second = sorter.sort(false, 4);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0], first[0]);
  std::ifstream a(first[0]), b(second[0]);
  std::string ta, tb;
  a >> ta;
  b >> tb;
  EXPECT_EQ(ta, "1");
  EXPECT_EQ(tb, "2");
}

TEST(DebugReplay, RoundTripsAndRejectsBadFiles) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  DebugReplay r;
  r.tool = "reduce";
  r.set({0, false, "original"});
  r.set({1, true, "outputs: x"});
  r.set({0, true, "original"});  // replaces
  save_debug_replay((dir / "r.json").string(), r);
  EXPECT_EQ(load_debug_replay((dir / "r.json").string()), r);
  EXPECT_TRUE(r.find(0)->passed);
  EXPECT_EQ(r.find(7), nullptr);

  const std::pair<const char*, const char*> bad[] = {
      {"not json", "not valid JSON"},
      {R"({"format": "vkgraphy-tactic-replay", "version": 1})", "not a debug replay"},
      {R"({"format": "vkgraphy-debug-replay", "version": 9, "tool": "x", "iterations": []})", "version"},
      {R"({"format": "vkgraphy-debug-replay", "version": 1, "tool": "x", "iterations": [{"iteration": 0}]})",
       "iterations[0]"},
      {R"({"format": "vkgraphy-debug-replay", "version": 1, "tool": "x", "iterations": [{"iteration": 0, "passed": true}, {"iteration": 0, "passed": true}]})",
       "twice"},
  };
  for (const auto& [text, what] : bad) {
    write(dir / "bad.json", text);
    try {
      load_debug_replay((dir / "bad.json").string());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(skip_current_path("vkgraphy_debug_replay.json"), "vkgraphy_debug_replay_skip_current.json");
  EXPECT_EQ(skip_current_path("a.b/replay"), "a.b/replay_skip_current");
}

// Drives a marker with a "fails when index >= threshold" oracle (outputs phase:
// a candidate keeps nodes 0..index).
size_t bisect_outputs(size_t num_nodes, size_t failing_node, SearchMode mode, int* steps) {
  ReduceMarker m(mode, num_nodes, false);
  *steps = 0;
  while (!m.done()) {
    const size_t i = m.node_index();
    m.step(i < failing_node, i + 1);
    ++*steps;
  }
  return m.best_bad().value_or(num_nodes);
}

TEST(Markers, ReduceMarkerFindsTheFirstFailingNode) {
  for (SearchMode mode : {SearchMode::Bisect, SearchMode::Linear}) {
    for (size_t failing = 0; failing < 9; ++failing) {
      int steps = 0;
      // Bisect assumes, as Polygraphy's marker, that the first node alone passes (reduce's
      // pruning then isolates it).
      const size_t expected = mode == SearchMode::Bisect ? std::max<size_t>(failing, 1) : failing;
      EXPECT_EQ(bisect_outputs(9, failing, mode, &steps), expected) << "failing node " << failing;
      if (mode == SearchMode::Bisect) {
        EXPECT_LE(steps, 4);
      } else {
        EXPECT_EQ(steps, 9);
      }
    }
  }
}

// Inputs phase: a candidate keeps nodes index..n-1 and fails when it still holds `failing`.
TEST(Markers, ReduceMarkerInputsPhaseTriesTheLastNodeFirst) {
  for (SearchMode mode : {SearchMode::Bisect, SearchMode::Linear}) {
    for (size_t failing = 0; failing < 7; ++failing) {
      ReduceMarker m(mode, 7, true);
      std::vector<size_t> tried;
      while (!m.done()) {
        tried.push_back(m.node_index());
        m.step(m.node_index() > failing, 7 - m.node_index());
      }
      ASSERT_FALSE(tried.empty());
      EXPECT_EQ(tried.front(), 6u);
      EXPECT_EQ(std::set<size_t>(tried.begin(), tried.end()).size(), tried.size()) << "a candidate tried twice";
      // Index 0 (the whole subgraph) is known to fail: the best is `failing`, or 0 when never tried.
      EXPECT_EQ(m.best_bad().value_or(0), failing) << "failing node " << failing;
      if (failing == 6) {
        EXPECT_EQ(tried.size(), 1u);
      } else if (mode == SearchMode::Linear) {
        EXPECT_EQ(tried.size(), 7u);
      } else {
        EXPECT_LE(tried.size(), 4u);
      }
    }
  }
}

TEST(Markers, LayerCountMarkerFindsTheFewestLayers) {
  for (SearchMode mode : {SearchMode::Bisect, SearchMode::Linear}) {
    for (size_t needed = 0; needed <= 6; ++needed) {
      LayerCountMarker m(mode, 6);
      while (!m.done()) m.step(m.count() >= needed);
      ASSERT_TRUE(m.result());
      // Bisect never tries 0 layers (Polygraphy's marker assumes the unmarked build fails).
      EXPECT_EQ(*m.result(), mode == SearchMode::Bisect ? std::max<size_t>(needed, 1) : needed);
    }
    LayerCountMarker never(mode, 4);
    while (!never.done()) never.step(false);
    EXPECT_FALSE(never.result());
  }
}

TEST(IterationLoop, ChecksSortsReplaysAndCleansUp) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  IterationOptions o;
  o.check.command = {"sh", "-c", "test -f model.onnx && cat info.json | grep -q '\"iteration\": 1'"};
  o.iter_artifact = "model.onnx";
  o.iter_info = "info.json";
  o.artifacts = {"model.onnx"};
  o.remove_intermediate = true;
  o.save_replay = "replay.json";
  {
    IterationLoop loop("repeat", o);
    int made = 0;
    auto make = [&] {
      ++made;
      write("model.onnx", "m");
    };
    EXPECT_FALSE(loop.run("first", make));
    EXPECT_TRUE(loop.run("second", make));
    EXPECT_EQ(made, 2);
    EXPECT_EQ(loop.passed(), 1);
    EXPECT_FALSE(fs::exists("info.json"));
    EXPECT_EQ(std::distance(fs::directory_iterator("vkgraphy_artifacts/good"), fs::directory_iterator()), 1);
    EXPECT_EQ(std::distance(fs::directory_iterator("vkgraphy_artifacts/bad"), fs::directory_iterator()), 1);
    // The records a --report shows: description, result, where the artifacts went.
    ASSERT_EQ(loop.records().size(), 2u);
    EXPECT_EQ(loop.records()[0].description, "first");
    EXPECT_FALSE(loop.records()[0].passed);
    ASSERT_EQ(loop.records()[1].artifacts.size(), 1u);
    EXPECT_EQ(loop.records()[1].artifacts[0].rfind("vkgraphy_artifacts/good/model_iter1_", 0), 0u)
        << loop.records()[1].artifacts[0];
  }
  const DebugReplay saved = load_debug_replay("replay.json");
  ASSERT_EQ(saved.iterations.size(), 2u);
  EXPECT_EQ(saved.iterations[1], (ReplayEntry{1, true, "second"}));

  // Replayed: nothing is made or checked, unless the description changed.
  o.load_replay = "replay.json";
  o.save_replay = "replay2.json";
  o.check.command = {"/nonexistent/checker"};
  IterationLoop again("repeat", o);
  int made = 0;
  EXPECT_FALSE(again.run("first", [&] { ++made; }));
  EXPECT_EQ(made, 0);
  ASSERT_EQ(again.records().size(), 1u);
  EXPECT_TRUE(again.records()[0].replayed);
  // Iteration 1 now tries something else: its recorded result does not apply, so it is checked (and the
  // checker does not exist).
  EXPECT_THROW(again.run("a different second", [&] { write("model.onnx", "m"); }), Error);

  // An existing intermediate artifact is never overwritten.
  write("model.onnx", "mine");
  EXPECT_THROW(IterationLoop("repeat", o), Error);
  fs::current_path(cwd);
}

}  // namespace
}  // namespace vkg::debug
