// Reduce* (all ten ONNX reductions, opsets 1..20), ArgMax/ArgMin and CumSum.
//
// Every reduction is one small accumulator policy run by the same loop over a
// ReducePlan. Floating inputs accumulate in double; integer inputs in 64-bit
// integers, so sums and products of integers stay exact.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/reference/ops/normalization_common.h"

namespace vkg {
namespace {

// The accumulator type of an input element type T.
template <class T> using Accum =
    std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, double>;

template <class A, class T> A to_accum(T v) {
  if constexpr (is_half_type<T>) {
    return A(float(v));
  } else {
    return A(v);
  }
}

// Converts a finished accumulator to the output element type (floating values
// going to integers saturate, like Tensor::cast).
template <class T, class V> T from_accum(V v) {
  if constexpr (is_half_type<T>) {
    return T(float(v));
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    if (std::isnan(v)) return T(0);
    if (v >= V(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    if (v <= V(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    return T(v);
  } else {
    return T(v);
  }
}

// Accumulator policies: State init(); step(State&, A x); finish(const State&, n) with n
// the number of reduced elements.
template <class A> struct SumOp {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) { s += x; }
  static A finish(const State& s, int64_t) { return s; }
};

template <class A> struct MeanOp {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) { s += x; }
  static A finish(const State& s, int64_t n) {
    if constexpr (std::is_integral_v<A>) {
      return n == 0 ? A(0) : A(s / A(n));
    } else {
      return s / double(n);
    }
  }
};

template <class A> struct SumSquareOp {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) { s += x * x; }
  static A finish(const State& s, int64_t) { return s; }
};

template <class A> struct L1Op {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) {
    if constexpr (std::is_unsigned_v<A>) {
      s += x;
    } else {
      s += x < 0 ? -x : x;
    }
  }
  static A finish(const State& s, int64_t) { return s; }
};

template <class A> struct L2Op {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) { s += x * x; }
  static double finish(const State& s, int64_t) { return std::sqrt(double(s)); }
};

template <class A> struct LogSumOp {
  using State = A;
  static State init() { return A(0); }
  static void step(State& s, A x) { s += x; }
  static double finish(const State& s, int64_t) { return std::log(double(s)); }
};

// Streaming log-sum-exp: sum holds sum(exp(x - max)) for the running max, so no
// exponential ever overflows.
template <class A> struct LogSumExpOp {
  struct State {
    double max = -std::numeric_limits<double>::infinity();
    double sum = 0.0;
  };
  static State init() { return State{}; }
  static void step(State& s, A x) {
    const double v = double(x);
    if (v == s.max) {
      s.sum += 1.0;
    } else if (v < s.max) {
      s.sum += std::exp(v - s.max);
    } else {  // a new maximum, or NaN (which then propagates)
      s.sum = s.sum * std::exp(s.max - v) + 1.0;
      s.max = v;
    }
  }
  static double finish(const State& s, int64_t) { return s.max + std::log(s.sum); }
};

template <class A> struct ProdOp {
  using State = A;
  static State init() { return A(1); }
  static void step(State& s, A x) { s *= x; }
  static A finish(const State& s, int64_t) { return s; }
};

// Max and Min propagate NaN, like numpy.
template <class A> struct MaxOp {
  using State = A;
  static State init() {
    if constexpr (std::is_floating_point_v<A>) {
      return -std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::lowest();
    }
  }
  static void step(State& s, A x) {
    if constexpr (std::is_floating_point_v<A>) {
      if (x > s || std::isnan(x)) s = x;
    } else {
      if (x > s) s = x;
    }
  }
  static A finish(const State& s, int64_t) { return s; }
};

template <class A> struct MinOp {
  using State = A;
  static State init() {
    if constexpr (std::is_floating_point_v<A>) {
      return std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::max();
    }
  }
  static void step(State& s, A x) {
    if constexpr (std::is_floating_point_v<A>) {
      if (x < s || std::isnan(x)) s = x;
    } else {
      if (x < s) s = x;
    }
  }
  static A finish(const State& s, int64_t) { return s; }
};

// Calls f.template operator()<T>() for every dtype a reduction accepts (all but bool,
// unless kBool: ReduceMax and ReduceMin take bool from opset 20).
template <bool kBool = false, class F> void visit_reduce_dtype(const Node& node, DType dt, F&& f) {
  visit_dtype(dt, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> && !kBool) {
      VKG_THROW(node.describe() << ": input type bool is not supported");
    } else {
      f.template operator()<T>();
    }
  });
}

template <template <class> class Op, class T> void reduce_typed(const ReducePlan& plan, const T* x, T* y) {
  using A = Accum<T>;
  using Policy = Op<A>;
  const int64_t n = plan.reduced_size();
  for_each_row(plan, [&](int64_t o, int64_t base) {
    typename Policy::State state = Policy::init();
    for (int64_t offset : plan.reduced_offsets) Policy::step(state, to_accum<A>(x[base + offset]));
    y[o] = from_accum<T>(Policy::finish(state, n));
  });
}

// The axes of a Reduce* node: the optional second input (ReduceSum from opset 13,
// every reduction from opset 18), else the `axes` attribute.
std::vector<int64_t> reduce_axes(const KernelContext& ctx) {
  if (!ctx.has_input(1)) return ctx.node.attr_ints("axes");
  const Tensor& axes = ctx.input(1);
  VKG_CHECK(is_integer(axes.dtype()) && axes.rank() <= 1,
            ctx.node.describe() << ": the axes input must be a 1-D integer tensor, got " << axes.describe());
  return axes.to_int64s();
}

template <template <class> class Op, bool kBool = false> RefKernel reduce_kernel() {
  return [](const KernelContext& ctx) -> std::vector<Tensor> {
    const Node& node = ctx.node;
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> axes = reduce_axes(ctx);
    if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) return {x};
    const bool keepdims = node.attr_int("keepdims", 1) != 0;
    const ReducePlan plan = make_reduce_plan(x.shape(), axes_mask(node, axes, x.rank()), keepdims);
    Tensor y(x.dtype(), plan.out_shape);
    visit_reduce_dtype<kBool>(node, x.dtype(),
                              [&]<typename T>() { reduce_typed<Op, T>(plan, x.data<T>(), y.data<T>()); });
    return {y};
  };
}

// ArgMax (kMax) or ArgMin along one axis; ties go to the first index, or the last one
// with select_last_index (opset 12).
template <bool kMax> std::vector<Tensor> arg_extreme(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  VKG_CHECK(x.rank() > 0, node.describe() << ": the input must have rank >= 1");
  const int64_t axis = node.attr_int("axis", 0);
  const std::vector<bool> mask = axes_mask(node, {axis}, x.rank());
  VKG_CHECK(x.dim(axis < 0 ? axis + x.rank() : axis) > 0,
            node.describe() << ": cannot take the index of an extreme over an empty axis " << axis);
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool select_last = node.attr_int("select_last_index", 0) != 0;
  const ReducePlan plan = make_reduce_plan(x.shape(), mask, keepdims);

  Tensor y(DType::Int64, plan.out_shape);
  int64_t* index = y.data<int64_t>();
  visit_reduce_dtype(node, x.dtype(), [&]<typename T>() {
    using A = Accum<T>;
    const T* xs = x.data<T>();
    for_each_row(plan, [&](int64_t o, int64_t base) {
      A best = to_accum<A>(xs[base + plan.reduced_offsets[0]]);
      int64_t best_index = 0;
      for (int64_t r = 1; r < plan.reduced_size(); ++r) {
        const A v = to_accum<A>(xs[base + plan.reduced_offsets[size_t(r)]]);
        if (kMax ? (v > best || (select_last && v == best)) : (v < best || (select_last && v == best))) {
          best = v;
          best_index = r;
        }
      }
      index[o] = best_index;
    });
  });
  return {y};
}

// CumSum (opsets 11, 14): running sums along `axis` (input 1), inclusive or exclusive,
// forwards or from the end; accumulated as the reductions do, over the same ReducePlan.
std::vector<Tensor> cumsum(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> given = ctx.input(1).to_int64s();
  VKG_CHECK(x.rank() >= 1 && given.size() == 1,
            ctx.node.describe() << ": axis must be one value in [-rank, rank) for " << x.describe());
  const ReducePlan plan = make_reduce_plan(x.shape(), axes_mask(ctx.node, given, x.rank()), true);
  const int64_t len = plan.reduced_size();
  const bool exclusive = ctx.node.attr_int("exclusive", 0) != 0, reverse = ctx.node.attr_int("reverse", 0) != 0;
  Tensor y(x.dtype(), x.shape());
  visit_reduce_dtype(ctx.node, x.dtype(), [&]<typename T>() {
    using A = Accum<T>;
    const T* xs = x.data<T>();
    T* ys = y.data<T>();
    for_each_row(plan, [&](int64_t, int64_t base) {
      A acc = A(0);
      for (int64_t s = 0; s < len; ++s) {
        const int64_t off = base + plan.reduced_offsets[size_t(reverse ? len - 1 - s : s)];
        const A v = to_accum<A>(xs[off]);
        if (!exclusive) acc += v;
        ys[off] = from_accum<T>(acc);
        if (exclusive) acc += v;
      }
    });
  });
  return {y};
}

// TopK (opsets 1, 10, 11): the K largest (or smallest) elements along `axis` with their
// indices, best first; equal values keep index order (ONNX's rule); NaN ranks above every
// number. K is an attribute before opset 10, then an input.
std::vector<Tensor> topk(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  int64_t k = 0;
  if (ctx.opset < 10) {
    k = node.attr_int("k");
  } else {
    const std::vector<int64_t> ks = ctx.input(1).to_int64s();
    VKG_CHECK(ks.size() == 1, node.describe() << ": K must hold one value");
    k = ks[0];
  }
  VKG_CHECK(x.rank() >= 1, node.describe() << ": the input must have rank >= 1");
  const std::vector<bool> mask = axes_mask(node, {node.attr_int("axis", -1)}, x.rank());
  const ReducePlan in = make_reduce_plan(x.shape(), mask, true);
  const int64_t len = in.reduced_size();
  VKG_CHECK(k >= 0 && k <= len, node.describe() << ": K " << k << " is outside [0, " << len << "]");
  const bool largest = ctx.opset < 11 || node.attr_int("largest", 1) != 0;
  Shape out_shape = x.shape();
  out_shape[size_t(std::find(mask.begin(), mask.end(), true) - mask.begin())] = k;
  const ReducePlan out = make_reduce_plan(out_shape, mask, true);
  std::vector<int64_t> out_bases;  // the output row of each input row, in the same order
  for_each_row(out, [&](int64_t, int64_t base) { out_bases.push_back(base); });
  Tensor values(x.dtype(), out_shape), indices(DType::Int64, out_shape);
  const std::vector<double> v = x.to_doubles();
  const size_t elem = dtype_size(x.dtype());
  std::vector<int64_t> order(static_cast<size_t>(len));
  for_each_row(in, [&](int64_t o, int64_t base) {
    auto at = [&](int64_t t) { return v[size_t(base + in.reduced_offsets[size_t(t)])]; };
    for (int64_t t = 0; t < len; ++t) order[size_t(t)] = t;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double va = at(a), vb = at(b);
      if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb);
      return largest ? va > vb : va < vb;
    });
    for (int64_t s = 0; s < k; ++s) {
      const int64_t src = base + in.reduced_offsets[size_t(order[size_t(s)])];
      const int64_t dst = out_bases[size_t(o)] + out.reduced_offsets[size_t(s)];
      std::memcpy(values.raw() + size_t(dst) * elem, x.raw() + size_t(src) * elem, elem);
      indices.data<int64_t>()[dst] = order[size_t(s)];
    }
  });
  return {values, indices};
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  registry.add("ReduceSum", reduce_kernel<SumOp>());
  registry.add("ReduceMean", reduce_kernel<MeanOp>());
  registry.add("ReduceSumSquare", reduce_kernel<SumSquareOp>());
  registry.add("ReduceL1", reduce_kernel<L1Op>());
  registry.add("ReduceL2", reduce_kernel<L2Op>());
  registry.add("ReduceLogSum", reduce_kernel<LogSumOp>());
  registry.add("ReduceLogSumExp", reduce_kernel<LogSumExpOp>());
  registry.add("ReduceProd", reduce_kernel<ProdOp>());
  registry.add("ReduceMax", reduce_kernel<MaxOp, true>());
  registry.add("ReduceMin", reduce_kernel<MinOp, true>());
  registry.add("CumSum", cumsum);
  registry.add("TopK", topk);
  registry.add("ArgMax", arg_extreme<true>);
  registry.add("ArgMin", arg_extreme<false>);
}

}  // namespace vkg
