// Softmax, LogSoftmax and Hardmax (softmax.row, .subgroup, .workgroup, and
// softmax.vec4_sg, softmax.vec4_wg for contiguous rows read as vec4s) on
// shaders/softmax/: rows along the op's axis (or, before opset 13, the
// flattened trailing axes).
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/tactics/reduce_common.h"

namespace vkg::reduce_tactics {

namespace {

enum class SoftmaxKind : uint32_t { Softmax = 0, LogSoftmax, Hardmax };

// The rows of a Softmax, LogSoftmax or Hardmax layer.
std::optional<RowGeometry> softmax_rows(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(is_float_dtype(x.dtype) || x.dtype == DType::Float64,
            node.describe() << ": input type " << dtype_name(x.dtype) << " is not supported (floating types only)");
  const int64_t rank = int64_t(x.shape.size());
  std::vector<bool> mask(size_t(rank), false);
  if (rank > 0 && ctx.opset < 13) {  // coerced to 2-D at `axis`: the op runs over [axis, rank)
    int64_t axis = node.attr_int("axis", 1);
    VKG_CHECK(axis >= -rank && axis <= rank,
              node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
    mask = trailing_axes_mask(axis < 0 ? axis + rank : axis, rank);
  } else if (rank > 0) {
    mask = axes_mask(node, {node.attr_int("axis", -1)}, rank);
  }
  return row_geometry(x.shape, mask, why_not);
}

SoftmaxKind softmax_kind(const Node& node) {
  return node.op_type == "Softmax"      ? SoftmaxKind::Softmax
         : node.op_type == "LogSoftmax" ? SoftmaxKind::LogSoftmax
                                        : SoftmaxKind::Hardmax;
}

}  // namespace

std::optional<LayerPlan> plan_softmax(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const std::optional<RowGeometry> g = softmax_rows(ctx, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d = row_dispatch(ctx, algo_shader("softmax", algo), algo, *g);
  d.spec.push_back({1, uint32_t(softmax_kind(ctx.node))});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// softmax.vec4_* (shaders/softmax/vec4.comp): Softmax and LogSoftmax over rows whose elements are
// contiguous, one workgroup per row reading and writing vec4s (texels where the device has them):
// of cooperative_size() invocations (Algo::Workgroup), or of the device's subgroup size, at least
// 8 (Algo::Subgroup: the tree's barriers cost a workgroup of one subgroup next to nothing; on
// lavapipe PP-OCRv4 rec's 40 rows of 6625, 1.48 ms with 256 invocations, 0.45 ms with 8). Any
// size computes the same: the size is not pinned.
std::optional<LayerPlan> plan_softmax_vec4(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const std::optional<RowGeometry> g = softmax_rows(ctx, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;
  if (g->red_runs > 1 || (g->red_runs == 1 && g->red_strides[kMaxRuns - 1] != 1)) {
    why_not = "serves rows of contiguous elements only (the softmax axis is not innermost)";
    return std::nullopt;
  }
  const uint32_t sg = ctx.device.subgroup_size;
  const uint32_t wg =
      algo == Algo::Subgroup ? workgroup_size(ctx, std::max<uint32_t>(8, sg)) : cooperative_size(ctx, g->reduced);
  LayerPlan plan;
  Dispatch d;
  d.shader = ctx.texel_shader("softmax/vec4", uint64_t(ctx.input(0).size()));
  d.push = g->push();
  d.spec = {{0, wg}, {1, uint32_t(softmax_kind(ctx.node))}};
  d.groups = linear_groups(uint64_t(g->rows) * wg, wg, ctx.device);
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace vkg::reduce_tactics
