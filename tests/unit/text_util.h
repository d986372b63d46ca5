// Text helpers of the unit tests.
#pragma once

#include <cstddef>
#include <string>

namespace vkg::test {

// How many times `what` occurs in `text`, without overlaps.
inline size_t count_occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace vkg::test
