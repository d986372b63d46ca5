#include "runtime/core/index_tuples.h"

#include "runtime/core/error.h"

namespace vkg {

IndexTuples index_tuples(const Node& node, const Shape& data, const Shape& indices, int64_t batch_dims) {
  VKG_CHECK(!indices.empty(), node.describe() << ": indices must have rank >= 1");
  IndexTuples tuples;
  tuples.depth = indices.back();
  VKG_CHECK(
      tuples.depth >= 1 && tuples.depth <= int64_t(data.size()) - batch_dims,
      node.describe() << ": indices " << shape_to_string(indices) << " cannot index data " << shape_to_string(data));
  tuples.tuple_count = num_elements(indices, size_t(batch_dims), indices.size() - 1);
  tuples.slice = num_elements(data, size_t(batch_dims + tuples.depth), data.size());
  return tuples;
}

}  // namespace vkg
