// DepthToSpace and SpaceToDepth as ONNX defines them: a reshape of the input to a 6-D
// view, a transpose of that view, and a reshape to the output. Shared by the reference
// kernels and the Vulkan tactics (a strided gather of the permuted view).
#pragma once

#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

struct BlockPermutation {
  Shape view;                 // the input, reshaped (contiguous)
  std::vector<int64_t> perm;  // the transpose of the view; the output is its row-major result
  Shape out_shape;
};

// For a DepthToSpace (modes DCR and CRD) or SpaceToDepth node on an input [N, C, H, W].
// Throws Error naming the node for another rank, a missing or bad blocksize, channels
// or spatial sizes the blocksize does not divide, or an unknown mode.
BlockPermutation depth_space_permutation(const Node& node, const Shape& in);

}  // namespace vkg
