// Private to the normalization op family (reduce.cpp, softmax.cpp, norm.cpp,
// normalization.cpp): the generic "reduce over axes" geometry they all share,
// and helpers that convert elements to and from double, where they compute.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/graph.h"
#include "runtime/core/reduction_axes.h"
#include "runtime/core/tensor.h"
#include "runtime/reference/kernel.h"

namespace vkg {

void register_reduce_ops(OpRegistry& registry);   // Reduce*, ArgMax, ArgMin
void register_softmax_ops(OpRegistry& registry);  // Softmax, LogSoftmax, Hardmax
void register_norm_ops(OpRegistry& registry);     // Batch/Instance/Layer/Lp/MeanVariance normalization

// How a row-major tensor reduces over a set of axes. Output element `o` (row-major
// over the kept axes) gathers the input elements
//   group_offsets[g] + reduced_offsets[r] + k   for every r,
// where o = g * inner + k and `inner` is the size of the trailing run of kept axes.
// Every reduction, softmax and normalization op of the family runs on this one
// geometry (see for_each_row and map_rows).
struct ReducePlan {
  Shape out_shape;                       // reduced axes set to 1 (keepdims) or dropped
  int64_t inner = 1;                     // contiguous kept elements per group
  std::vector<int64_t> group_offsets;    // input offset of each group's first element
  std::vector<int64_t> reduced_offsets;  // input offsets of the reduced elements, row-major

  int64_t out_size() const { return int64_t(group_offsets.size()) * inner; }
  int64_t reduced_size() const { return int64_t(reduced_offsets.size()); }
};

// `reduced[d]` says whether axis d is reduced (reduced.size() == shape.size()).
ReducePlan make_reduce_plan(const Shape& shape, const std::vector<bool>& reduced, bool keepdims);

// Calls f(o, base) for every output element o in order. The input elements that
// reduce into o are base + reduced_offsets[r] for r = 0 .. reduced_size() - 1, in
// row-major order. Consecutive outputs of one group share cache lines, so strided
// rows stay cheap.
template <class F> void for_each_row(const ReducePlan& plan, F&& f) {
  const int64_t groups = int64_t(plan.group_offsets.size());
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t group_base = plan.group_offsets[size_t(g)];
    for (int64_t k = 0; k < plan.inner; ++k) f(g * plan.inner + k, group_base + k);
  }
}

// Element conversions through double for every element type (Half/BFloat16 go
// through float).
template <class T> double to_double(T v) {
  if constexpr (is_half_type<T>) {
    return double(float(v));
  } else {
    return double(v);
  }
}
template <class T> T from_double(double v) {
  if constexpr (is_half_type<T>) {
    return T(float(v));
  } else {
    return T(v);
  }
}

// Copies the row that reduces into one output (its `base`, see for_each_row) into `row`.
template <class T> void gather_row(const ReducePlan& plan, const T* x, int64_t base, std::vector<double>& row) {
  row.resize(plan.reduced_offsets.size());
  for (size_t r = 0; r < row.size(); ++r) row[r] = to_double(x[base + plan.reduced_offsets[r]]);
}

// Calls f.template operator()<T>() for the floating dtypes (float32, float16,
// bfloat16, float64); throws Error naming the node for any other dtype.
template <class F> decltype(auto) visit_float_dtype(const Node& node, DType dt, F&& f) {
  switch (dt) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float16:
      return f.template operator()<Half>();
    case DType::BFloat16:
      return f.template operator()<BFloat16>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
      break;
  }
  VKG_THROW(node.describe() << ": input type " << dtype_name(dt) << " is not supported (floating types only)");
}

// The core of the softmax and normalization ops: calls f(o, row) for every output
// element o of `plan` with its row of x as doubles, which f rewrites in place, and
// returns a tensor of x's dtype and shape holding the rewritten rows. Floating
// dtypes only (Error naming the node otherwise).
template <class F> Tensor map_rows(const Node& node, const Tensor& x, const ReducePlan& plan, F&& f) {
  Tensor y(x.dtype(), x.shape());
  visit_float_dtype(node, x.dtype(), [&]<typename T>() {
    const T* xs = x.data<T>();
    T* ys = y.data<T>();
    std::vector<double> row;
    for_each_row(plan, [&](int64_t o, int64_t base) {
      gather_row(plan, xs, base, row);
      f(o, row);
      for (size_t r = 0; r < row.size(); ++r) ys[base + plan.reduced_offsets[r]] = from_double<T>(row[r]);
    });
  });
  return y;
}

// The values of a floating tensor as doubles (Error naming the node for other dtypes).
std::vector<double> load_doubles(const Node& node, const Tensor& t);
// A tensor of a floating dtype holding `values` (rounded to that dtype).
Tensor store_doubles(const Node& node, DType dtype, const Shape& shape, const std::vector<double>& values);
// A per-element parameter (scale, bias) broadcast to `target` (unidirectional numpy
// broadcasting), as doubles in row-major order of `target`.
std::vector<double> broadcast_doubles(const Node& node, const Tensor& t, const Shape& target, const char* what);

}  // namespace vkg
