// Reference kernels that move elements by index tensors: Gather, GatherElements,
// GatherND, Scatter/ScatterElements, ScatterND, NonZero, Unique. Indices may be int32 or
// int64 and negative (counting from the back); out-of-range ones are Errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "runtime/core/index_tuples.h"
#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

// Validates one index against an axis of size `dim` and makes it non-negative.
int64_t checked_index(const KernelContext& ctx, int64_t index, int64_t dim) {
  VKG_CHECK(index >= -dim && index < dim, ctx.node.describe()
                                              << ": index " << index << " is out of range for an axis of size " << dim);
  return index < 0 ? index + dim : index;
}

std::vector<Tensor> gather(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const int64_t axis = node_axis(ctx, ctx.node.attr_int("axis", 0), data.rank());
  const int64_t dim = data.dim(axis);
  const int64_t outer = num_elements(data.shape(), 0, size_t(axis));
  const int64_t inner = num_elements(data.shape(), size_t(axis) + 1, data.shape().size());

  Shape shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  Tensor out(data.dtype(), shape);
  const size_t block = size_t(inner) * dtype_size(data.dtype());
  const auto count = int64_t(idx.size());
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = checked_index(ctx, idx[size_t(k)], dim);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.raw() + size_t(o * count + k) * block, data.raw() + size_t(o * dim + i) * block, block);
  }
  return {out};
}

// Offset (in elements) of `index` in a tensor with `strides`, with the axis coordinate replaced.
int64_t offset_with_axis(const std::vector<int64_t>& index, const std::vector<int64_t>& strides, int64_t axis,
                         int64_t axis_index) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += (int64_t(d) == axis ? axis_index : index[d]) * strides[d];
  return offset;
}

// Checks that `indices` can address `data` along every axis but `axis` (GatherElements, ScatterElements).
void check_element_indices(const KernelContext& ctx, const Tensor& data, const Tensor& indices, int64_t axis) {
  bool ok = indices.rank() == data.rank();
  for (int64_t d = 0; ok && d < data.rank(); ++d) ok = d == axis || indices.dim(d) <= data.dim(d);
  VKG_CHECK(ok, ctx.node.describe() << ": indices " << indices.describe() << " do not fit data " << data.describe()
                                    << " outside axis " << axis);
}

std::vector<Tensor> gather_elements(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const int64_t axis = node_axis(ctx, ctx.node.attr_int("axis", 0), data.rank());
  check_element_indices(ctx, data, indices, axis);

  Tensor out(data.dtype(), indices.shape());
  const size_t elem = dtype_size(data.dtype());
  const auto strides = contiguous_strides(data.shape());
  size_t k = 0;
  for (IndexIterator it(indices.shape()); !it.done(); it.next(), ++k) {
    const int64_t i = checked_index(ctx, idx[k], data.dim(axis));
    std::memcpy(out.raw() + k * elem, data.raw() + size_t(offset_with_axis(it.index(), strides, axis, i)) * elem, elem);
  }
  return {out};
}

// Element offset, inside one batch of data, of the slice that an index tuple points at.
int64_t nd_offset(const KernelContext& ctx, const Tensor& data, const std::vector<int64_t>& strides, int64_t batch_dims,
                  const int64_t* tuple, int64_t depth) {
  int64_t offset = 0;
  for (int64_t j = 0; j < depth; ++j) {
    const int64_t d = batch_dims + j;
    offset += checked_index(ctx, tuple[j], data.dim(d)) * strides[size_t(d)];
  }
  return offset;
}

std::vector<Tensor> gather_nd(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const int64_t batch_dims = ctx.node.attr_int("batch_dims", 0);
  VKG_CHECK(batch_dims >= 0 && batch_dims < std::min(data.rank(), indices.rank()),
            ctx.node.describe() << ": batch_dims " << batch_dims << " is out of range");
  for (int64_t d = 0; d < batch_dims; ++d)
    VKG_CHECK(data.dim(d) == indices.dim(d), ctx.node.describe() << ": batch dimensions of " << data.describe()
                                                                 << " and " << indices.describe() << " differ");
  const IndexTuples nd = index_tuples(ctx.node, data.shape(), indices.shape(), batch_dims);

  Shape shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + batch_dims + nd.depth, data.shape().end());
  Tensor out(data.dtype(), shape);
  const int64_t batches = num_elements(data.shape(), 0, size_t(batch_dims));
  const int64_t batch_size = num_elements(data.shape(), size_t(batch_dims), data.shape().size());
  const size_t elem = dtype_size(data.dtype());
  const auto strides = contiguous_strides(data.shape());
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t t = 0; t < nd.tuple_count; ++t) {
      const int64_t k = b * nd.tuple_count + t;
      const int64_t src =
          b * batch_size + nd_offset(ctx, data, strides, batch_dims, &idx[size_t(k * nd.depth)], nd.depth);
      std::memcpy(out.raw() + size_t(k * nd.slice) * elem, data.raw() + size_t(src) * elem, size_t(nd.slice) * elem);
    }
  }
  return {out};
}

// ScatterElements (and the deprecated Scatter of opsets 9-10).
std::vector<Tensor> scatter_elements(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const int64_t axis = node_axis(ctx, ctx.node.attr_int("axis", 0), data.rank());
  const ScatterReduction reduction = scatter_reduction(ctx);
  check_element_indices(ctx, data, indices, axis);
  VKG_CHECK(updates.shape() == indices.shape() && updates.dtype() == data.dtype(),
            ctx.node.describe() << ": updates " << updates.describe() << " do not match indices " << indices.describe()
                                << " and data " << data.describe());

  Tensor out = data;
  const size_t elem = dtype_size(data.dtype());
  const auto strides = contiguous_strides(data.shape());
  size_t k = 0;
  for (IndexIterator it(indices.shape()); !it.done(); it.next(), ++k) {
    const int64_t i = checked_index(ctx, idx[k], data.dim(axis));
    std::byte* dst = out.raw() + size_t(offset_with_axis(it.index(), strides, axis, i)) * elem;
    reduce_elements(data.dtype(), reduction, dst, updates.raw() + k * elem, 1);
  }
  return {out};
}

std::vector<Tensor> scatter_nd(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const std::vector<int64_t> idx = int_input(ctx, 1, "indices");
  const ScatterReduction reduction = scatter_reduction(ctx);
  const IndexTuples nd = index_tuples(ctx.node, data.shape(), indices.shape(), 0);
  Shape expected(indices.shape().begin(), indices.shape().end() - 1);
  expected.insert(expected.end(), data.shape().begin() + nd.depth, data.shape().end());
  VKG_CHECK(updates.shape() == expected && updates.dtype() == data.dtype(),
            ctx.node.describe() << ": updates " << updates.describe() << " should be " << dtype_name(data.dtype())
                                << shape_to_string(expected));

  Tensor out = data;
  const size_t elem = dtype_size(data.dtype());
  const auto strides = contiguous_strides(data.shape());
  for (int64_t t = 0; t < nd.tuple_count; ++t) {
    const int64_t dst = nd_offset(ctx, data, strides, 0, &idx[size_t(t * nd.depth)], nd.depth);
    reduce_elements(data.dtype(), reduction, out.raw() + size_t(dst) * elem,
                    updates.raw() + size_t(t * nd.slice) * elem, nd.slice);
  }
  return {out};
}

std::vector<Tensor> non_zero(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  // Like numpy, a scalar counts as a one-element vector.
  const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
  int64_t count = 0;
  for (int64_t i = 0; i < x.size(); ++i)
    if (x.get_as_double(i) != 0.0) ++count;

  const auto rank = int64_t(shape.size());
  Tensor out(DType::Int64, {rank, count});
  int64_t* coords = out.data<int64_t>();
  int64_t k = 0, found = 0;
  for (IndexIterator it(shape); !it.done(); it.next(), ++k) {
    if (x.get_as_double(k) == 0.0) continue;
    for (int64_t d = 0; d < rank; ++d) coords[d * count + found] = it.index()[size_t(d)];
    ++found;
  }
  return {out};
}

// Unique (opset 11): the distinct elements of the flattened input, or the distinct slices
// along `axis`, sorted ascending (slices lexicographically) or in order of first occurrence,
// with the index of each one's first occurrence, every input element's (slice's) position
// in the output, and how often each occurs.
std::vector<Tensor> unique(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool sorted = ctx.node.attr_int("sorted", 1) != 0;
  Shape shape = {x.size()};
  int64_t axis = 0;
  if (ctx.node.attrs.count("axis")) {
    shape = x.shape();
    axis = node_axis(ctx, ctx.node.attr_int("axis"), x.rank());
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t dim = shape[size_t(axis)];
  // -1, 0 or 1 as slice a orders before, with or after slice b.
  const auto compare = [&](int64_t a, int64_t b) {
    int result = 0;
    visit_dtype(x.dtype(), [&]<typename T>() {
      const T* v = x.data<T>();
      for (int64_t o = 0; o < outer && result == 0; ++o)
        for (int64_t i = 0; i < inner && result == 0; ++i) {
          const T va = v[(o * dim + a) * inner + i], vb = v[(o * dim + b) * inner + i];
          if constexpr (std::is_floating_point_v<T> || is_half_type<T>) {
            // A total order (NaNs last, all equal), so that the sort stays well defined.
            const bool na = std::isnan(float(va)), nb = std::isnan(float(vb));
            if (na || nb) {
              result = na == nb ? 0 : (na ? 1 : -1);
              continue;
            }
          }
          if (va < vb) result = -1;
          else if (vb < va) result = 1;
        }
    });
    return result;
  };
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  std::vector<int64_t> firsts, counts, group_of(static_cast<size_t>(dim));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      firsts.push_back(order[k]);  // the stable sort puts the first occurrence first
      counts.push_back(0);
    }
    group_of[size_t(order[k])] = int64_t(firsts.size()) - 1;
    ++counts.back();
  }
  const int64_t groups = int64_t(firsts.size());
  std::vector<int64_t> rank_of(static_cast<size_t>(groups));
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {  // renumber the groups by first occurrence
    std::vector<int64_t> by_first(static_cast<size_t>(groups));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return firsts[size_t(a)] < firsts[size_t(b)]; });
    for (int64_t g = 0; g < groups; ++g) rank_of[size_t(by_first[size_t(g)])] = g;
  }
  std::vector<int64_t> indices(static_cast<size_t>(groups)), group_counts(static_cast<size_t>(groups));
  std::vector<int64_t> inverse(static_cast<size_t>(dim));
  for (int64_t g = 0; g < groups; ++g) {
    indices[size_t(rank_of[size_t(g)])] = firsts[size_t(g)];
    group_counts[size_t(rank_of[size_t(g)])] = counts[size_t(g)];
  }
  for (int64_t i = 0; i < dim; ++i) inverse[size_t(i)] = rank_of[size_t(group_of[size_t(i)])];
  Shape y_shape = shape;
  y_shape[size_t(axis)] = groups;
  Tensor y(x.dtype(), y_shape);
  const size_t elem = dtype_size(x.dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g)
      std::memcpy(y.raw() + size_t((o * groups + g) * inner) * elem,
                  x.raw() + size_t((o * dim + indices[size_t(g)]) * inner) * elem, size_t(inner) * elem);
  return {y, Tensor::from_vector<int64_t>({groups}, indices), Tensor::from_vector<int64_t>({dim}, inverse),
          Tensor::from_vector<int64_t>({groups}, group_counts)};
}

}  // namespace

void register_gather_scatter_ops(OpRegistry& registry) {
  registry.add("Gather", gather);
  registry.add("GatherElements", gather_elements);
  registry.add("GatherND", gather_nd);
  registry.add("Scatter", scatter_elements);
  registry.add("ScatterElements", scatter_elements);
  registry.add("ScatterND", scatter_nd);
  registry.add("NonZero", non_zero);
  registry.add("Unique", unique);
}

}  // namespace vkg
