#include "runtime/core/cache_dir.h"

#include <cstdlib>

namespace vkg {

std::string vkgraphy_cache_dir() {
  if (const char* dir = std::getenv("VKGRAPHY_CACHE_DIR")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/vkgraphy";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/vkgraphy";
  return "";
}

}  // namespace vkg
