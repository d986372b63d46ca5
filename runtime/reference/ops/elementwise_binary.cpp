// Elementwise ops of two or more inputs with numpy broadcasting: arithmetic,
// comparison and logic, the variadic Sum/Mean/Max/Min, PRelu and Where.
#include <functional>
#include <string>

#include "runtime/reference/ops/elementwise_util.h"

namespace vkg::elementwise {

namespace {

// Integer Add/Sub/Mul wrap around on overflow like numpy (signed overflow is undefined in
// C++, and small types would be promoted to int first).
template <class T, class Op> T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return T(op(U(a), U(b)));
  } else {
    return op(a, b);
  }
}

// Integer division truncates toward zero (C, ONNX Runtime); dividing by zero gives 0 and
// the one overflowing case (lowest / -1) wraps, where C++ would trap.
template <class T> T divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return wrapping(T(0), a, std::minus<>());
    }
    return T(a / b);
  } else {
    return a / b;
  }
}

// Mod with fmod=0 (integers only): the result takes the sign of the divisor, like Python's %.
// With fmod=1: the sign of the dividend, like C's fmod. Modulo zero gives 0.
template <class T> T modulo(T a, T b, bool fmod) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return T(0);
      const T r = T(a % b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) return T(r + b);
      return r;
    } else {
      return T(a % b);
    }
  } else {
    return std::fmod(a, b);
  }
}

// base^exponent for integers, wrapping like repeated multiplication. A negative exponent
// gives the truncated value of 1 / base^-exponent.
template <class X, class Y> X integer_power(X base, Y exponent) {
  if constexpr (std::is_signed_v<Y>) {
    if (exponent < 0) {
      if (base == 1) return X(1);
      if constexpr (std::is_signed_v<X>) {
        if (base == -1) return X(exponent % 2 == 0 ? 1 : -1);
      }
      return X(0);
    }
  }
  uint64_t result = 1;
  uint64_t factor = uint64_t(base);
  for (uint64_t e = uint64_t(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= factor;
    factor *= factor;
  }
  return X(result);
}

// Max and Min propagate NaN, like numpy's maximum/minimum.
template <class T> T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}

template <class T> T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// Pow: the output has the base's type; the exponent may have another numeric type, which
// is widened to int64 or double first (fewer kernels to compile, same results).
std::vector<Tensor> pow_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& base = ctx.input(0);
  if (ctx.opset < 12) expect_same_types(ctx, 0, 1);
  const DType exponent_type = ctx.input(1).dtype();
  VKG_CHECK(exponent_type != DType::Bool, ctx.node.describe() << ": input 1 has type bool, which is not supported");
  const Tensor exponent = ctx.input(1).cast(is_floating(exponent_type) ? DType::Float64 : DType::Int64);
  const BroadcastPlan plan = binary_input_plan(ctx);
  return one_output(visit_type_set<TypeSet::Numeric>(ctx, "input 0", base.dtype(), [&]<class X>() {
    Tensor out(base.dtype(), plan.out_shape);
    const auto power = [](auto x, auto y) {
      using CX = decltype(x);
      if constexpr (std::is_integral_v<CX> && std::is_integral_v<decltype(y)>) {
        return integer_power(x, y);
      } else if constexpr (std::is_integral_v<CX>) {
        return float_to_int<CX>(std::pow(double(x), y));
      } else {
        return std::pow(x, CX(y));
      }
    };
    if (exponent.dtype() == DType::Int64) {
      binary_map<X, int64_t, X>(base, exponent, out, plan, power);
    } else {
      binary_map<X, double, X>(base, exponent, out, plan, power);
    }
    return out;
  }));
}

std::vector<Tensor> mod_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const bool fmod = ctx.node.attr_int("fmod", 0) != 0;
  VKG_CHECK(fmod || !is_floating(ctx.input(0).dtype()),
            ctx.node.describe() << ": fmod must be 1 for " << dtype_name(ctx.input(0).dtype()) << " inputs");
  return one_output(binary_op<TypeSet::Numeric>(ctx, ctx.input(0), ctx.input(1), binary_input_plan(ctx),
                                                [fmod](auto a, auto b) { return modulo(a, b, fmod); }));
}

std::vector<Tensor> bitshift_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const std::string direction = ctx.node.attr_string("direction", "");
  VKG_CHECK(direction == "LEFT" || direction == "RIGHT",
            ctx.node.describe() << ": attribute direction must be \"LEFT\" or \"RIGHT\", got \"" << direction << "\"");
  const bool left = direction == "LEFT";
  return one_output(
      binary_op<TypeSet::Unsigned>(ctx, ctx.input(0), ctx.input(1), binary_input_plan(ctx), [left](auto a, auto b) {
        using T = decltype(a);
        if (b >= std::numeric_limits<T>::digits) return T(0);  // shifting out every bit
        return left ? T(a << b) : T(a >> b);
      }));
}

// Sum, Mean, Max and Min: f folded over all inputs (one or more), broadcast together.
template <class F> Tensor fold_inputs(const KernelContext& ctx, F f) {
  expect_inputs(ctx, 1, std::numeric_limits<size_t>::max());
  expect_same_types(ctx, 0, ctx.num_inputs() - 1);
  Tensor acc = map_tensor<TypeSet::Numeric>(ctx, ctx.input(0), [](auto x) { return x; });
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor& next = ctx.input(i);
    acc = binary_op<TypeSet::Numeric>(ctx, acc, next, make_broadcast_plan(ctx, {acc.shape(), next.shape()}), f);
  }
  return acc;
}

constexpr auto add = [](auto a, auto b) { return wrapping(a, b, std::plus<>()); };

std::vector<Tensor> mean_kernel(const KernelContext& ctx) {
  const Tensor sum = fold_inputs(ctx, add);
  const auto count = ctx.num_inputs();
  return one_output(map_tensor<TypeSet::Numeric>(ctx, sum, [count](auto x) { return x / decltype(x)(count); }));
}

// PRelu: y = x < 0 ? slope * x : x, the slope broadcast onto x (not the other way round).
// Before opset 7 a 1-D slope holds one value per channel (dimension 1).
std::vector<Tensor> prelu_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  Shape slope_shape = slope.shape();
  if (ctx.opset < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.dim(0) == x.dim(1) && slope.dim(0) != 1) {
    slope_shape.insert(slope_shape.end(), size_t(x.rank() - 2), 1);
  }
  const BroadcastPlan plan = make_broadcast_plan(ctx, {x.shape(), slope_shape});
  VKG_CHECK(plan.out_shape == x.shape(), ctx.node.describe()
                                             << ": slope of shape " << shape_to_string(slope.shape())
                                             << " cannot be broadcast to input shape " << shape_to_string(x.shape()));
  return one_output(binary_op<TypeSet::Numeric>(ctx, x, slope, plan, [](auto a, auto s) {
    if constexpr (std::is_unsigned_v<decltype(a)>) {
      return a;
    } else {
      return a < 0 ? wrapping(s, a, std::multiplies<>()) : a;
    }
  }));
}

std::vector<Tensor> where_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  VKG_CHECK(cond.dtype() == DType::Bool,
            ctx.node.describe() << ": condition has type " << dtype_name(cond.dtype()) << ", expected bool");
  expect_same_types(ctx, 1, 2);
  const BroadcastPlan plan = make_broadcast_plan(ctx, {cond.shape(), x.shape(), y.shape()});
  return one_output(visit_type_set<TypeSet::Any>(ctx, "input 1", x.dtype(), [&]<class T>() {
    Tensor out(x.dtype(), plan.out_shape);
    const bool* c = cond.data<bool>();
    const T* a = x.data<T>();
    const T* b = y.data<T>();
    T* z = out.data<T>();
    const int64_t c_step = plan.strides[0].back(), a_step = plan.strides[1].back(), b_step = plan.strides[2].back();
    for_each_row(plan, [&](int64_t out_offset, const int64_t* in, int64_t length) {
      for (int64_t i = 0; i < length; ++i)
        z[out_offset + i] = c[in[0] + i * c_step] ? a[in[1] + i * a_step] : b[in[2] + i * b_step];
    });
    return out;
  }));
}

}  // namespace

void register_binary_ops(OpRegistry& registry) {
  registry.add("Add", binary_kernel<TypeSet::Numeric>(add));
  registry.add("Sub", binary_kernel<TypeSet::Numeric>([](auto a, auto b) { return wrapping(a, b, std::minus<>()); }));
  registry.add("Mul",
               binary_kernel<TypeSet::Numeric>([](auto a, auto b) { return wrapping(a, b, std::multiplies<>()); }));
  registry.add("Div", binary_kernel<TypeSet::Numeric>([](auto a, auto b) { return divide(a, b); }));
  registry.add("Pow", pow_kernel);
  registry.add("Mod", mod_kernel);
  registry.add("BitShift", bitshift_kernel);

  registry.add("Sum", [](const KernelContext& ctx) { return one_output(fold_inputs(ctx, add)); });
  registry.add("Mean", mean_kernel);
  registry.add("Max", [](const KernelContext& ctx) {
    return one_output(fold_inputs(ctx, [](auto a, auto b) { return maximum(a, b); }));
  });
  registry.add("Min", [](const KernelContext& ctx) {
    return one_output(fold_inputs(ctx, [](auto a, auto b) { return minimum(a, b); }));
  });

  registry.add("Equal", compare_kernel<TypeSet::Any>([](auto a, auto b) { return a == b; }));
  registry.add("Less", compare_kernel<TypeSet::Numeric>([](auto a, auto b) { return a < b; }));
  registry.add("LessOrEqual", compare_kernel<TypeSet::Numeric>([](auto a, auto b) { return a <= b; }));
  registry.add("Greater", compare_kernel<TypeSet::Numeric>([](auto a, auto b) { return a > b; }));
  registry.add("GreaterOrEqual", compare_kernel<TypeSet::Numeric>([](auto a, auto b) { return a >= b; }));

  registry.add("And", compare_kernel<TypeSet::Bool>([](bool a, bool b) { return a && b; }));
  registry.add("Or", compare_kernel<TypeSet::Bool>([](bool a, bool b) { return a || b; }));
  registry.add("Xor", compare_kernel<TypeSet::Bool>([](bool a, bool b) { return a != b; }));
  registry.add("BitwiseAnd", binary_kernel<TypeSet::Integer>([](auto a, auto b) { return decltype(a)(a & b); }));
  registry.add("BitwiseOr", binary_kernel<TypeSet::Integer>([](auto a, auto b) { return decltype(a)(a | b); }));
  registry.add("BitwiseXor", binary_kernel<TypeSet::Integer>([](auto a, auto b) { return decltype(a)(a ^ b); }));

  registry.add("PRelu", prelu_kernel);
  registry.add("Where", where_kernel);
}

}  // namespace vkg::elementwise
