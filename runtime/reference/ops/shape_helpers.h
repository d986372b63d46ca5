// Private helpers of the data-movement, shape, gather/scatter, Pad and Resize
// reference kernels (shape.cpp, movement.cpp, gather_scatter.cpp, pad.cpp,
// resize.cpp). Movement works on raw bytes, one element being
// dtype_size(dtype) bytes, so every kernel serves every DType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/reference/kernel.h"

namespace vkg {

// Registration of the op families split out of shape.cpp and resize.cpp.
void register_movement_ops(OpRegistry& registry);        // Concat, Split, Slice, Transpose, Expand, Tile
void register_gather_scatter_ops(OpRegistry& registry);  // Gather*, Scatter*, NonZero
void register_pad_ops(OpRegistry& registry);             // Pad

// The values of an integer input (int32, int64 or any other integer type) as int64;
// throws Error naming the node and `what` when the input has a non-integer type.
std::vector<int64_t> int_input(const KernelContext& ctx, size_t index, const char* what);

// Like normalize_axis, but the Error names the node.
int64_t node_axis(const KernelContext& ctx, int64_t axis, int64_t rank);

// Normalises every axis of a list against `rank`, rejecting out-of-range and repeated axes.
std::vector<int64_t> node_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank);

// Walks every multi-index of a shape in row-major order:
//   for (IndexIterator it(shape); !it.done(); it.next()) use(it.index());
class IndexIterator {
 public:
  explicit IndexIterator(const Shape& shape);
  bool done() const { return done_; }
  const std::vector<int64_t>& index() const { return index_; }
  void next();

 private:
  Shape shape_;
  std::vector<int64_t> index_;
  bool done_ = false;
};

// For every multi-index i of `shape`, copies one element of `elem_size` bytes from
// src[dot(i, src_strides)] to dst[dot(i, dst_strides)]. Strides are in elements and
// may be zero (broadcast) or negative (reversed slices); both pointers address the
// element of index 0.
void copy_strided(const std::byte* src, const std::vector<int64_t>& src_strides, std::byte* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape, size_t elem_size);

// How Scatter* ops combine an update with the value already there.
enum class ScatterReduction { None, Add, Mul, Max, Min };

// Parses the `reduction` attribute ("none", "add", "mul", "max", "min").
ScatterReduction scatter_reduction(const KernelContext& ctx);

// dst[i] = reduce(dst[i], src[i]) for `count` elements of type `dtype`.
void reduce_elements(DType dtype, ScatterReduction reduction, std::byte* dst, const std::byte* src, int64_t count);

}  // namespace vkg
