// Per-test coverage for tests/sanitizer/select_subset.py, compiled into vkgraphy_unit_tests only
// when CMake's VKGRAPHY_COVERAGE is on (runtime/ and debug/ built with --coverage).
//
// With VKGRAPHY_COVERAGE_DIR set, the arc counters of runtime/ and debug/ are zeroed before each
// test and written after it into <dir>/<n>/ (gcov's .gcda files under that prefix), with
// <dir>/<n>/test.txt holding the test's full name and its time in milliseconds. One process
// runs the whole suite, so every test is measured with the state the suite gives it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

extern "C" void __gcov_dump(void);
extern "C" void __gcov_reset(void);

namespace {

class CoverageListener : public testing::EmptyTestEventListener {
 public:
  explicit CoverageListener(std::string root) : root_(std::move(root)) {}

  void OnTestStart(const testing::TestInfo&) override { __gcov_reset(); }

  void OnTestEnd(const testing::TestInfo& info) override {
    const std::filesystem::path dir = std::filesystem::path(root_) / std::to_string(count_++);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "test.txt") << info.test_suite_name() << "." << info.name() << "\n"
                                    << info.result()->elapsed_time() << "\n";
    // libgcov reads GCOV_PREFIX at every dump: the counters land under this test's folder.
    setenv("GCOV_PREFIX", dir.c_str(), 1);
    __gcov_dump();
    __gcov_reset();
  }

 private:
  std::string root_;
  int count_ = 0;
};

// Registered before main (gtest_main's) runs the tests.
const bool kRegistered = [] {
  const char* root = std::getenv("VKGRAPHY_COVERAGE_DIR");
  if (root == nullptr || *root == '\0') return false;
  testing::UnitTest::GetInstance()->listeners().Append(new CoverageListener(root));
  return true;
}();

}  // namespace
