// Corrupted model files must give a vkg::Error or import cleanly: never a crash, a hang
// or another exception. Seeded byte mutations of real fixtures, so the test is repeatable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/core/logger.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/reference/reference_backend.h"
#include "tests/unit/seeded_mutation.h"

namespace fs = std::filesystem;

namespace vkg {
namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(VKGRAPHY_SOURCE_DIR) + "/tests/models/polygraphy/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ImportRobustness, CorruptedModelsAreErrorsNotCrashes) {
  const Severity saved = Logger::get().severity();
  Logger::get().set_severity(Severity::Critical);  // the importer warns a lot about broken models
  const fs::path dir = fs::temp_directory_path() / ("vkgraphy_fuzz_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "mutated.onnx").string();
  int imported = 0, rejected = 0;
  const int iterations = test::fuzz_iterations(150);
  for (const char* fixture : {"conv.onnx", "reducable.onnx", "attention.onnx", "const_foldable.onnx",
                              "multi_output.onnx", "matmul_2layer.onnx"}) {
    const std::string original = read_fixture(fixture);
    ASSERT_FALSE(original.empty()) << fixture;
    std::mt19937 rng(1234);
    for (int i = 0; i < iterations; ++i) {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << test::seeded_mutation(original, rng);
      try {
        Graph g = import_onnx(path);
        (void)ReferenceBackend::unsupported_ops(g);
        ++imported;
      } catch (const Error&) {
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << fixture << " mutation " << i << ": " << typeid(e).name() << ": " << e.what();
      }
    }
  }
  Logger::get().set_severity(saved);
  fs::remove_all(dir);
  EXPECT_GT(rejected, 0);
  RecordProperty("imported", imported);
}

}  // namespace
}  // namespace vkg
