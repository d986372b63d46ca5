// Seeded mutations of the files users hand to vkgraphy that the other
// robustness tests do not cover: Polygraphy's outputs and inputs JSON (every
// fixture of tests/data, written by the real Polygraphy), .npy arrays, debug
// replays and layer-precisions files. A corrupted file loads (when the mutation kept it valid) or is
// a vkg::Error; never a crash, a hang or another exception. The tactic replay
// and timing cache loaders have theirs in test_engine_files.cpp, ONNX models in
// test_import_robustness.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>

#include "debug/debug_replay.h"
#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/data/npy.h"
#include "runtime/engine/layer_precisions_file.h"
#include "runtime/data/run_results.h"
#include "tests/unit/seeded_mutation.h"

namespace fs = std::filesystem;

namespace vkg {
namespace {

std::string fixture_text(const std::string& name) {
  return read_whole_file(std::string(VKGRAPHY_SOURCE_DIR) + "/tests/data/" + name, "fixture");
}

// Runs `load` on `iterations` mutations of `original`; returns how many it rejected with a vkg::Error.
int rejected_mutations(const std::string& what, const std::string& original, unsigned seed, int iterations,
                       const std::function<void(const std::string&)>& load) {
  std::mt19937 rng(seed);
  int rejected = 0;
  for (int i = 0; i < iterations; ++i) {
    const std::string bytes = test::seeded_mutation(original, rng);
    try {
      load(bytes);
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " mutation " << i << ": not a vkg::Error: " << typeid(e).name() << ": " << e.what();
    }
  }
  return rejected;
}

TEST(LoaderMutations, PolygraphyOutputsFiles) {
  const int n = test::fuzz_iterations(200);
  for (const char* name : {"polygraphy_golden_multi.json", "polygraphy_golden_identity.json",
                           "polygraphy_golden_identity_legacy.json", "polygraphy_legacy_markers.json"}) {
    const std::string original = fixture_text(name);
    ASSERT_NO_THROW(run_results_from_json(original, name)) << name;
    const int rejected = rejected_mutations(name, original, 11, n, [&](const std::string& bytes) {
      const RunResults r = run_results_from_json(bytes, name);
      for (const auto& [runner, iterations] : r.runs)
        for (const IterationResult& it : iterations) (void)it.to_map();
    });
    EXPECT_GT(rejected, n / 2) << name;
  }
}

TEST(LoaderMutations, PolygraphyInputsFiles) {
  const int n = test::fuzz_iterations(200);
  for (const char* name : {"polygraphy_dataloader_golden.json", "polygraphy_golden_identity_inputs.json"}) {
    const std::string original = fixture_text(name);
    ASSERT_NO_THROW(inputs_from_json(original, name)) << name;
    const int rejected = rejected_mutations(name, original, 12, n, [&](const std::string& bytes) {
      for (const TensorMap& feed : inputs_from_json(bytes, name))
        for (const auto& [input, t] : feed) (void)t.to_doubles();
    });
    EXPECT_GT(rejected, n / 2) << name;
  }
}

TEST(LoaderMutations, NpyArrays) {
  const int n = test::fuzz_iterations(300);
  const std::vector<Tensor> arrays = {
      Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::from_vector<int64_t>({4}, {-1, 0, 1, 1LL << 40}),
      Tensor::from_vector<bool>({3}, {true, false, true}), Tensor(DType::Float16, {0, 5}), Tensor::scalar<double>(2.5)};
  int rejected = 0;
  for (size_t a = 0; a < arrays.size(); ++a) {
    const std::string original = save_npy(arrays[a]);
    ASSERT_TRUE(load_npy(original).bit_equal(arrays[a]));
    rejected += rejected_mutations("npy " + std::to_string(a), original, 13 + unsigned(a), n,
                                   [](const std::string& bytes) { (void)load_npy(bytes).to_doubles(); });
  }
  EXPECT_GT(rejected, n);
}

TEST(LoaderMutations, DebugReplays) {
  const fs::path dir = fs::temp_directory_path() / ("vkgraphy_mutations_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "replay.json").string();
  debug::DebugReplay replay;
  replay.tool = "reduce";
  replay.iterations = {{0, false, "nodes 0-5 of 12"}, {1, true, "nodes 0-2 of 12"}, {2, false, "inputs of node 3"}};
  debug::save_debug_replay(path, replay);
  const std::string original = read_whole_file(path, "debug replay");
  const int n = test::fuzz_iterations(200);
  const int rejected = rejected_mutations("debug replay", original, 14, n, [&](const std::string& bytes) {
    write_file_atomically(path, bytes, "debug replay");
    const debug::DebugReplay loaded = debug::load_debug_replay(path);
    (void)loaded.find(1);
  });
  EXPECT_GT(rejected, n / 2);
  fs::remove_all(dir);
}

TEST(LoaderMutations, LayerPrecisionsFiles) {
  const fs::path dir = fs::temp_directory_path() / ("vkgraphy_mutations_lp_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "pins.json").string();
  LayerPrecisions pins;
  pins.constraints = PrecisionConstraints::Obey;
  pins.layers = {{"big1", Precision::FP32}, {"small1", Precision::FP32}, {"conv+relu", Precision::FP16}};
  save_layer_precisions(path, pins);
  const LayerPrecisions back = load_layer_precisions(path);
  EXPECT_EQ(back.layers, pins.layers);
  EXPECT_EQ(back.constraints, pins.constraints);
  const std::string original = read_whole_file(path, "layer-precisions file");
  const int n = test::fuzz_iterations(200);
  const int rejected = rejected_mutations("layer-precisions file", original, 15, n, [&](const std::string& bytes) {
    write_file_atomically(path, bytes, "layer-precisions file");
    (void)load_layer_precisions(path);
  });
  EXPECT_GT(rejected, n / 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vkg
