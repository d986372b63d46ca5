#include "runtime/reference/ops/shape_helpers.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace vkg {

std::vector<int64_t> int_input(const KernelContext& ctx, size_t index, const char* what) {
  const Tensor& t = ctx.input(index);
  VKG_CHECK(is_integer(t.dtype()), ctx.node.describe()
                                       << ": " << what << " must be an integer tensor, got " << t.describe());
  return t.to_int64s();
}

int64_t node_axis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  VKG_CHECK(axis >= -rank && axis < rank, ctx.node.describe()
                                              << ": axis " << axis << " is out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> node_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t axis = node_axis(ctx, a, rank);
    VKG_CHECK(std::find(out.begin(), out.end(), axis) == out.end(),
              ctx.node.describe() << ": axis " << a << " is given more than once");
    out.push_back(axis);
  }
  return out;
}

IndexIterator::IndexIterator(const Shape& shape) : shape_(shape), index_(shape.size(), 0) {
  done_ = num_elements(shape_) == 0;
}

void IndexIterator::next() {
  for (size_t d = shape_.size(); d-- > 0;) {
    if (++index_[d] < shape_[d]) return;
    index_[d] = 0;
  }
  done_ = true;
}

void copy_strided(const std::byte* src, const std::vector<int64_t>& src_strides, std::byte* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape, size_t elem_size) {
  const int64_t total = num_elements(shape);
  if (total == 0) return;
  if (shape.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  const size_t rank = shape.size();
  const int64_t inner = shape.back();
  const int64_t src_inner = src_strides.back(), dst_inner = dst_strides.back();
  const auto esize = int64_t(elem_size);
  std::vector<int64_t> index(rank, 0);
  int64_t src_off = 0, dst_off = 0;  // in elements
  for (int64_t row = 0; row < total / inner; ++row) {
    if (src_inner == 1 && dst_inner == 1) {
      std::memcpy(dst + dst_off * esize, src + src_off * esize, size_t(inner) * elem_size);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(dst + (dst_off + j * dst_inner) * esize, src + (src_off + j * src_inner) * esize, elem_size);
    }
    // Advance the outer dimensions like an odometer.
    for (size_t d = rank - 1; d-- > 0;) {
      src_off += src_strides[d];
      dst_off += dst_strides[d];
      if (++index[d] < shape[d]) break;
      src_off -= src_strides[d] * shape[d];
      dst_off -= dst_strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

ScatterReduction scatter_reduction(const KernelContext& ctx) {
  const std::string r = ctx.node.attr_string("reduction", "none");
  if (r == "none") return ScatterReduction::None;
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if (r == "max") return ScatterReduction::Max;
  if (r == "min") return ScatterReduction::Min;
  VKG_THROW(ctx.node.describe() << ": unknown reduction '" << r << "'");
}

namespace {

// One reduction step in T's own arithmetic (half types go through float, bool is logical).
template <class T> T reduce_one(ScatterReduction reduction, T a, T b) {
  if constexpr (is_half_type<T>) {
    return T(reduce_one<float>(reduction, float(a), float(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (reduction) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
        return a || b;
      case ScatterReduction::Mul:
        return a && b;
      case ScatterReduction::Max:
        return a || b;
      case ScatterReduction::Min:
        return a && b;
    }
    return b;
  } else {
    switch (reduction) {
      case ScatterReduction::None:
        return b;
      case ScatterReduction::Add:
        return T(a + b);
      case ScatterReduction::Mul:
        return T(a * b);
      case ScatterReduction::Max:
        return std::max(a, b);
      case ScatterReduction::Min:
        return std::min(a, b);
    }
    return b;
  }
}

}  // namespace

void reduce_elements(DType dtype, ScatterReduction reduction, std::byte* dst, const std::byte* src, int64_t count) {
  visit_dtype(dtype, [&]<typename T>() {
    for (int64_t i = 0; i < count; ++i) {
      T a, b;
      std::memcpy(&a, dst + i * int64_t(sizeof(T)), sizeof(T));
      std::memcpy(&b, src + i * int64_t(sizeof(T)), sizeof(T));
      const T r = reduce_one<T>(reduction, a, b);
      std::memcpy(dst + i * int64_t(sizeof(T)), &r, sizeof(T));
    }
  });
}

}  // namespace vkg
