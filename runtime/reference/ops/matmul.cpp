// Gemm and MatMul on the shared GEMM. Float types and 32/64-bit integers are computed
// natively; float16 and bfloat16 in float32.
#include <cmath>
#include <optional>
#include <type_traits>
#include <utility>

#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg::linalg {

namespace {

// The type MatMul and Gemm compute `dt` in, or nullopt when the op does not take it.
std::optional<DType> product_compute_type(DType dt) {
  switch (dt) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
      return DType::Float32;
    case DType::Float64:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64:
      return dt;
    case DType::Int8:
    case DType::Int16:
    case DType::UInt8:
    case DType::UInt16:
    case DType::Bool:
      break;
  }
  return std::nullopt;
}

// Calls f.template operator()<T>() with the C++ type of a product_compute_type.
template <class F> decltype(auto) visit_product_type(DType ct, F&& f) {
  switch (ct) {
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::UInt32:
      return f.template operator()<uint32_t>();
    case DType::UInt64:
      return f.template operator()<uint64_t>();
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int8:
    case DType::Int16:
    case DType::UInt8:
    case DType::UInt16:
    case DType::Bool:
      break;
  }
  return f.template operator()<float>();
}

DType checked_compute_type(const Node& node, const Tensor& a, const Tensor& b) {
  VKG_CHECK(a.dtype() == b.dtype(), node.describe() << ": inputs have different types " << dtype_name(a.dtype())
                                                    << " and " << dtype_name(b.dtype()));
  const std::optional<DType> ct = product_compute_type(a.dtype());
  VKG_CHECK(ct, node.describe() << ": input type " << dtype_name(a.dtype())
                                << " is not supported (expects a float type or a 32/64-bit integer type)");
  return *ct;
}

// out[batch..., m, n] = a[a_batch..., m, k] * b[b_batch..., k, n], where `batch` is
// the numpy broadcast of a_batch and b_batch.
template <class T> void batched_matmul(const T* a, const Shape& a_batch, const T* b, const Shape& b_batch,
                                       const Shape& batch, int64_t m, int64_t n, int64_t k, T* out) {
  const int64_t batches = num_elements(batch);
  if (num_elements(b_batch) == 1) {
    // b is shared by every batch: one product over all the rows of a.
    gemm<T>(false, false, batches * m, n, k, T(1), a, k, b, n, T(0), out, n);
    return;
  }
  const std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
  const std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t a_off = 0;
    int64_t b_off = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      a_off += idx[d] * a_strides[d];
      b_off += idx[d] * b_strides[d];
    }
    gemm<T>(false, false, m, n, k, T(1), a + a_off * m * k, k, b + b_off * k * n, n, T(0), out + i * m * n, n);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

template <class T> Tensor matmul_forward(const Node& node, const Tensor& a, const Tensor& b) {
  VKG_CHECK(a.rank() >= 1 && b.rank() >= 1, node.describe()
                                                << ": inputs must have rank >= 1, got " << shape_to_string(a.shape())
                                                << " and " << shape_to_string(b.shape()));
  // 1-D operands are promoted like numpy: a to [1, K], b to [K, 1]; the dim is dropped after.
  Shape a_shape = a.shape();
  Shape b_shape = b.shape();
  if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b_shape.size() == 1) b_shape.push_back(1);
  const int64_t m = a_shape[a_shape.size() - 2];
  const int64_t k = a_shape.back();
  const int64_t n = b_shape.back();
  VKG_CHECK(b_shape[b_shape.size() - 2] == k, node.describe()
                                                  << ": cannot multiply " << shape_to_string(a.shape()) << " by "
                                                  << shape_to_string(b.shape()) << " (inner dims differ)");
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(a_batch, b_batch);
  } catch (const Error& e) {
    VKG_THROW(node.describe() << ": batch dims do not broadcast: " << e.what());
  }
  Shape out_shape = batch;
  if (a.rank() > 1) out_shape.push_back(m);
  if (b.rank() > 1) out_shape.push_back(n);
  Tensor out(dtype_of<T>, out_shape);
  if (!out.empty()) batched_matmul<T>(a.data<T>(), a_batch, b.data<T>(), b_batch, batch, m, n, k, out.data<T>());
  return out;
}

template Tensor matmul_forward<float>(const Node&, const Tensor&, const Tensor&);
template Tensor matmul_forward<double>(const Node&, const Tensor&, const Tensor&);
template Tensor matmul_forward<int32_t>(const Node&, const Tensor&, const Tensor&);
template Tensor matmul_forward<int64_t>(const Node&, const Tensor&, const Tensor&);
template Tensor matmul_forward<uint32_t>(const Node&, const Tensor&, const Tensor&);
template Tensor matmul_forward<uint64_t>(const Node&, const Tensor&, const Tensor&);

std::vector<Tensor> matmul(const KernelContext& ctx) {
  const Tensor& a_in = ctx.input(0);
  const Tensor& b_in = ctx.input(1);
  const DType ct = checked_compute_type(ctx.node, a_in, b_in);
  Tensor a_store, b_store;
  const Tensor& a = as_type(a_in, ct, a_store);
  const Tensor& b = as_type(b_in, ct, b_store);
  Tensor out = visit_product_type(ct, [&]<class T>() { return matmul_forward<T>(ctx.node, a, b); });
  return one_output(ct == a_in.dtype() ? std::move(out) : out.cast(a_in.dtype()));
}

std::vector<Tensor> gemm_op(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& a_in = ctx.input(0);
  const Tensor& b_in = ctx.input(1);
  const DType ct = checked_compute_type(node, a_in, b_in);
  VKG_CHECK(a_in.rank() == 2 && b_in.rank() == 2, node.describe()
                                                      << ": A and B must be 2-D, got " << shape_to_string(a_in.shape())
                                                      << " and " << shape_to_string(b_in.shape()));
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const double alpha = node.attr_float("alpha", 1.0f);
  const double beta = node.attr_float("beta", 1.0f);
  const int64_t m = trans_a ? a_in.dim(1) : a_in.dim(0);
  const int64_t k = trans_a ? a_in.dim(0) : a_in.dim(1);
  const int64_t n = trans_b ? b_in.dim(0) : b_in.dim(1);
  const int64_t kb = trans_b ? b_in.dim(1) : b_in.dim(0);
  VKG_CHECK(k == kb, node.describe() << ": cannot multiply A " << shape_to_string(a_in.shape()) << " (transA "
                                     << trans_a << ") by B " << shape_to_string(b_in.shape()) << " (transB " << trans_b
                                     << ")");
  const Tensor* c_in = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  std::vector<int64_t> c_strides;
  if (c_in) {
    VKG_CHECK(c_in->dtype() == a_in.dtype(), node.describe() << ": C has type " << dtype_name(c_in->dtype())
                                                             << " but A has type " << dtype_name(a_in.dtype()));
    VKG_CHECK(c_in->rank() <= 2, node.describe() << ": C " << shape_to_string(c_in->shape()) << " has rank > 2");
    try {
      c_strides = broadcast_strides(c_in->shape(), {m, n});
    } catch (const Error&) {
      VKG_THROW(node.describe() << ": C " << shape_to_string(c_in->shape()) << " does not broadcast to the output ["
                                << m << ", " << n << "]");
    }
  }

  Tensor a_store, b_store, c_store;
  const Tensor& a = as_type(a_in, ct, a_store);
  const Tensor& b = as_type(b_in, ct, b_store);
  const Tensor* c = c_in ? &as_type(*c_in, ct, c_store) : nullptr;
  Tensor out(ct, {m, n});
  visit_product_type(ct, [&]<class T>() {
    T* y = out.data<T>();
    if constexpr (std::is_floating_point_v<T>) {
      // Y = beta * C first, then Y += alpha * A * B.
      if (c)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) y[i * n + j] = T(beta) * c->data<T>()[i * c_strides[0] + j * c_strides[1]];
      gemm<T>(trans_a, trans_b, m, n, k, T(alpha), a.data<T>(), a.dim(1), b.data<T>(), b.dim(1), c ? T(1) : T(0), y, n);
    } else {
      // Integers: the exact product, then the scaling, exact when alpha and beta are 1.
      gemm<T>(trans_a, trans_b, m, n, k, T(1), a.data<T>(), a.dim(1), b.data<T>(), b.dim(1), T(0), y, n);
      const bool exact = alpha == 1.0 && (!c || beta == 1.0);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const T cv = c ? c->data<T>()[i * c_strides[0] + j * c_strides[1]] : T(0);
          y[i * n + j] = exact ? T(y[i * n + j] + cv) : T(alpha * double(y[i * n + j]) + beta * double(cv));
        }
      }
    }
  });
  return one_output(ct == a_in.dtype() ? std::move(out) : out.cast(a_in.dtype()));
}

// Det (opset 11): the determinant of every matrix of the last two axes, by Gaussian
// elimination with partial pivoting in double.
std::vector<Tensor> det(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  VKG_CHECK(is_floating(x.dtype()), ctx.node.describe() << ": the input has type " << dtype_name(x.dtype())
                                                        << ", expected a float type");
  VKG_CHECK(x.rank() >= 2 && x.dim(x.rank() - 1) == x.dim(x.rank() - 2),
            ctx.node.describe() << ": the input must be square matrices [*, M, M], got " << x.describe());
  const int64_t m = x.dim(x.rank() - 1);
  const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
  Tensor out(x.dtype(), out_shape);
  const std::vector<double> v = x.to_doubles();
  for (int64_t b = 0; b < out.size(); ++b) {
    std::vector<double> a(v.begin() + b * m * m, v.begin() + (b + 1) * m * m);
    double d = 1.0;
    for (int64_t c = 0; c < m && d != 0.0; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::abs(a[size_t(r * m + c)]) > std::abs(a[size_t(pivot * m + c)])) pivot = r;
      if (a[size_t(pivot * m + c)] == 0.0) {
        d = 0.0;
        break;
      }
      if (pivot != c) {
        for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(c * m + k)], a[size_t(pivot * m + k)]);
        d = -d;
      }
      const double p = a[size_t(c * m + c)];
      d *= p;
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[size_t(r * m + c)] / p;
        for (int64_t k = c; k < m; ++k) a[size_t(r * m + k)] -= f * a[size_t(c * m + k)];
      }
    }
    out.set_from_double(b, d);
  }
  return {out};
}

}  // namespace vkg::linalg
