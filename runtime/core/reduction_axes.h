// Which axes of a tensor a reduction, softmax or normalization covers, read from the
// node the same way by the reference kernels and the Vulkan tactics.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/graph.h"

namespace vkg {

// ONNX axes (possibly negative) as a per-axis mask for a tensor of rank `rank`; empty
// axes select every axis. Throws Error naming the node for an out-of-range or repeated axis.
std::vector<bool> axes_mask(const Node& node, const std::vector<int64_t>& axes, int64_t rank);

// The mask of the axes [first, rank).
std::vector<bool> trailing_axes_mask(int64_t first, int64_t rank);

}  // namespace vkg
