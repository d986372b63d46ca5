// Helpers shared by the test_data_*.cpp unit tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/tensor.h"

namespace vkg::test {

inline std::string data_dir() { return std::string(VKGRAPHY_SOURCE_DIR) + "/tests/data"; }

// The path of one of Polygraphy's test models bundled in tests/models/polygraphy.
inline std::string polygraphy_model(const std::string& name) {
  return std::string(VKGRAPHY_SOURCE_DIR) + "/tests/models/polygraphy/" + name;
}

// The whole content of a file the test wrote or reads.
inline std::string read_text(const std::string& path) { return read_whole_file(path, "test file"); }

// An empty folder <temp>/<suite>/<current test's name>, made afresh for each test.
inline std::string fresh_test_dir(const std::string& suite) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / suite / info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A fresh, empty folder under the system temp folder, removed at destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("vkgraphy_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets an environment variable (nullptr: unsets it) for a scope and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs `body` and returns the message of the vkg::Error it throws ("" if none).
template <class F> std::string error_of(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR_CONTAINS(statement, text)                              \
  do {                                                                      \
    const std::string vkg_msg_ = ::vkg::test::error_of([&] { statement; }); \
    EXPECT_NE(vkg_msg_.find(text), std::string::npos)                       \
        << "error message: '" << vkg_msg_ << "' lacks '" << (text) << "'";  \
  } while (0)

}  // namespace vkg::test
