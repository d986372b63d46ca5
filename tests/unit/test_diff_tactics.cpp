// diff-tactics (debug/diff_tactics.h): collecting replays from folders and
// files, and blaming the tactics seen only in bad replays.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "debug/diff_tactics.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "tests/unit/test_data_util.h"

namespace vkg::debug {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

DeviceIdentity device(const std::string& name = "llvmpipe") {
  DeviceIdentity d;
  d.device_name = name;
  d.vendor_id = 0x10005;
  d.driver_version = "Mesa 22.3.6";
  d.pipeline_cache_uuid = std::string(32, '0');
  d.vkgraphy_version = "0.1.0";
  return d;
}

// A replay of the two-layer model conv -> pool with the given choices.
TacticReplay replay(const std::string& conv_tactic, const std::string& pool_tactic,
                    Precision pool_precision = Precision::FP32) {
  TacticReplay r;
  r.device = device();
  r.layers.push_back({"conv", "Conv", "00112233aabbccdd", conv_tactic, Precision::FP32, {}, {}});
  r.layers.push_back({"pool", "MaxPool", "ffeeddccbbaa9988", pool_tactic, pool_precision, {}, {}});
  return r;
}

void save(const fs::path& path, const TacticReplay& r) {
  fs::create_directories(path.parent_path());
  save_tactic_replay(path.string(), r);
}

TEST(DiffTactics, FindsTheTacticSeenOnlyInBadReplays) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  save(dir / "good" / "replay_iter1.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  save(dir / "good" / "replay_iter2.json", replay("conv.direct.f32", "pool.vec4.f32"));
  save(dir / "bad" / "replay_iter3.json", replay("conv.gemm.f32", "pool.direct.f32"));
  save(dir / "bad" / "replay_iter4.json", replay("conv.direct.f32", "pool.direct.f32"));
  save(dir / "bad" / "replay_iter5.json", replay("conv.gemm.f32", "pool.direct.f16", Precision::FP16));

  const ReplaySets sets = collect_replays_from_artifact_dir(dir.string());
  ASSERT_EQ(sets.good.size(), 2u);
  ASSERT_EQ(sets.bad.size(), 3u);
  const TacticDiffReport report = diff_tactics(sets);
  EXPECT_FALSE(report.undecided) << *report.undecided;
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_EQ(report.good_replays, 2u);
  EXPECT_EQ(report.bad_replays, 3u);
  ASSERT_EQ(report.layers.size(), 1u);  // conv's bad choices all appear in good replays
  const LayerSuspects expected{
      "pool", "MaxPool", {{"pool.direct.f32", Precision::FP32, 2}, {"pool.direct.f16", Precision::FP16, 1}}};
  EXPECT_EQ(report.layers[0], expected);
  EXPECT_FALSE(report.single_suspect());  // two suspects, neither chosen by every bad replay
}

// A faulty shader fails whichever layer runs it: no (layer, tactic) is in every
// bad replay, but the tactic is, in one layer or the other, and in no good one.
TEST(DiffTactics, FollowsATacticAcrossLayers) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  TacticReplay both = replay("x.faulty.f32", "pool.vec4.f32");
  both.layers[1].tactic = "x.faulty.f32";
  save(dir / "good" / "a.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  save(dir / "good" / "b.json", replay("conv.direct.f32", "pool.direct.f32"));
  save(dir / "bad" / "c.json", replay("x.faulty.f32", "pool.vec4.f32"));
  save(dir / "bad" / "d.json", replay("conv.gemm.f32", "x.faulty.f32"));
  save(dir / "bad" / "e.json", both);
  const TacticDiffReport report = diff_tactics(collect_replays_from_artifact_dir(dir.string()));
  EXPECT_FALSE(report.single_suspect());
  ASSERT_EQ(report.across_layers.size(), 1u);
  EXPECT_EQ(report.across_layers[0].tactic, "x.faulty.f32");
  EXPECT_EQ(report.across_layers[0].layers, (std::vector<std::string>{"conv", "pool"}));
  // One bad build without it: the tactic no longer explains every failure.
  save(dir / "bad" / "f.json", replay("conv.direct.f32", "pool.vec4.f32"));
  EXPECT_TRUE(diff_tactics(collect_replays_from_artifact_dir(dir.string())).across_layers.empty());
}

TEST(DiffTactics, NamesTheSingleSuspect) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  save(dir / "good" / "a.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  save(dir / "bad" / "b.json", replay("conv.gemm.f32", "pool.direct.f32"));
  const TacticDiffReport report = diff_tactics(collect_replays_from_artifact_dir(dir.string()));
  const std::optional<TacticDiffReport::Blame> single = report.single_suspect();
  ASSERT_TRUE(single);
  EXPECT_EQ(single->layer->layer, "pool");
  EXPECT_EQ(single->tactic->tactic, "pool.direct.f32");
  EXPECT_EQ(single->tactic->bad_replays, 1u);
}

// A coincidence (conv.wino chosen by one bad build only) does not hide the
// tactic that every bad build chose; two such tactics are not told apart.
TEST(DiffTactics, BlamesTheSuspectEveryBadReplayChose) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  save(dir / "good" / "a.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  save(dir / "good" / "b.json", replay("conv.direct.f32", "pool.vec4.f32"));
  save(dir / "bad" / "c.json", replay("conv.wino.f32", "pool.direct.f32"));
  save(dir / "bad" / "d.json", replay("conv.gemm.f32", "pool.direct.f32"));
  TacticDiffReport report = diff_tactics(collect_replays_from_artifact_dir(dir.string()));
  ASSERT_EQ(report.layers.size(), 2u);
  std::optional<TacticDiffReport::Blame> blame = report.single_suspect();
  ASSERT_TRUE(blame);
  EXPECT_EQ(blame->tactic->tactic, "pool.direct.f32");

  save(dir / "bad" / "c.json", replay("conv.wino.f32", "pool.direct.f32"));
  save(dir / "bad" / "d.json", replay("conv.wino.f32", "pool.direct.f32"));
  report = diff_tactics(collect_replays_from_artifact_dir(dir.string()));
  EXPECT_EQ(report.in_every_bad_replay().size(), 2u);
  EXPECT_FALSE(report.single_suspect());
}

TEST(DiffTactics, SearchesFoldersRecursivelyAndSkipsOtherFiles) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  save(dir / "good" / "run1" / "nested" / "r.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  save(dir / "good" / "run2" / "r.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  write_text(dir / "good" / "model.onnx", std::string("\x08\x07\x12\x04onnx", 9));
  write_text(dir / "good" / "outputs.json", R"({"format": "vkgraphy-run-results", "lst": []})");
  write_text(dir / "good" / "notes.txt", "not json");
  save(dir / "bad" / "deep" / "r.json", replay("conv.gemm.f32", "pool.direct.f32"));

  const ReplaySets sets = collect_replays_from_artifact_dir(dir.string());
  ASSERT_EQ(sets.good.size(), 2u);
  EXPECT_EQ(sets.good[0].path, (dir / "good" / "run1" / "nested" / "r.json").string());  // sorted paths
  EXPECT_EQ(sets.good[1].path, (dir / "good" / "run2" / "r.json").string());
  ASSERT_EQ(sets.bad.size(), 1u);
  EXPECT_TRUE(diff_tactics(sets).single_suspect());
}

TEST(DiffTactics, SkipsABrokenReplayInAFolderWithAWarning) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  save(dir / "good" / "a.json", replay("conv.gemm.f32", "pool.vec4.f32"));
  write_text(dir / "good" / "broken.json", R"({"format": "vkgraphy-tactic-replay", "version": 1, "layers": 3})");
  testing::internal::CaptureStdout();
  const std::vector<LoadedReplay> loaded = collect_tactic_replays({(dir / "good").string()});
  const std::string log = testing::internal::GetCapturedStdout();
  EXPECT_EQ(loaded.size(), 1u);
  EXPECT_NE(log.find("[W]"), std::string::npos) << log;
  EXPECT_NE(log.find("broken.json"), std::string::npos) << log;
}

TEST(DiffTactics, AFileNamedDirectlyMustBeAReplay) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  write_text(dir / "outputs.json", R"({"format": "vkgraphy-run-results"})");
  write_text(dir / "broken.json", R"({"format": "vkgraphy-tactic-replay", "version": 1, "layers": 3})");
  EXPECT_THROW(collect_tactic_replays({(dir / "outputs.json").string()}), Error);
  EXPECT_THROW(collect_tactic_replays({(dir / "broken.json").string()}), Error);
  EXPECT_THROW(collect_tactic_replays({(dir / "missing.json").string()}), Error);
}

TEST(DiffTactics, ArtifactDirNeedsGoodOrBad) {
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
  try {
    collect_replays_from_artifact_dir(dir.string());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("good"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad"), std::string::npos) << e.what();
  }
  EXPECT_THROW(collect_replays_from_artifact_dir((dir / "nope").string()), Error);

  // Only bad/: loads, and the analysis says which set is missing.
  save(dir / "bad" / "r.json", replay("conv.gemm.f32", "pool.direct.f32"));
  const TacticDiffReport report = diff_tactics(collect_replays_from_artifact_dir(dir.string()));
  ASSERT_TRUE(report.undecided);
  EXPECT_NE(report.undecided->find("no good replays were found in"), std::string::npos) << *report.undecided;
  EXPECT_NE(report.undecided->find("(missing)"), std::string::npos) << *report.undecided;
  EXPECT_TRUE(report.layers.empty());
}

TEST(DiffTactics, CannotDecideWithoutGoodOrBadReplays) {
  ReplaySets sets;
  sets.good_source = "g";
  sets.bad_source = "b";
  sets.good.push_back({"g/r.json", replay("conv.gemm.f32", "pool.vec4.f32")});
  TacticDiffReport report = diff_tactics(sets);
  ASSERT_TRUE(report.undecided);
  EXPECT_EQ(*report.undecided, "cannot decide: no bad replays were found in b");

  sets.bad = sets.good;
  sets.good.clear();
  report = diff_tactics(sets);
  ASSERT_TRUE(report.undecided);
  EXPECT_EQ(*report.undecided, "cannot decide: no good replays were found in g");
}

TEST(DiffTactics, CannotDecideWhenEveryBadTacticAlsoAppearsInAGoodReplay) {
  ReplaySets sets;
  sets.good.push_back({"g1.json", replay("conv.gemm.f32", "pool.vec4.f32")});
  sets.good.push_back({"g2.json", replay("conv.direct.f32", "pool.direct.f32")});
  // Each bad choice appears in some good replay; only the combination is new.
  sets.bad.push_back({"b1.json", replay("conv.gemm.f32", "pool.direct.f32")});
  const TacticDiffReport report = diff_tactics(sets);
  ASSERT_TRUE(report.undecided);
  EXPECT_NE(report.undecided->find("every tactic in the bad replays also appears in a good one"), std::string::npos);
  EXPECT_TRUE(report.layers.empty());
  EXPECT_FALSE(report.single_suspect());
}

// Two suspects that every bad build chose cannot be told apart by counting; the
// errors --validate-tactics recorded rank them, and the larger one is blamed.
TEST(DiffTactics, RecordedValidationErrorsRankSuspectsThatCountsCannotSeparate) {
  auto with_errors = [](TacticReplay r, double conv_error, double pool_error) {
    r.layers[0].candidates.push_back({r.layers[0].tactic, Precision::FP32, 10, {10}, std::nullopt});
    r.layers[0].candidates.back().validation_error = conv_error;
    r.layers[1].candidates.push_back({r.layers[1].tactic, Precision::FP32, 10, {10}, std::nullopt});
    r.layers[1].candidates.back().validation_error = pool_error;
    return r;
  };
  ReplaySets sets;
  sets.good.push_back({"g.json", with_errors(replay("conv.gemm.f32", "pool.vec4.f32"), 1e-7, 0)});
  sets.bad.push_back({"b1.json", with_errors(replay("conv.direct.f32", "pool.direct.f32"), 2e-7, 4e-4)});
  sets.bad.push_back({"b2.json", with_errors(replay("conv.direct.f32", "pool.direct.f32"), 1e-7, 3e-4)});
  TacticDiffReport report = diff_tactics(sets);
  ASSERT_EQ(report.in_every_bad_replay().size(), 2u);
  ASSERT_EQ(report.layers.size(), 2u);
  EXPECT_EQ(report.layers[1].suspects[0].validation_error, 4e-4);  // the largest recorded
  std::optional<TacticDiffReport::Blame> blame = report.single_suspect();
  ASSERT_TRUE(blame);
  EXPECT_EQ(blame->tactic->tactic, "pool.direct.f32");
  EXPECT_TRUE(blame->ranked_by_error);

  // Without recorded errors the same replays name no single tactic.
  for (auto* set : {&sets.good, &sets.bad})
    for (LoadedReplay& loaded : *set)
      for (TacticChoice& layer : loaded.replay.layers) layer.candidates.clear();
  report = diff_tactics(sets);
  EXPECT_FALSE(report.single_suspect());
}

TEST(DiffTactics, ReportsLayersMissingFromGoodReplays) {
  ReplaySets sets;
  sets.good.push_back({"g.json", replay("conv.gemm.f32", "pool.vec4.f32")});
  TacticReplay bad = replay("conv.gemm.f32", "pool.direct.f32");
  bad.layers.push_back({"relu", "Relu", "0123456789abcdef", "eltwise.vec4.f32", Precision::FP32, {}, {}});
  sets.bad.push_back({"b.json", bad});
  const TacticDiffReport report = diff_tactics(sets);
  EXPECT_EQ(report.layers_only_in_bad, std::vector<std::string>{"relu"});
  ASSERT_EQ(report.layers.size(), 1u);  // relu's tactic is not a suspect
  EXPECT_EQ(report.layers[0].layer, "pool");

  // Nothing in common at all: cannot decide.
  sets.bad[0].replay.layers.erase(sets.bad[0].replay.layers.begin(), sets.bad[0].replay.layers.begin() + 2);
  const TacticDiffReport disjoint = diff_tactics(sets);
  ASSERT_TRUE(disjoint.undecided);
  EXPECT_NE(disjoint.undecided->find("different models"), std::string::npos) << *disjoint.undecided;
}

TEST(DiffTactics, WarnsAboutDifferentSignaturesAndDevices) {
  ReplaySets sets;
  sets.good.push_back({"g.json", replay("conv.gemm.f32", "pool.vec4.f32")});
  TacticReplay bad = replay("conv.gemm.f32", "pool.direct.f32");
  bad.layers[0].signature = "1111111111111111";
  bad.device = device("NVIDIA H100");
  sets.bad.push_back({"b.json", bad});
  const TacticDiffReport report = diff_tactics(sets);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_NE(report.warnings[0].find("layer 'conv'"), std::string::npos) << report.warnings[0];
  EXPECT_NE(report.warnings[0].find("1111111111111111"), std::string::npos) << report.warnings[0];
  EXPECT_NE(report.warnings[1].find("different devices"), std::string::npos) << report.warnings[1];
  EXPECT_NE(report.warnings[1].find("NVIDIA H100"), std::string::npos) << report.warnings[1];
  EXPECT_FALSE(report.undecided);  // warnings do not stop the analysis
}

}  // namespace
}  // namespace vkg::debug
