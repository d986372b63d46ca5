// One-input elementwise ops: activations, rounding, sign, exponentials and
// trigonometry, Clip, the predicates IsNaN/IsInf and Not.
#include <algorithm>
#include <cmath>

#include "runtime/reference/ops/elementwise_util.h"

namespace vkg::elementwise {

namespace {

// -x; integers wrap around like numpy (-lowest == lowest) instead of overflowing.
template <class T> T negate(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return T(U(0) - U(x));
  } else {
    return -x;
  }
}

// x < 0, without comparing unsigned values against 0.
template <class T> bool is_negative(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    (void)x;
    return false;
  } else {
    return x < T(0);
  }
}

// A double converted to the compute type C; integers saturate instead of being undefined.
template <class C> C from_double(double v) {
  if constexpr (std::is_integral_v<C>) {
    return float_to_int<C>(v);
  } else {
    return C(v);
  }
}

// 1 / (1 + e^-x), without overflowing e^-x for large negative x.
template <class T> T sigmoid(T x) {
  const T e = std::exp(-std::abs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

// log(1 + e^x), without overflowing e^x for large x.
template <class T> T softplus(T x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
template <class T> T hard_swish(T x) { return x * std::max(T(0), std::min(T(1), x / 6 + T(0.5))); }

// Kernel of a one-input op on the float types without attributes, y = f(x).
template <class F> RefKernel float_kernel(F f) { return unary_kernel<TypeSet::Float>(f); }

std::vector<Tensor> leaky_relu_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 0.01f);
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? C(alpha) * x : x;
  }));
}

std::vector<Tensor> hard_sigmoid_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 0.2f);
  const float beta = ctx.node.attr_float("beta", 0.5f);
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha, beta](auto x) {
    using C = decltype(x);
    return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
  }));
}

// Gelu-20: the erf form, or with approximate="tanh" the tanh approximation.
std::vector<Tensor> gelu_kernel(const KernelContext& ctx) {
  const std::string approximate = ctx.node.attr_string("approximate", "none");
  VKG_CHECK(approximate == "none" || approximate == "tanh",
            ctx.node.describe() << ": approximate must be 'none' or 'tanh', got '" << approximate << "'");
  const bool tanh_form = approximate == "tanh";
  return one_output(unary_op<TypeSet::Float>(ctx, [tanh_form](auto x) {
    using C = decltype(x);
    if (tanh_form) return C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)));
    return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
  }));
}

std::vector<Tensor> elu_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 1.0f);
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? C(alpha) * std::expm1(x) : x;
  }));
}

std::vector<Tensor> selu_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.node.attr_float("gamma", 1.05070102214813232421875f);
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha, gamma](auto x) {
    using C = decltype(x);
    return x > 0 ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  }));
}

std::vector<Tensor> celu_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 1.0f);
  VKG_CHECK(alpha != 0.0f, ctx.node.describe() << ": alpha must not be 0");
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x > 0 ? x : C(alpha) * std::expm1(x / C(alpha));
  }));
}

std::vector<Tensor> thresholded_relu_kernel(const KernelContext& ctx) {
  const float alpha = ctx.node.attr_float("alpha", 1.0f);
  return one_output(unary_op<TypeSet::Float>(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x > C(alpha) ? x : C(0);
  }));
}

std::vector<Tensor> shrink_kernel(const KernelContext& ctx) {
  const double bias = ctx.node.attr_float("bias", 0.0f);
  const double lambd = ctx.node.attr_float("lambd", 0.5f);
  return one_output(unary_op<TypeSet::Numeric>(ctx, [bias, lambd](auto x) {
    using C = decltype(x);
    const double v = double(x);
    if (v < -lambd) return from_double<C>(v + bias);
    if (v > lambd) return from_double<C>(v - bias);
    return C(0);
  }));
}

// The bound of Clip at `index` (opset 11 on: an optional scalar input), or `fallback`.
template <class T> Compute<T> clip_bound(const KernelContext& ctx, size_t index, Compute<T> fallback) {
  if (!ctx.has_input(index)) return fallback;
  const Tensor& bound = ctx.input(index);
  VKG_CHECK(bound.dtype() == ctx.input(0).dtype(),
            ctx.node.describe() << ": input " << index << " has type " << dtype_name(bound.dtype())
                                << " but input 0 has type " << dtype_name(ctx.input(0).dtype()));
  VKG_CHECK(bound.size() == 1, ctx.node.describe() << ": input " << index << " must be a scalar, got shape "
                                                   << shape_to_string(bound.shape()));
  return Compute<T>(bound.data<T>()[0]);
}

// Clip: min/max are attributes before opset 11 and optional inputs from then on. When
// min > max every value becomes max (numpy.clip).
std::vector<Tensor> clip_kernel(const KernelContext& ctx) {
  expect_inputs(ctx, 1, ctx.opset < 11 ? 1 : 3);
  const Tensor& x = ctx.input(0);
  return one_output(visit_type_set<TypeSet::Numeric>(ctx, "input 0", x.dtype(), [&]<class T>() {
    using C = Compute<T>;
    C lo = std::numeric_limits<C>::lowest();
    C hi = std::numeric_limits<C>::max();
    if (ctx.opset < 11) {
      if (ctx.node.has_attr("min")) lo = from_double<C>(ctx.node.attr_float("min", 0.0f));
      if (ctx.node.has_attr("max")) hi = from_double<C>(ctx.node.attr_float("max", 0.0f));
    } else {
      lo = clip_bound<T>(ctx, 1, lo);
      hi = clip_bound<T>(ctx, 2, hi);
    }
    Tensor y(x.dtype(), x.shape());
    unary_map<T, T>(x, y, [lo, hi](C v) {
      const C at_least_lo = v < lo ? lo : v;
      return at_least_lo > hi ? hi : at_least_lo;
    });
    return y;
  }));
}

std::vector<Tensor> is_inf_kernel(const KernelContext& ctx) {
  const bool negative = ctx.node.attr_int("detect_negative", 1) != 0;
  const bool positive = ctx.node.attr_int("detect_positive", 1) != 0;
  return one_output(unary_predicate<TypeSet::Float>(
      ctx, [negative, positive](auto x) { return std::isinf(x) && (x > 0 ? positive : negative); }));
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  registry.add("Relu", unary_kernel<TypeSet::Numeric>([](auto x) { return is_negative(x) ? decltype(x)(0) : x; }));
  registry.add("LeakyRelu", leaky_relu_kernel);
  registry.add("ThresholdedRelu", thresholded_relu_kernel);
  registry.add("Elu", elu_kernel);
  registry.add("Selu", selu_kernel);
  registry.add("Celu", celu_kernel);
  registry.add("Sigmoid", float_kernel([](auto x) { return sigmoid(x); }));
  registry.add("HardSigmoid", hard_sigmoid_kernel);
  registry.add("HardSwish", float_kernel([](auto x) { return hard_swish(x); }));
  registry.add("Softplus", float_kernel([](auto x) { return softplus(x); }));
  registry.add("Mish", float_kernel([](auto x) { return x * std::tanh(softplus(x)); }));
  registry.add("Gelu", gelu_kernel);
  registry.add("Softsign", float_kernel([](auto x) { return x / (1 + std::abs(x)); }));
  registry.add("Shrink", shrink_kernel);
  registry.add("Clip", clip_kernel);

  registry.add("Neg", unary_kernel<TypeSet::Signed>([](auto x) { return negate(x); }));
  registry.add("Abs", unary_kernel<TypeSet::Numeric>([](auto x) { return is_negative(x) ? negate(x) : x; }));
  registry.add("Sign", unary_kernel<TypeSet::Numeric>([](auto x) {
                 using C = decltype(x);
                 return is_negative(x) ? C(-1) : x > C(0) ? C(1) : x;  // keeps 0 and NaN
               }));
  registry.add("Floor", float_kernel([](auto x) { return std::floor(x); }));
  registry.add("Ceil", float_kernel([](auto x) { return std::ceil(x); }));
  registry.add("Round", float_kernel([](auto x) { return std::nearbyint(x); }));  // halves to even
  registry.add("Reciprocal", float_kernel([](auto x) { return 1 / x; }));
  registry.add("Sqrt", float_kernel([](auto x) { return std::sqrt(x); }));
  registry.add("Exp", float_kernel([](auto x) { return std::exp(x); }));
  registry.add("Log", float_kernel([](auto x) { return std::log(x); }));
  registry.add("Erf", float_kernel([](auto x) { return std::erf(x); }));
  registry.add("Tanh", float_kernel([](auto x) { return std::tanh(x); }));
  registry.add("Sin", float_kernel([](auto x) { return std::sin(x); }));
  registry.add("Cos", float_kernel([](auto x) { return std::cos(x); }));
  registry.add("Tan", float_kernel([](auto x) { return std::tan(x); }));
  registry.add("Asin", float_kernel([](auto x) { return std::asin(x); }));
  registry.add("Acos", float_kernel([](auto x) { return std::acos(x); }));
  registry.add("Atan", float_kernel([](auto x) { return std::atan(x); }));
  registry.add("Sinh", float_kernel([](auto x) { return std::sinh(x); }));
  registry.add("Cosh", float_kernel([](auto x) { return std::cosh(x); }));
  registry.add("Asinh", float_kernel([](auto x) { return std::asinh(x); }));
  registry.add("Acosh", float_kernel([](auto x) { return std::acosh(x); }));
  registry.add("Atanh", float_kernel([](auto x) { return std::atanh(x); }));

  registry.add("IsNaN", [](const KernelContext& ctx) {
    return one_output(unary_predicate<TypeSet::Float>(ctx, [](auto x) { return std::isnan(x); }));
  });
  registry.add("IsInf", is_inf_kernel);
  registry.add("Not", unary_kernel<TypeSet::Bool>([](bool x) { return !x; }));
  registry.add("BitwiseNot", unary_kernel<TypeSet::Integer>([](auto x) { return decltype(x)(~x); }));
}

}  // namespace vkg::elementwise
