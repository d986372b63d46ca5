// Helpers shared by the test_data_*.cpp unit tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace vkg::test {

inline std::string data_dir() { return std::string(VKGRAPHY_SOURCE_DIR) + "/tests/data"; }

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
