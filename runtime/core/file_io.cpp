#include "runtime/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/core/error.h"

namespace vkg {

std::string read_whole_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  VKG_CHECK(std::filesystem::exists(path, ec), what << " '" << path << "' does not exist");
  VKG_CHECK(!std::filesystem::is_directory(path, ec), "cannot read " << what << " '" << path << "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  VKG_CHECK(in, "cannot read " << what << " '" << path << "': " << std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  VKG_CHECK(!in.bad(), "error while reading " << what << " '" << path << "'");
  return ss.str();
}

void write_file_atomically(const std::string& path, std::string_view contents, const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    VKG_CHECK(!ec, "cannot write " << what << " '" << path << "': cannot create folder '"
                                   << target.parent_path().string() << "': " << ec.message());
  }
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp_name = ".";
  temp_name += target.filename().string();
  temp_name += ".tmp.XXXXXX";
  std::string temp = (folder / temp_name).string();
  const int fd = ::mkstemp(temp.data());
  VKG_CHECK(fd >= 0, "cannot write " << what << " '" << path << "': " << std::strerror(errno));

  const char* data = contents.data();
  size_t left = contents.size();
  int error = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    data += n;
    left -= size_t(n);
  }
  // mkstemp creates the file 0600; give it the usual permissions of a new file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (!error && ::fchmod(fd, 0666 & ~mask) != 0) error = errno;
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && std::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error) {
    std::remove(temp.c_str());
    VKG_THROW("cannot write " << what << " '" << path << "': " << std::strerror(error));
  }
}

}  // namespace vkg
