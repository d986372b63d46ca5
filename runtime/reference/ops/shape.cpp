// Reference kernels of the shape and constant ops: Reshape, Flatten, Squeeze,
// Unsqueeze, Shape, Size, Constant, ConstantOfShape, Range. The other
// data-movement ops live in movement.cpp and gather_scatter.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

std::vector<Tensor> reshape(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  // Reshape-1 took the shape as an attribute; from opset 5 it is an input.
  const std::vector<int64_t> requested =
      ctx.opset < 5 && !ctx.has_input(1) ? ctx.node.attr_ints("shape") : int_input(ctx, 1, "shape");
  const bool allow_zero = ctx.node.attr_int("allowzero", 0) != 0;

  Shape shape;
  int64_t infer_axis = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allow_zero) {
      VKG_CHECK(int64_t(i) < data.rank(), ctx.node.describe()
                                              << ": shape " << shape_to_string(requested) << " copies dimension " << i
                                              << " of " << data.describe() << ", which does not exist");
      d = data.dim(int64_t(i));
    }
    if (d == -1) {
      VKG_CHECK(infer_axis < 0, ctx.node.describe()
                                    << ": shape " << shape_to_string(requested) << " has more than one -1");
      infer_axis = int64_t(i);
      d = 1;
    }
    VKG_CHECK(d >= 0, ctx.node.describe() << ": invalid dimension " << d << " in shape " << shape_to_string(requested));
    shape.push_back(d);
    known *= d;
  }
  if (infer_axis >= 0) {
    VKG_CHECK(known != 0 && data.size() % known == 0,
              ctx.node.describe() << ": cannot reshape " << data.describe() << " to " << shape_to_string(requested));
    shape[size_t(infer_axis)] = data.size() / known;
  }
  VKG_CHECK(num_elements(shape) == data.size(),
            ctx.node.describe() << ": cannot reshape " << data.describe() << " to " << shape_to_string(requested));
  return {data.reshaped(shape)};
}

std::vector<Tensor> flatten(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t axis = ctx.node.attr_int("axis", 1);
  // Unlike most axes, Flatten's may equal the rank.
  VKG_CHECK(axis >= -x.rank() && axis <= x.rank(),
            ctx.node.describe() << ": axis " << axis << " is out of range for rank " << x.rank());
  if (axis < 0) axis += x.rank();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis; d < x.rank(); ++d) inner *= x.dim(d);
  return {x.reshaped({outer, inner})};
}

// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on.
std::optional<std::vector<int64_t>> squeeze_axes(const KernelContext& ctx) {
  if (ctx.opset < 13) {
    if (!ctx.node.has_attr("axes")) return std::nullopt;
    return ctx.node.attr_ints("axes");
  }
  if (!ctx.has_input(1)) return std::nullopt;
  return int_input(ctx, 1, "axes");
}

std::vector<Tensor> squeeze(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto given = squeeze_axes(ctx);
  std::vector<bool> drop(size_t(x.rank()), false);
  if (given) {
    for (int64_t axis : node_axes(ctx, *given, x.rank())) {
      VKG_CHECK(x.dim(axis) == 1, ctx.node.describe() << ": cannot squeeze axis " << axis << " of " << x.describe()
                                                      << ", its size is not 1");
      drop[size_t(axis)] = true;
    }
  } else {
    for (int64_t d = 0; d < x.rank(); ++d) drop[size_t(d)] = x.dim(d) == 1;
  }
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!drop[size_t(d)]) shape.push_back(x.dim(d));
  return {x.reshaped(shape)};
}

std::vector<Tensor> unsqueeze(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto given = squeeze_axes(ctx);
  VKG_CHECK(given, ctx.node.describe() << ": axes are required");
  const int64_t out_rank = x.rank() + int64_t(given->size());
  std::vector<bool> inserted(size_t(out_rank), false);
  for (int64_t axis : node_axes(ctx, *given, out_rank)) inserted[size_t(axis)] = true;
  Shape shape;
  int64_t next_in = 0;
  for (int64_t d = 0; d < out_rank; ++d) shape.push_back(inserted[size_t(d)] ? 1 : x.dim(next_in++));
  return {x.reshaped(shape)};
}

std::vector<Tensor> shape_op(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  // start/end exist from opset 15; negative values count from the back, then clamp.
  auto clamp_dim = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp_dim(ctx.node.attr_int("start", 0));
  const int64_t end = clamp_dim(ctx.node.attr_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(x.dim(d));
  return {Tensor::from_vector<int64_t>({int64_t(dims.size())}, dims)};
}

std::vector<Tensor> size_op(const KernelContext& ctx) { return {Tensor::scalar<int64_t>(ctx.input(0).size())}; }

std::vector<Tensor> constant(const KernelContext& ctx) {
  const Node& n = ctx.node;
  if (n.has_attr("value")) return {n.attr_tensor("value")};
  if (n.has_attr("value_float")) return {Tensor::scalar<float>(n.attr_float("value_float", 0.0f))};
  if (n.has_attr("value_floats")) {
    const auto v = n.attr_floats("value_floats");
    return {Tensor::from_vector<float>({int64_t(v.size())}, v)};
  }
  if (n.has_attr("value_int")) return {Tensor::scalar<int64_t>(n.attr_int("value_int"))};
  if (n.has_attr("value_ints")) {
    const auto v = n.attr_ints("value_ints");
    return {Tensor::from_vector<int64_t>({int64_t(v.size())}, v)};
  }
  VKG_CHECK(!n.has_attr("sparse_value"), n.describe() << ": sparse_value constants are not supported");
  VKG_CHECK(!n.has_attr("value_string") && !n.has_attr("value_strings"), n.describe()
                                                                             << ": string constants are not supported");
  VKG_THROW(n.describe() << ": has none of the value attributes");
}

std::vector<Tensor> constant_of_shape(const KernelContext& ctx) {
  const Shape shape = int_input(ctx, 0, "shape");
  for (int64_t d : shape)
    VKG_CHECK(d >= 0, ctx.node.describe() << ": negative dimension in shape " << shape_to_string(shape));
  const Tensor value = ctx.node.has_attr("value") ? ctx.node.attr_tensor("value") : Tensor::scalar<float>(0.0f);
  VKG_CHECK(value.size() == 1, ctx.node.describe()
                                   << ": value must hold exactly one element, got " << value.describe());
  Tensor out(value.dtype(), shape);
  const size_t elem = dtype_size(value.dtype());
  for (int64_t i = 0; i < out.size(); ++i) std::memcpy(out.raw() + size_t(i) * elem, value.raw(), elem);
  return {out};
}

template <class T> Tensor range_of(const KernelContext& ctx) {
  T v[3];
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& t = ctx.input(i);
    VKG_CHECK(t.size() == 1 && t.dtype() == dtype_of<T>,
              ctx.node.describe() << ": start, limit and delta must be scalars of one type, got " << t.describe());
    v[i] = t.data<T>()[0];
  }
  const T start = v[0], limit = v[1], delta = v[2];
  VKG_CHECK(delta != T(0), ctx.node.describe() << ": delta must not be zero");
  int64_t count = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double n = std::ceil(double((limit - start) / delta));
    VKG_CHECK(std::isfinite(n), ctx.node.describe() << ": the number of elements is not finite");
    count = std::max<int64_t>(int64_t(n), 0);
  } else {
    const int64_t diff = int64_t(limit) - int64_t(start), step = int64_t(delta);
    if (step > 0 && diff > 0) count = (diff + step - 1) / step;
    if (step < 0 && diff < 0) count = (-diff - step - 1) / -step;
  }
  Tensor out(dtype_of<T>, {count});
  for (int64_t i = 0; i < count; ++i) out.data<T>()[i] = T(start + T(i) * delta);
  return out;
}

std::vector<Tensor> range(const KernelContext& ctx) {
  const DType dt = ctx.input(0).dtype();
  switch (dt) {
    case DType::Float32:
      return {range_of<float>(ctx)};
    case DType::Float64:
      return {range_of<double>(ctx)};
    case DType::Int16:
      return {range_of<int16_t>(ctx)};
    case DType::Int32:
      return {range_of<int32_t>(ctx)};
    case DType::Int64:
      return {range_of<int64_t>(ctx)};
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int8:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
      break;
  }
  VKG_THROW(ctx.node.describe() << ": unsupported type " << dtype_name(dt));
}

// OneHot (opsets 9, 11): a new axis of length `depth` at `axis`; element i along it is
// values[1] where the index (truncated to an integer; negative ones count from the end
// from opset 11) equals i, values[0] elsewhere. Out-of-range indices give all values[0].
std::vector<Tensor> one_hot(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& indices = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  VKG_CHECK(indices.dtype() != DType::Bool && depth_t.dtype() != DType::Bool,
            node.describe() << ": indices and depth must be numeric");
  VKG_CHECK(depth_t.size() == 1, node.describe() << ": depth must hold one value, got " << depth_t.describe());
  VKG_CHECK(values.size() == 2, node.describe() << ": values must hold two values [off, on], got " << values.describe());
  const double depth_value = depth_t.get_as_double(0);
  VKG_CHECK(std::isfinite(depth_value) && depth_value >= 1,
            node.describe() << ": depth must be at least 1, got " << depth_value);
  const auto depth = int64_t(depth_value);
  const auto rank = int64_t(indices.rank()) + 1;
  const int64_t axis = node_axis(ctx, node.attr_int("axis", -1), rank);
  Shape shape = indices.shape();
  shape.insert(shape.begin() + axis, depth);
  int64_t inner = 1;
  for (int64_t d = axis; d < int64_t(indices.rank()); ++d) inner *= indices.dim(d);
  const std::vector<double> idx = indices.to_doubles();
  Tensor out(values.dtype(), shape);
  const size_t elem = dtype_size(values.dtype());
  for (int64_t e = 0; e < out.size(); ++e) {
    const int64_t i = e % inner, k = (e / inner) % depth, o = e / (inner * depth);
    const double v = idx[size_t(o * inner + i)];
    auto target = std::isfinite(v) ? int64_t(std::trunc(v)) : depth;
    if (target < 0 && ctx.opset >= 11) target += depth;
    std::memcpy(out.raw() + size_t(e) * elem, values.raw() + (target == k ? elem : 0), elem);
  }
  return {out};
}

// EyeLike (opsets 9, 22): a 2-D tensor of the input's shape with ones where
// column - row == k, of the type `dtype` (default: the input's).
std::vector<Tensor> eye_like(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() == 2, node.describe() << ": the input must be 2-D, got " << x.describe());
  DType dtype = x.dtype();
  if (node.has_attr("dtype")) {
    const std::optional<DType> d = dtype_from_onnx(int32_t(node.attr_int("dtype")));
    VKG_CHECK(d, node.describe() << ": dtype " << node.attr_int("dtype") << " is not supported");
    dtype = *d;
  }
  const int64_t k = node.attr_int("k", 0);
  Tensor out(dtype, x.shape());
  const int64_t cols = x.dim(1);
  for (int64_t e = 0; e < out.size(); ++e) out.set_from_double(e, e % cols - e / cols == k ? 1.0 : 0.0);
  return {out};
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  registry.add("Reshape", reshape);
  registry.add("Flatten", flatten);
  registry.add("Squeeze", squeeze);
  registry.add("Unsqueeze", unsqueeze);
  registry.add("Shape", shape_op);
  registry.add("Size", size_op);
  registry.add("Constant", constant);
  registry.add("ConstantOfShape", constant_of_shape);
  registry.add("Range", range);
  registry.add("OneHot", one_hot);
  registry.add("EyeLike", eye_like);
  register_movement_ops(registry);
  register_gather_scatter_ops(registry);
}

}  // namespace vkg
