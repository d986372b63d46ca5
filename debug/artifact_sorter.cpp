#include "debug/artifact_sorter.h"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

namespace {

// Moves `from` to `to` unless `to` exists. Returns false when it exists.
bool move_no_replace(const fs::path& from, const fs::path& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EXDEV && errno != EINVAL && errno != ENOSYS)
    VKG_THROW("cannot move artifact '" << from.string() << "' to '" << to.string() << "': " << std::strerror(errno));
  // Another file system (or no renameat2): copy, then remove the source.
  if (fs::exists(to)) return false;
  std::error_code ec;
  fs::copy(from, to, fs::copy_options::recursive, ec);
  VKG_CHECK(!ec, "cannot copy artifact '" << from.string() << "' to '" << to.string() << "': " << ec.message());
  fs::remove_all(from, ec);
  return true;
}

}  // namespace

ArtifactSorter::ArtifactSorter(std::vector<std::string> artifacts, std::string dir)
    : artifacts_(std::move(artifacts)), dir_(std::move(dir)) {}

std::vector<std::string> ArtifactSorter::sort(bool passed, int iteration) const {
  return sort(passed, iteration, artifacts_);
}

std::vector<std::string> ArtifactSorter::sort(bool passed, int iteration, const std::vector<std::string>& sources) const {
  std::vector<std::string> moved;
  if (artifacts_.empty()) return moved;
  const fs::path dest_dir = fs::path(dir_) / (passed ? "good" : "bad");
  std::error_code ec;
  fs::create_directories(dest_dir, ec);
  VKG_CHECK(!ec, "cannot create the artifacts folder '" << dest_dir.string() << "': " << ec.message());
  const std::string stamp = utc_timestamp();
  for (size_t i = 0; i < artifacts_.size(); ++i) {
    const std::string& artifact = sources.at(i);
    const fs::path src(artifact);
    if (!fs::exists(fs::symlink_status(src))) {
      VKG_ERROR("Artifact '" << artifact << "' does not exist, so it was not sorted. Was it supposed to be written?");
      continue;
    }
    const fs::path name = fs::path(artifacts_[i]).filename();
    const std::string stem = name.has_extension() ? name.stem().string() : name.string();
    const std::string ext = name.has_extension() ? name.extension().string() : "";
    const std::string base = stem + "_iter" + std::to_string(iteration) + "_" + stamp;
    for (int n = 1;; ++n) {
      std::string file = base;
      if (n > 1) {
        file += '_';
        file += std::to_string(n);
      }
      const fs::path dest = dest_dir / (file + ext);
      if (move_no_replace(src, dest)) {
        VKG_INFO("Moved " << artifact << " to " << dest.string());
        moved.push_back(dest.string());
        break;
      }
    }
  }
  return moved;
}

}  // namespace vkg::debug
