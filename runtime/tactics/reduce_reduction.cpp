// The ten Reduce* ops and ArgMax/ArgMin (reduce.row, reduce.subgroup,
// reduce.workgroup on shaders/reduce/): the op code each computes and the rows
// of its axes.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/tactics/reduce_common.h"

namespace vkg::reduce_tactics {

namespace {

// Operation codes of shaders/reduce/reduce_ops.glsl.
enum class ReduceOp : uint32_t {
  Sum = 0,
  Mean,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp,
  Prod,
  Max,
  Min,
  ArgMax,
  ArgMin,
};

std::optional<ReduceOp> reduce_op(const std::string& op) {
  static const std::pair<const char*, ReduceOp> kOps[] = {
      {"ReduceSum", ReduceOp::Sum},
      {"ReduceMean", ReduceOp::Mean},
      {"ReduceSumSquare", ReduceOp::SumSquare},
      {"ReduceL1", ReduceOp::L1},
      {"ReduceL2", ReduceOp::L2},
      {"ReduceLogSum", ReduceOp::LogSum},
      {"ReduceLogSumExp", ReduceOp::LogSumExp},
      {"ReduceProd", ReduceOp::Prod},
      {"ReduceMax", ReduceOp::Max},
      {"ReduceMin", ReduceOp::Min},
      {"ArgMax", ReduceOp::ArgMax},
      {"ArgMin", ReduceOp::ArgMin},
  };
  for (const auto& [name, code] : kOps)
    if (op == name) return code;
  return std::nullopt;
}

}  // namespace

std::optional<LayerPlan> plan_reduce(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  std::optional<ReduceOp> op = reduce_op(node.op_type);
  VKG_CHECK(op, node.describe() << ": not a reduction");
  const LayerTensor& x = ctx.input(0);
  // Bool is stored as 0/1 integers: its maximum and minimum (opset 20) are the integer ones.
  VKG_CHECK(x.dtype != DType::Bool || *op == ReduceOp::Max || *op == ReduceOp::Min,
            node.describe() << ": input type bool is not supported");
  const int64_t rank = int64_t(x.shape.size());
  const bool arg = *op == ReduceOp::ArgMax || *op == ReduceOp::ArgMin;

  std::vector<bool> mask;
  if (arg) {
    VKG_CHECK(rank > 0, node.describe() << ": the input must have rank >= 1");
    const int64_t axis = node.attr_int("axis", 0);
    mask = axes_mask(node, {axis}, rank);
    VKG_CHECK(x.shape[size_t(axis < 0 ? axis + rank : axis)] > 0,
              node.describe() << ": cannot take the index of an extreme over an empty axis " << axis);
  } else {
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) {
      const LayerTensor& axes_t = ctx.input(1);
      if (!axes_t.is_constant()) {
        why_not = "the axes input '" + axes_t.name + "' is not a build-time constant";
        return std::nullopt;
      }
      VKG_CHECK(
          is_integer(axes_t.constant->dtype()) && axes_t.constant->rank() <= 1,
          node.describe() << ": the axes input must be a 1-D integer tensor, got " << axes_t.constant->describe());
      axes = axes_t.constant->to_int64s();
    } else {
      axes = node.attr_ints("axes");
    }
    if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
      mask.assign(size_t(rank), false);  // the identity: a sum over single elements
      op = ReduceOp::Sum;
    } else {
      mask = axes_mask(node, axes, rank);
    }
  }
  const std::optional<RowGeometry> g = row_geometry(x.shape, mask, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 1, why_not)) return std::nullopt;

  LayerPlan plan;
  Dispatch d = row_dispatch(ctx, algo_shader("reduce", algo), algo, *g);
  d.spec.push_back({1, uint32_t(*op)});
  d.spec.push_back({2, x.storage == StorageType::I32 ? 1u : 0u});
  d.spec.push_back({3, node.attr_int("select_last_index", 0) != 0 ? 1u : 0u});
  d.spec.push_back({4, std::max<uint32_t>(1, g->red_runs)});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::reduce_tactics
