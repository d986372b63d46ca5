// Shared machinery of the elementwise reference kernels (private to
// runtime/reference/ops/elementwise*.cpp): numpy broadcasting over any number
// of inputs, one broadcasting map and one unary map that every elementwise op
// is written with, and dispatch over the element types an op accepts.
//
// Half and bfloat16 values are computed in float and stored back rounded;
// every other type is computed in itself.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/reference/kernel.h"

namespace vkg::elementwise {

// The type arithmetic on a stored element of type T happens in.
template <class T> using Compute = std::conditional_t<is_half_type<T>, float, T>;

// The element types an op accepts. Kernels are instantiated only for these, so an op's
// lambda may use operations (std::exp, %, <<) that only make sense for its types.
enum class TypeSet {
  Float,     // float16, bfloat16, float32, float64
  Signed,    // the float types and the signed integers
  Numeric,   // every type but bool
  Unsigned,  // the unsigned integers
  Integer,   // the signed and unsigned integers
  Bool,      // bool only
  Any,       // every type
};

template <TypeSet S, class T> constexpr bool type_in_set() {
  constexpr bool floating = std::is_floating_point_v<Compute<T>>;
  constexpr bool boolean = std::is_same_v<T, bool>;
  switch (S) {
    case TypeSet::Float:
      return floating;
    case TypeSet::Signed:
      return floating || (std::is_signed_v<T> && !boolean);
    case TypeSet::Numeric:
      return !boolean;
    case TypeSet::Unsigned:
      return std::is_unsigned_v<T> && !boolean;
    case TypeSet::Integer:
      return std::is_integral_v<T> && !boolean;
    case TypeSet::Bool:
      return boolean;
    case TypeSet::Any:
      return true;
  }
  return false;
}

// "float types", "numeric types", ... for error messages.
const char* type_set_name(TypeSet s);

// Throws Error naming the node: `what` ("input 0", "the output") has a type the op does not accept.
[[noreturn]] void throw_unsupported_type(const KernelContext& ctx, const char* what, DType dt, TypeSet accepted);

// Calls f.template operator()<T>() with the C++ type of dt when S holds it; throws Error otherwise.
template <TypeSet S, class F> Tensor visit_type_set(const KernelContext& ctx, const char* what, DType dt, F&& f) {
  return visit_dtype(dt, [&]<class T>() -> Tensor {
    if constexpr (type_in_set<S, T>()) {
      return f.template operator()<T>();
    } else {
      throw_unsupported_type(ctx, what, dt, S);
    }
  });
}

// Throws Error naming the node unless it has between min and max inputs (counting omitted
// optional ones up to the last one given).
void expect_inputs(const KernelContext& ctx, size_t min, size_t max);
// Throws Error naming the node unless inputs first..last (all present) share one dtype.
void expect_same_types(const KernelContext& ctx, size_t first, size_t last);

// The result of a kernel with one output.
std::vector<Tensor> one_output(Tensor t);

// Saturating float -> integer conversion (NaN gives 0), where C++ would be undefined.
template <class I> I float_to_int(double v) {
  if (std::isnan(v)) return I(0);
  if (v >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= double(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  return I(v);
}

// How several inputs broadcast (numpy rules) to one output. Output dimensions of size 1
// are dropped and neighbouring dimensions merged wherever every input allows it, so that
// equal shapes become one long row and a per-channel operand a few long rows. The last
// stride of each input is 0 (broadcast along rows) or 1 (contiguous rows).
struct BroadcastPlan {
  Shape out_shape;                            // the broadcast shape of all inputs
  std::vector<int64_t> dims;                  // merged output dimensions, never empty
  std::vector<std::vector<int64_t>> strides;  // per input: element strides per merged dimension
};

// Throws Error naming the node when the shapes do not broadcast together.
BroadcastPlan make_broadcast_plan(const KernelContext& ctx, const std::vector<Shape>& shapes);

// The plan of a two-input op's inputs 0 and 1. Before opset 7, Add/Sub/Mul/Div/Pow and
// the comparison and logical ops broadcast input 1 onto input 0 only when the attribute
// broadcast=1 (aligned at attribute `axis`, else at the trailing dimensions); without it
// the shapes must be equal. From opset 7 on, numpy broadcasting.
BroadcastPlan binary_input_plan(const KernelContext& ctx);

// Calls row(out_offset, in_offsets, length) for every row of the plan's merged output:
// elements out_offset .. out_offset + length - 1 of the output, where input i starts at
// element in_offsets[i] and steps by plan.strides[i].back().
using RowFn = std::function<void(int64_t out_offset, const int64_t* in_offsets, int64_t length)>;
void for_each_row(const BroadcastPlan& plan, const RowFn& row);

// out[i] = f(a[i], b[i]) over the broadcast plan of (a, b); f takes and returns compute
// types, and its result is converted to O. `out` must already have plan.out_shape.
// float32, the main compute type, gets vectorizable loops for rows of equal shapes and of
// one broadcast operand; other types share one strided loop (less code to compile).
template <class A, class B, class O, class F>
void binary_map(const Tensor& a, const Tensor& b, Tensor& out, const BroadcastPlan& plan, F f) {
  const A* a_data = a.data<A>();
  const B* b_data = b.data<B>();
  O* out_data = out.data<O>();
  const int64_t a_step = plan.strides[0].back();
  const int64_t b_step = plan.strides[1].back();
  for_each_row(plan, [&](int64_t out_offset, const int64_t* in_offsets, int64_t length) {
    const A* x = a_data + in_offsets[0];
    const B* y = b_data + in_offsets[1];
    O* z = out_data + out_offset;
    if constexpr (std::is_same_v<A, float> && std::is_same_v<B, float>) {
      if (a_step == 1 && b_step == 1) {
        for (int64_t i = 0; i < length; ++i) z[i] = O(f(x[i], y[i]));
        return;
      }
      if (a_step == 1) {
        const float y0 = y[0];
        for (int64_t i = 0; i < length; ++i) z[i] = O(f(x[i], y0));
        return;
      }
      if (b_step == 1) {
        const float x0 = x[0];
        for (int64_t i = 0; i < length; ++i) z[i] = O(f(x0, y[i]));
        return;
      }
    }
    for (int64_t i = 0; i < length; ++i) z[i] = O(f(Compute<A>(x[i * a_step]), Compute<B>(y[i * b_step])));
  });
}

// out[i] = f(x[i]); f takes and returns compute types, its result is converted to O.
template <class I, class O, class F> void unary_map(const Tensor& x, Tensor& out, F f) {
  const I* in = x.data<I>();
  O* z = out.data<O>();
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) z[i] = O(f(Compute<I>(in[i])));
}

// f applied to every element of x (of a type in S); the result has x's type and shape.
template <TypeSet S, class F> Tensor map_tensor(const KernelContext& ctx, const Tensor& x, F f) {
  return visit_type_set<S>(ctx, "input 0", x.dtype(), [&]<class T>() {
    Tensor y(x.dtype(), x.shape());
    unary_map<T, T>(x, y, f);
    return y;
  });
}

// The one-input op y = f(x), y of x's type.
template <TypeSet S, class F> Tensor unary_op(const KernelContext& ctx, F f) {
  expect_inputs(ctx, 1, 1);
  return map_tensor<S>(ctx, ctx.input(0), f);
}

// The one-input predicate y = f(x), y of type bool.
template <TypeSet S, class F> Tensor unary_predicate(const KernelContext& ctx, F f) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  return visit_type_set<S>(ctx, "input 0", x.dtype(), [&]<class T>() {
    Tensor y(DType::Bool, x.shape());
    unary_map<T, bool>(x, y, f);
    return y;
  });
}

// out = f(a, b) broadcast by `plan`; a and b share a type in S, which out has too
// (or bool, when ToBool).
template <TypeSet S, bool ToBool = false, class F>
Tensor binary_op(const KernelContext& ctx, const Tensor& a, const Tensor& b, const BroadcastPlan& plan, F f) {
  if (a.dtype() != b.dtype()) {
    VKG_THROW(ctx.node.describe() << ": inputs have different types " << dtype_name(a.dtype()) << " and "
                                  << dtype_name(b.dtype()));
  }
  return visit_type_set<S>(ctx, "input 0", a.dtype(), [&]<class T>() {
    using O = std::conditional_t<ToBool, bool, T>;
    Tensor out(dtype_of<O>, plan.out_shape);
    binary_map<T, T, O>(a, b, out, plan, f);
    return out;
  });
}

// Kernel of a two-input op out = f(a, b) whose output has the inputs' type.
template <TypeSet S, class F> RefKernel binary_kernel(F f) {
  return [f](const KernelContext& ctx) {
    expect_inputs(ctx, 2, 2);
    return one_output(binary_op<S>(ctx, ctx.input(0), ctx.input(1), binary_input_plan(ctx), f));
  };
}

// Kernel of a two-input op out = f(a, b) whose output is bool (comparisons, logic).
template <TypeSet S, class F> RefKernel compare_kernel(F f) {
  return [f](const KernelContext& ctx) {
    expect_inputs(ctx, 2, 2);
    return one_output(binary_op<S, true>(ctx, ctx.input(0), ctx.input(1), binary_input_plan(ctx), f));
  };
}

// Kernel of a one-input op without attributes, y = f(x).
template <TypeSet S, class F> RefKernel unary_kernel(F f) {
  return [f](const KernelContext& ctx) { return one_output(unary_op<S>(ctx, f)); };
}

// Registration of the op groups, each in its own file.
void register_binary_ops(OpRegistry& registry);      // arithmetic, comparison, logic, Where, variadic
void register_activation_ops(OpRegistry& registry);  // activations and other one-input math
void register_conversion_ops(OpRegistry& registry);  // Cast, CastLike, Identity, Dropout

}  // namespace vkg::elementwise
