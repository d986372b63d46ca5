// FNV-1a, 64-bit: the checksum of engine files and the hash in layer signatures. Both are
// written to files, so the function is fixed: changing it changes every key and checksum.
#pragma once

#include <cstdint>
#include <string_view>

namespace vkg {

// `h` continues a hash: fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b).
inline uint64_t fnv1a64(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (const char c : bytes) {
    h ^= uint8_t(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace vkg
