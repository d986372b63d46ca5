#include "runtime/core/reduction_axes.h"

#include "runtime/core/error.h"

namespace vkg {

std::vector<bool> axes_mask(const Node& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(size_t(rank), axes.empty());
  for (int64_t axis : axes) {
    VKG_CHECK(axis >= -rank && axis < rank,
              node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
    const size_t a = size_t(axis < 0 ? axis + rank : axis);
    VKG_CHECK(!mask[a], node.describe() << ": axis " << axis << " is repeated in the axes");
    mask[a] = true;
  }
  return mask;
}

std::vector<bool> trailing_axes_mask(int64_t first, int64_t rank) {
  std::vector<bool> mask(size_t(rank), false);
  for (int64_t d = first; d < rank; ++d) mask[size_t(d)] = true;
  return mask;
}

}  // namespace vkg
