#include "runtime/vulkan/hazards.h"

#include <algorithm>
#include <limits>

namespace vkg::vk {

namespace {

bool overlap(const BufferAccess& a, const BufferAccess& b) {
  if (a.buffer != b.buffer) return false;
  constexpr uint64_t kEnd = std::numeric_limits<uint64_t>::max();
  const uint64_t a_end = a.size == 0 ? kEnd : a.offset + a.size, b_end = b.size == 0 ? kEnd : b.offset + b.size;
  return a.offset < b_end && b.offset < a_end;
}

bool overlaps_any(const BufferAccess& a, const std::vector<BufferAccess>& set) {
  return std::any_of(set.begin(), set.end(), [&](const BufferAccess& b) { return overlap(a, b); });
}

}  // namespace

bool HazardTracker::conflicts(std::span<const BufferAccess> accesses) const {
  return std::any_of(accesses.begin(), accesses.end(), [&](const BufferAccess& a) {
    return overlaps_any(a, writes_) || (a.write && overlaps_any(a, reads_));
  });
}

void HazardTracker::add(std::span<const BufferAccess> accesses) {
  for (const BufferAccess& a : accesses) (a.write ? writes_ : reads_).push_back(a);
}

void HazardTracker::clear() {
  reads_.clear();
  writes_.clear();
}

}  // namespace vkg::vk
