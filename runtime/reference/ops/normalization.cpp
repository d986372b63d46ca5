// The normalization op family: registration and the helpers its files share.
#include "runtime/reference/ops/normalization_common.h"

namespace vkg {

void register_normalization_ops(OpRegistry& registry) {
  register_reduce_ops(registry);
  register_softmax_ops(registry);
  register_norm_ops(registry);
}

namespace {

// Offsets of every index of `dims` (row-major order) under `strides`.
std::vector<int64_t> enumerate_offsets(const Shape& dims, const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets(size_t(num_elements(dims)));
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  for (size_t i = 0; i < offsets.size(); ++i) {
    offsets[i] = offset;
    for (size_t d = dims.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= index[d] * strides[d];
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

ReducePlan make_reduce_plan(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  VKG_CHECK(reduced.size() == shape.size(),
            "reduce plan: mask rank " << reduced.size() << " for shape " << shape_to_string(shape));
  const std::vector<int64_t> strides = contiguous_strides(shape);
  const size_t rank = shape.size();

  // The trailing kept axes form the contiguous inner run.
  size_t inner_begin = rank;
  while (inner_begin > 0 && !reduced[inner_begin - 1]) --inner_begin;

  ReducePlan plan;
  Shape group_dims, reduced_dims;
  std::vector<int64_t> group_strides, reduced_strides;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reduced_dims.push_back(shape[d]);
      reduced_strides.push_back(strides[d]);
      if (keepdims) plan.out_shape.push_back(1);
    } else {
      plan.out_shape.push_back(shape[d]);
      if (d >= inner_begin) {
        plan.inner *= shape[d];
      } else {
        group_dims.push_back(shape[d]);
        group_strides.push_back(strides[d]);
      }
    }
  }
  plan.group_offsets = enumerate_offsets(group_dims, group_strides);
  plan.reduced_offsets = enumerate_offsets(reduced_dims, reduced_strides);
  return plan;
}

std::vector<double> load_doubles(const Node& node, const Tensor& t) {
  std::vector<double> values(size_t(t.size()));
  visit_float_dtype(node, t.dtype(), [&]<typename T>() {
    const T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = to_double(p[i]);
  });
  return values;
}

Tensor store_doubles(const Node& node, DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor out(dtype, shape);
  VKG_CHECK(size_t(out.size()) == values.size(),
            node.describe() << ": internal error: " << values.size() << " values for shape " << shape_to_string(shape));
  visit_float_dtype(node, dtype, [&]<typename T>() {
    T* p = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = from_double<T>(values[i]);
  });
  return out;
}

std::vector<double> broadcast_doubles(const Node& node, const Tensor& t, const Shape& target, const char* what) {
  bool fits = t.rank() <= int64_t(target.size());
  for (int64_t d = 0; fits && d < t.rank(); ++d) {
    const int64_t td = target[target.size() - size_t(t.rank()) + size_t(d)];
    fits = t.dim(d) == td || t.dim(d) == 1;
  }
  VKG_CHECK(fits, node.describe() << ": " << what << " of shape " << shape_to_string(t.shape())
                                  << " cannot be broadcast to " << shape_to_string(target));
  const std::vector<double> values = load_doubles(node, t);
  if (int64_t(values.size()) == num_elements(target)) return values;
  const std::vector<int64_t> offsets = enumerate_offsets(target, broadcast_strides(t.shape(), target));
  std::vector<double> out(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) out[i] = values[size_t(offsets[i])];
  return out;
}

}  // namespace vkg
