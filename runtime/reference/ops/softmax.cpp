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

template <SoftmaxKind kKind> std::vector<Tensor> softmax_kernel(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  std::vector<double> v = load_doubles(node, x);
  const ReducePlan plan = make_reduce_plan(x.shape(), softmax_axes(ctx, x), true);
  const size_t rows = size_t(plan.out_size());

  switch (kKind) {
    case SoftmaxKind::Softmax:
    case SoftmaxKind::LogSoftmax: {
      std::vector<double> max(rows, -std::numeric_limits<double>::infinity());
      for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) { max[size_t(o)] = std::max(max[size_t(o)], v[size_t(i)]); });
      std::vector<double> sum(rows, 0.0);
      if (kKind == SoftmaxKind::Softmax) {
        for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) {
          v[size_t(i)] = std::exp(v[size_t(i)] - max[size_t(o)]);
          sum[size_t(o)] += v[size_t(i)];
        });
        for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) { v[size_t(i)] /= sum[size_t(o)]; });
      } else {
        for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) { sum[size_t(o)] += std::exp(v[size_t(i)] - max[size_t(o)]); });
        for (size_t o = 0; o < rows; ++o) max[o] += std::log(sum[o]);
        for_each_reduced(plan, [&](int64_t o, int64_t, int64_t i) { v[size_t(i)] -= max[size_t(o)]; });
      }
      break;
    }
    case SoftmaxKind::Hardmax: {
      // One-hot of the first maximum.
      std::vector<double> best(rows);
      std::vector<int64_t> best_index(rows, 0);
      for_each_reduced(plan, [&](int64_t o, int64_t r, int64_t i) {
        if (r == 0 || v[size_t(i)] > best[size_t(o)]) {
          best[size_t(o)] = v[size_t(i)];
          best_index[size_t(o)] = r;
        }
      });
      for_each_reduced(plan, [&](int64_t o, int64_t r, int64_t i) { v[size_t(i)] = r == best_index[size_t(o)] ? 1.0 : 0.0; });
      break;
    }
  }
  return {store_doubles(node, x.dtype(), x.shape(), v)};
}

}  // namespace

void register_softmax_ops(OpRegistry& registry) {
  registry.add("Softmax", softmax_kernel<SoftmaxKind::Softmax>);
  registry.add("LogSoftmax", softmax_kernel<SoftmaxKind::LogSoftmax>);
  registry.add("Hardmax", softmax_kernel<SoftmaxKind::Hardmax>);
}

}  // namespace vkg
