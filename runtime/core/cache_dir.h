// Where vkgraphy keeps what it may reuse across processes: the timing cache of
// --deterministic builds and the host-specialized shaders of CPU drivers.
#pragma once

#include <string>

namespace vkg {

// $VKGRAPHY_CACHE_DIR, else $XDG_CACHE_HOME/vkgraphy, else ~/.cache/vkgraphy; "" (nothing kept)
// when VKGRAPHY_CACHE_DIR is set but empty or no home is known.
std::string vkgraphy_cache_dir();

}  // namespace vkg
