// Softmax, LogSoftmax and Hardmax.
//
// Before opset 13 the input is coerced to 2-D at `axis` (default 1) and the op
// runs over the whole flattened tail [axis, rank); from opset 13 it runs along
// the single axis `axis` (default -1). Computed in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/reference/ops/normalization_common.h"

namespace vkg {
namespace {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// The axes the op normalizes over, for the node's opset.
std::vector<bool> softmax_axes(const KernelContext& ctx, const Tensor& x) {
  const Node& node = ctx.node;
  const int64_t rank = x.rank();
  if (rank == 0) return {};
  if (ctx.opset < 13) {
    int64_t axis = node.attr_int("axis", 1);
    VKG_CHECK(axis >= -rank && axis <= rank,
              node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
    if (axis < 0) axis += rank;
    return trailing_axes_mask(axis, rank);
  }
  return axes_mask(node, {node.attr_int("axis", -1)}, rank);
}

// Writes the op's result for one row (given as doubles) into `row`.
void softmax_row(SoftmaxKind kind, std::vector<double>& row) {
  switch (kind) {
    case SoftmaxKind::Softmax:
    case SoftmaxKind::LogSoftmax: {
      double max = -std::numeric_limits<double>::infinity();
      for (double v : row) max = std::max(max, v);
      double sum = 0.0;
      if (kind == SoftmaxKind::Softmax) {
        for (double& v : row) {
          v = std::exp(v - max);
          sum += v;
        }
        for (double& v : row) v /= sum;
      } else {
        for (double v : row) sum += std::exp(v - max);
        const double shift = max + std::log(sum);
        for (double& v : row) v -= shift;
      }
      break;
    }
    case SoftmaxKind::Hardmax: {
      // One-hot of the first maximum.
      size_t best = 0;
      for (size_t r = 1; r < row.size(); ++r)
        if (row[r] > row[best]) best = r;
      for (size_t r = 0; r < row.size(); ++r) row[r] = r == best ? 1.0 : 0.0;
      break;
    }
  }
}

template <SoftmaxKind kKind> std::vector<Tensor> softmax_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const ReducePlan plan = make_reduce_plan(x.shape(), softmax_axes(ctx, x), true);
  Tensor y = map_rows(ctx.node, x, plan, [](int64_t, std::vector<double>& row) { softmax_row(kKind, row); });
  return {y};
}

}  // namespace

void register_softmax_ops(OpRegistry& registry) {
  registry.add("Softmax", softmax_kernel<SoftmaxKind::Softmax>);
  registry.add("LogSoftmax", softmax_kernel<SoftmaxKind::LogSoftmax>);
  registry.add("Hardmax", softmax_kernel<SoftmaxKind::Hardmax>);
}

}  // namespace vkg
