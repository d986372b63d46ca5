// Reference kernels that move whole blocks of elements: Concat, Split, Slice,
// Transpose, Expand, Tile. Each one describes its copy as strides and hands it
// to copy_strided, so every DType is served by the same byte-level code.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/core/depth_space.h"
#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

std::vector<Tensor> concat(const KernelContext& ctx) {
  VKG_CHECK(ctx.num_inputs() > 0, ctx.node.describe() << ": needs at least one input");
  const Tensor& first = ctx.input(0);
  VKG_CHECK(first.rank() > 0, ctx.node.describe() << ": cannot concatenate scalars");
  // Concat-1 defaulted the axis to 1; from opset 4 it is required.
  const int64_t axis_attr = ctx.opset < 4 ? ctx.node.attr_int("axis", 1) : ctx.node.attr_int("axis");
  const int64_t axis = node_axis(ctx, axis_attr, first.rank());

  Shape out_shape = first.shape();
  out_shape[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& in = ctx.input(i);
    bool ok = in.dtype() == first.dtype() && in.rank() == first.rank();
    for (int64_t d = 0; ok && d < in.rank(); ++d) ok = d == axis || in.dim(d) == first.dim(d);
    VKG_CHECK(ok, ctx.node.describe() << ": input " << i << " " << in.describe() << " does not match input 0 "
                                      << first.describe() << " outside axis " << axis);
    out_shape[size_t(axis)] += in.dim(axis);
  }

  Tensor out(first.dtype(), out_shape);
  const size_t elem = dtype_size(out.dtype());
  const auto out_strides = contiguous_strides(out_shape);
  int64_t offset = 0;  // position along the axis
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& in = ctx.input(i);
    std::byte* dst = out.raw() + size_t(offset * out_strides[size_t(axis)]) * elem;
    if (!in.empty()) copy_strided(in.raw(), contiguous_strides(in.shape()), dst, out_strides, in.shape(), elem);
    offset += in.dim(axis);
  }
  return {out};
}

std::vector<Tensor> split(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = node_axis(ctx, ctx.node.attr_int("axis", 0), x.rank());
  const int64_t dim = x.dim(axis);
  const size_t n = ctx.num_outputs();
  // The sizes are an attribute in opsets 2..12, an optional input in opset 1 and from 13.
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    sizes = int_input(ctx, 1, "split");
  } else if (ctx.opset < 13) {
    sizes = ctx.node.attr_ints("split");
  }
  if (sizes.empty() && ctx.opset >= 18 && ctx.node.has_attr("num_outputs")) {
    // Split-18: parts of ceil(dim / num_outputs), the last one smaller.
    const int64_t parts = ctx.node.attr_int("num_outputs");
    VKG_CHECK(parts == int64_t(n), ctx.node.describe() << ": num_outputs is " << parts << " but the node has " << n
                                                       << " outputs");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * chunk, 0, chunk));
  } else if (sizes.empty()) {
    VKG_CHECK(dim % int64_t(n) == 0, ctx.node.describe() << ": axis " << axis << " of " << x.describe()
                                                         << " cannot be split into " << n << " equal parts");
    sizes.assign(n, dim / int64_t(n));
  }
  VKG_CHECK(sizes.size() == n, ctx.node.describe()
                                   << ": split has " << sizes.size() << " sizes for " << n << " outputs");
  VKG_CHECK(std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s >= 0; }) &&
                std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) == dim,
            ctx.node.describe() << ": split sizes " << shape_to_string(sizes) << " do not add up to " << dim
                                << ", the size of axis " << axis << " of " << x.describe());

  const size_t elem = dtype_size(x.dtype());
  const auto in_strides = contiguous_strides(x.shape());
  std::vector<Tensor> outs;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Shape shape = x.shape();
    shape[size_t(axis)] = size;
    Tensor out(x.dtype(), shape);
    if (!out.empty()) {
      const std::byte* src = x.raw() + size_t(offset * in_strides[size_t(axis)]) * elem;
      copy_strided(src, in_strides, out.raw(), contiguous_strides(shape), shape, elem);
    }
    outs.push_back(std::move(out));
    offset += size;
  }
  return outs;
}

// The elements a Slice keeps along one axis: `count` of them from `start` by `step`.
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// ONNX's clamping rules: negative values count from the back, then clamp into the axis.
SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceRange r{0, step, 0};
  if (dim == 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) r.count = (end - start + step - 1) / step;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (start > end) r.count = (start - end - step - 1) / -step;
  }
  r.start = start;
  return r;
}

std::vector<Tensor> slice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  // Slice-1 takes starts/ends/axes as attributes; from opset 10 they are inputs, plus steps.
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.node.attr_ints("starts");
    ends = ctx.node.attr_ints("ends");
    axes = ctx.node.attr_ints("axes");
  } else {
    starts = int_input(ctx, 1, "starts");
    ends = int_input(ctx, 2, "ends");
    if (ctx.has_input(3)) axes = int_input(ctx, 3, "axes");
    if (ctx.has_input(4)) steps = int_input(ctx, 4, "steps");
  }
  if (axes.empty() && !ctx.node.has_attr("axes") && !ctx.has_input(3)) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  VKG_CHECK(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size(),
            ctx.node.describe() << ": starts, ends, axes and steps differ in length");
  axes = node_axes(ctx, axes, x.rank());

  std::vector<SliceRange> ranges;
  for (int64_t d = 0; d < x.rank(); ++d) ranges.push_back({0, 1, x.dim(d)});
  for (size_t k = 0; k < axes.size(); ++k) {
    VKG_CHECK(steps[k] != 0, ctx.node.describe() << ": step must not be zero");
    ranges[size_t(axes[k])] = slice_range(starts[k], ends[k], steps[k], x.dim(axes[k]));
  }

  Shape shape;
  for (const SliceRange& r : ranges) shape.push_back(r.count);
  Tensor out(x.dtype(), shape);
  if (out.empty()) return {out};
  const auto in_strides = contiguous_strides(x.shape());
  std::vector<int64_t> src_strides;
  int64_t offset = 0;
  for (size_t d = 0; d < ranges.size(); ++d) {
    offset += ranges[d].start * in_strides[d];
    src_strides.push_back(ranges[d].step * in_strides[d]);
  }
  const size_t elem = dtype_size(x.dtype());
  copy_strided(x.raw() + size_t(offset) * elem, src_strides, out.raw(), contiguous_strides(shape), shape, elem);
  return {out};
}

// DepthToSpace and SpaceToDepth: the input's 6-D view, transposed (runtime/core/depth_space.h).
std::vector<Tensor> depth_space(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const BlockPermutation p = depth_space_permutation(ctx.node, x.shape());
  const auto view_strides = contiguous_strides(p.view);
  Shape shape;
  std::vector<int64_t> src_strides;
  for (int64_t a : p.perm) {
    shape.push_back(p.view[size_t(a)]);
    src_strides.push_back(view_strides[size_t(a)]);
  }
  Tensor out(x.dtype(), p.out_shape);
  copy_strided(x.raw(), src_strides, out.raw(), contiguous_strides(shape), shape, dtype_size(x.dtype()));
  return {out};
}

// Trilu (opset 14): the upper (j - i >= k) or lower (j - i <= k) triangle of every matrix
// of the last two axes, zeros elsewhere.
std::vector<Tensor> trilu(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, ctx.node.describe() << ": the input must have rank >= 2, got " << x.describe());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    const std::vector<int64_t> ks = int_input(ctx, 1, "k");
    VKG_CHECK(ks.size() == 1, ctx.node.describe() << ": k must hold one value");
    k = ks[0];
  }
  const bool upper = ctx.node.attr_int("upper", 1) != 0;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  Tensor out(x.dtype(), x.shape());
  const size_t elem = dtype_size(x.dtype());
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    if (upper ? j - i >= k : j - i <= k) std::memcpy(out.raw() + size_t(e) * elem, x.raw() + size_t(e) * elem, elem);
  }
  return {out};
}

std::vector<Tensor> transpose(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> reversed(size_t(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) reversed[size_t(d)] = x.rank() - 1 - d;
  const std::vector<int64_t> given = ctx.node.attr_ints("perm", reversed);
  VKG_CHECK(int64_t(given.size()) == x.rank(),
            ctx.node.describe() << ": perm " << shape_to_string(given) << " does not match " << x.describe());
  const std::vector<int64_t> perm = node_axes(ctx, given, x.rank());

  const auto in_strides = contiguous_strides(x.shape());
  Shape shape;
  std::vector<int64_t> src_strides;
  for (int64_t p : perm) {
    shape.push_back(x.dim(p));
    src_strides.push_back(in_strides[size_t(p)]);
  }
  Tensor out(x.dtype(), shape);
  copy_strided(x.raw(), src_strides, out.raw(), contiguous_strides(shape), shape, dtype_size(x.dtype()));
  return {out};
}

std::vector<Tensor> expand(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape requested = int_input(ctx, 1, "shape");
  Shape shape;
  try {
    shape = broadcast_shapes(x.shape(), requested);
  } catch (const Error& e) {
    VKG_THROW(ctx.node.describe() << ": " << e.what());
  }
  Tensor out(x.dtype(), shape);
  copy_strided(x.raw(), broadcast_strides(x.shape(), shape), out.raw(), contiguous_strides(shape), shape,
               dtype_size(x.dtype()));
  return {out};
}

std::vector<Tensor> tile(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> repeats;
  if (ctx.opset < 6) {
    // Tile-1: a scalar `tiles` count along one `axis`, both inputs.
    repeats.assign(size_t(x.rank()), 1);
    const int64_t axis = node_axis(ctx, int_input(ctx, 2, "axis").at(0), x.rank());
    repeats[size_t(axis)] = int_input(ctx, 1, "tiles").at(0);
  } else {
    repeats = int_input(ctx, 1, "repeats");
  }
  VKG_CHECK(int64_t(repeats.size()) == x.rank(),
            ctx.node.describe() << ": repeats " << shape_to_string(repeats) << " do not match " << x.describe());
  for (int64_t r : repeats)
    VKG_CHECK(r >= 0, ctx.node.describe() << ": negative repeat in " << shape_to_string(repeats));

  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) shape.push_back(x.dim(d) * repeats[size_t(d)]);
  Tensor out(x.dtype(), shape);
  // View the output as [r0, d0, r1, d1, ...]: the repeat index does not move in the input.
  const auto in_strides = contiguous_strides(x.shape());
  const auto out_strides = contiguous_strides(shape);
  Shape view;
  std::vector<int64_t> src_strides, dst_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    view.push_back(repeats[d]);
    src_strides.push_back(0);
    dst_strides.push_back(x.dim(int64_t(d)) * out_strides[d]);
    view.push_back(x.dim(int64_t(d)));
    src_strides.push_back(in_strides[d]);
    dst_strides.push_back(out_strides[d]);
  }
  copy_strided(x.raw(), src_strides, out.raw(), dst_strides, view, dtype_size(x.dtype()));
  return {out};
}

// ReverseSequence (opset 10): along time_axis, the first sequence_lens[b] elements of
// every batch entry b (on batch_axis) reversed, the rest copied; the two axes are 0 and 1.
std::vector<Tensor> reverse_sequence(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() >= 2, node.describe() << ": the input must have rank >= 2, got " << x.describe());
  const int64_t time_axis = node.attr_int("time_axis", 0), batch_axis = node.attr_int("batch_axis", 1);
  VKG_CHECK((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0),
            node.describe() << ": time_axis and batch_axis must be 0 and 1 (in either order), got " << time_axis
                            << " and " << batch_axis);
  const std::vector<int64_t> lens = int_input(ctx, 1, "sequence_lens");
  const int64_t steps = x.dim(time_axis), batch = x.dim(batch_axis);
  VKG_CHECK(int64_t(lens.size()) == batch,
            node.describe() << ": sequence_lens has " << lens.size() << " values for a batch of " << batch);
  for (int64_t len : lens)
    VKG_CHECK(len >= 0 && len <= steps,
              node.describe() << ": sequence length " << len << " is outside [0, " << steps << "]");
  const int64_t inner = x.size() / std::max<int64_t>(1, steps * batch);
  Tensor out(x.dtype(), x.shape());
  const size_t elem = dtype_size(x.dtype());
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t outer = e / inner, i = e % inner;
    const int64_t t = time_axis == 0 ? outer / batch : outer % steps;
    const int64_t b = time_axis == 0 ? outer % batch : outer / steps;
    const int64_t len = lens[size_t(b)];
    const int64_t src_t = t < len ? len - 1 - t : t;
    const int64_t src = ((time_axis == 0 ? src_t * batch + b : b * steps + src_t) * inner) + i;
    std::memcpy(out.raw() + size_t(e) * elem, x.raw() + size_t(src) * elem, elem);
  }
  return {out};
}

// Compress (opsets 9, 11): the slices along `axis` (of the flattened input when axis
// is absent) whose condition is true; a condition shorter than the axis counts as false.
std::vector<Tensor> compress(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  VKG_CHECK(cond.dtype() == DType::Bool && cond.rank() == 1,
            node.describe() << ": the condition must be a 1-D bool tensor, got " << cond.describe());
  const bool flat = !node.has_attr("axis");
  const int64_t axis = flat ? 0 : node_axis(ctx, node.attr_int("axis"), x.rank());
  const int64_t dim = flat ? x.size() : x.dim(axis);
  std::vector<int64_t> kept;
  for (int64_t j = 0; j < cond.size(); ++j) {
    if (!cond.data<bool>()[j]) continue;
    VKG_CHECK(j < dim, node.describe() << ": the condition selects index " << j << " of an axis of size " << dim);
    kept.push_back(j);
  }
  int64_t inner = 1;
  Shape shape = {int64_t(kept.size())};
  if (!flat) {
    for (int64_t d = axis + 1; d < int64_t(x.rank()); ++d) inner *= x.dim(d);
    shape = x.shape();
    shape[size_t(axis)] = int64_t(kept.size());
  }
  Tensor out(x.dtype(), shape);
  const size_t elem = dtype_size(x.dtype());
  const auto k = int64_t(kept.size());
  for (int64_t e = 0; e < out.size(); ++e) {
    const int64_t i = e % inner, j = (e / inner) % k, o = e / (inner * k);
    const int64_t src = (o * dim + kept[size_t(j)]) * inner + i;
    std::memcpy(out.raw() + size_t(e) * elem, x.raw() + size_t(src) * elem, elem);
  }
  return {out};
}

}  // namespace

void register_movement_ops(OpRegistry& registry) {
  registry.add("Concat", concat);
  registry.add("Split", split);
  registry.add("Slice", slice);
  registry.add("Transpose", transpose);
  registry.add("ReverseSequence", reverse_sequence);
  registry.add("Compress", compress);
  registry.add("Trilu", trilu);
  registry.add("DepthToSpace", depth_space);
  registry.add("SpaceToDepth", depth_space);
  registry.add("Expand", expand);
  registry.add("Tile", tile);
}

}  // namespace vkg
