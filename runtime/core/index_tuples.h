// How the index tuples of GatherND and ScatterND address their data, checked and
// computed once for the reference kernels and the Vulkan tactics.
#pragma once

#include <cstdint>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

// `tuple_count` tuples (per batch) of `depth` coordinates each, for the axes batch_dims..
// of data; each tuple selects a slice of `slice` elements.
struct IndexTuples {
  int64_t depth = 0;
  int64_t tuple_count = 0;
  int64_t slice = 0;
};

// Throws Error naming the node when indices has rank 0 or its tuples are deeper than
// data's axes after batch_dims.
IndexTuples index_tuples(const Node& node, const Shape& data, const Shape& indices, int64_t batch_dims);

}  // namespace vkg
