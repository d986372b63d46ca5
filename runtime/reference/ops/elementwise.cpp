// Elementwise reference kernels: the shared broadcasting machinery and the
// registration of every elementwise op. The ops themselves live in
// elementwise_binary.cpp, elementwise_activation.cpp and elementwise_conversion.cpp.
#include <algorithm>

#include "runtime/reference/ops/elementwise_util.h"

namespace vkg {

namespace elementwise {

const char* type_set_name(TypeSet s) {
  switch (s) {
    case TypeSet::Float:
      return "float types";
    case TypeSet::Signed:
      return "float and signed integer types";
    case TypeSet::Numeric:
      return "numeric types";
    case TypeSet::Unsigned:
      return "unsigned integer types";
    case TypeSet::Integer:
      return "integer types";
    case TypeSet::Bool:
      return "bool";
    case TypeSet::Any:
      return "any type";
  }
  return "?";
}

void throw_unsupported_type(const KernelContext& ctx, const char* what, DType dt, TypeSet accepted) {
  VKG_THROW(ctx.node.describe() << ": " << what << " has type " << dtype_name(dt)
                                << ", which is not supported (expects " << type_set_name(accepted) << ")");
}

void expect_inputs(const KernelContext& ctx, size_t min, size_t max) {
  const size_t n = ctx.num_inputs();
  if (n < min || n > max) {
    if (min == max)
      VKG_THROW(ctx.node.describe() << ": expects " << min << (min == 1 ? " input" : " inputs") << ", got " << n);
    VKG_THROW(ctx.node.describe() << ": expects " << min << " to " << max << " inputs, got " << n);
  }
}

void expect_same_types(const KernelContext& ctx, size_t first, size_t last) {
  const DType dt = ctx.input(first).dtype();
  for (size_t i = first + 1; i <= last; ++i) {
    const DType other = ctx.input(i).dtype();
    VKG_CHECK(other == dt, ctx.node.describe() << ": input " << i << " has type " << dtype_name(other) << " but input "
                                               << first << " has type " << dtype_name(dt));
  }
}

std::vector<Tensor> one_output(Tensor t) {
  std::vector<Tensor> out;
  out.push_back(std::move(t));
  return out;
}

BroadcastPlan make_broadcast_plan(const KernelContext& ctx, const std::vector<Shape>& shapes) {
  BroadcastPlan plan;
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  plan.out_shape.assign(rank, 1);
  for (const Shape& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& out = plan.out_shape[offset + d];
      if (out == 1) {
        out = s[d];
      } else if (s[d] != 1 && s[d] != out) {
        std::string list;
        for (const Shape& t : shapes) list += (list.empty() ? "" : " and ") + shape_to_string(t);
        VKG_THROW(ctx.node.describe() << ": input shapes " << list << " cannot be broadcast together");
      }
    }
  }

  // Keep output dimensions larger than 1, merging a dimension into the previous kept one
  // when every input steps through both as through one.
  std::vector<std::vector<int64_t>> full;
  for (const Shape& s : shapes) full.push_back(broadcast_strides(s, plan.out_shape));
  plan.strides.assign(shapes.size(), {});
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = plan.out_shape[d];
    if (size == 1) continue;
    bool mergeable = !plan.dims.empty();
    for (size_t i = 0; i < shapes.size() && mergeable; ++i) mergeable = plan.strides[i].back() == full[i][d] * size;
    if (mergeable) {
      plan.dims.back() *= size;
      for (size_t i = 0; i < shapes.size(); ++i) plan.strides[i].back() = full[i][d];
    } else {
      plan.dims.push_back(size);
      for (size_t i = 0; i < shapes.size(); ++i) plan.strides[i].push_back(full[i][d]);
    }
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims.push_back(1);
    for (auto& s : plan.strides) s.push_back(0);
  }
  return plan;
}

void for_each_row(const BroadcastPlan& plan, const RowFn& row) {
  if (num_elements(plan.out_shape) == 0) return;
  const size_t outer_rank = plan.dims.size() - 1;
  const size_t num_inputs = plan.strides.size();
  const int64_t length = plan.dims.back();
  int64_t rows = 1;
  for (size_t d = 0; d < outer_rank; ++d) rows *= plan.dims[d];

  std::vector<int64_t> index(outer_rank, 0);
  std::vector<int64_t> offsets(num_inputs, 0);
  for (int64_t r = 0; r < rows; ++r) {
    row(r * length, offsets.data(), length);
    // Advance the outer index like an odometer, keeping every input's offset in step.
    for (size_t d = outer_rank; d-- > 0;) {
      ++index[d];
      for (size_t i = 0; i < num_inputs; ++i) offsets[i] += plan.strides[i][d];
      if (index[d] < plan.dims[d]) break;
      for (size_t i = 0; i < num_inputs; ++i) offsets[i] -= plan.strides[i][d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

BroadcastPlan binary_input_plan(const KernelContext& ctx) {
  const Shape& a = ctx.input(0).shape();
  Shape b = ctx.input(1).shape();
  if (ctx.opset < 7) {
    if (ctx.node.attr_int("broadcast", 0) == 0) {
      VKG_CHECK(a == b, ctx.node.describe()
                            << ": input shapes " << shape_to_string(a) << " and " << shape_to_string(b)
                            << " differ and the node does not set broadcast=1 (opset " << ctx.opset << ")");
    } else if (ctx.node.has_attr("axis")) {
      const int64_t rank = int64_t(a.size());
      int64_t axis = ctx.node.attr_int("axis");
      if (axis < 0) axis += rank;
      VKG_CHECK(axis >= 0 && axis + int64_t(b.size()) <= rank,
                ctx.node.describe() << ": cannot broadcast " << shape_to_string(b) << " onto " << shape_to_string(a)
                                    << " at axis " << ctx.node.attr_int("axis"));
      b.insert(b.end(), size_t(rank - axis - int64_t(b.size())), 1);
    }
    // Legacy broadcasting is one-directional: B must fit into A.
    const BroadcastPlan plan = make_broadcast_plan(ctx, {a, b});
    VKG_CHECK(plan.out_shape == a, ctx.node.describe() << ": cannot broadcast " << shape_to_string(ctx.input(1).shape())
                                                       << " onto " << shape_to_string(a));
    return plan;
  }
  return make_broadcast_plan(ctx, {a, b});
}

}  // namespace elementwise

void register_elementwise_ops(OpRegistry& registry) {
  elementwise::register_binary_ops(registry);
  elementwise::register_activation_ops(registry);
  elementwise::register_conversion_ops(registry);
}

}  // namespace vkg
