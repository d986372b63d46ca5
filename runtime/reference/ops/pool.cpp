// MaxPool, AveragePool, LpPool and their global forms, over any number of spatial dims.
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/reference/ops/linalg_kernels.h"

namespace vkg::linalg {

namespace {

// The input positions every output position of a pool reads, as flat row-major
// offsets into one N x C plane (CSR layout: the taps of output o are
// taps[first[o] .. first[o + 1])), and how many window positions fall inside the
// padded input (what count_include_pad divides by).
struct PoolWindows {
  std::vector<int64_t> first;
  std::vector<int64_t> taps;
  std::vector<int64_t> padded_count;
};

PoolWindows pool_windows(const WindowGeometry& g) {
  const size_t r = g.rank();
  // Per dim and output index: the valid input indices and the count inside the padding.
  std::vector<std::vector<std::vector<int64_t>>> dim_taps(r);
  std::vector<std::vector<int64_t>> dim_padded(r);
  for (size_t d = 0; d < r; ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      std::vector<int64_t> valid;
      int64_t padded = 0;
      for (int64_t k = 0; k < g.kernel[d]; ++k) {
        const int64_t p = g.tap(d, o, k);
        if (p >= 0 && p < g.in[d]) valid.push_back(p);
        if (p >= -g.pads_begin[d] && p < g.in[d] + g.pads_end[d]) ++padded;
      }
      dim_taps[d].push_back(std::move(valid));
      dim_padded[d].push_back(padded);
    }
  }
  const std::vector<int64_t> in_strides = contiguous_strides(g.in);
  const int64_t out_size = num_elements(g.out);
  PoolWindows w;
  w.first.reserve(size_t(out_size + 1));
  w.padded_count.reserve(size_t(out_size));
  std::vector<int64_t> out_idx(r, 0);
  std::vector<size_t> tap_idx(r, 0);
  for (int64_t o = 0; o < out_size; ++o) {
    w.first.push_back(int64_t(w.taps.size()));
    int64_t padded = 1;
    bool any = true;
    for (size_t d = 0; d < r; ++d) {
      padded *= dim_padded[d][size_t(out_idx[d])];
      any = any && !dim_taps[d][size_t(out_idx[d])].empty();
    }
    w.padded_count.push_back(padded);
    // Cartesian product of the per-dim taps, last dim fastest.
    auto next_tap = [&] {
      for (size_t d = r; d-- > 0;) {
        if (++tap_idx[d] < dim_taps[d][size_t(out_idx[d])].size()) return true;
        tap_idx[d] = 0;
      }
      return false;
    };
    std::fill(tap_idx.begin(), tap_idx.end(), 0);
    for (bool more = any; more; more = next_tap()) {
      int64_t offset = 0;
      for (size_t d = 0; d < r; ++d) offset += dim_taps[d][size_t(out_idx[d])][tap_idx[d]] * in_strides[d];
      w.taps.push_back(offset);
    }
    for (size_t d = r; d-- > 0;) {
      if (++out_idx[d] < g.out[d]) break;
      out_idx[d] = 0;
    }
  }
  w.first.push_back(int64_t(w.taps.size()));
  return w;
}

Shape spatial_dims(const Node& node, const Tensor& x) {
  VKG_CHECK(x.rank() >= 3, node.describe()
                               << ": input must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x.shape()));
  return Shape(x.shape().begin() + 2, x.shape().end());
}

WindowGeometry pool_geometry(const Node& node, const Tensor& x) {
  return resolve_pool_window(node, spatial_dims(node, x));
}

Shape pooled_shape(const Tensor& x, const Shape& spatial_out) {
  Shape s{x.dim(0), x.dim(1)};
  s.insert(s.end(), spatial_out.begin(), spatial_out.end());
  return s;
}

// The row-major offset `offset` of `dims` re-expressed in column-major order.
int64_t column_major_offset(int64_t offset, const Shape& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = offset % dims[d];
    offset /= dims[d];
  }
  int64_t out = 0;
  for (size_t d = dims.size(); d-- > 0;) out = out * dims[d] + idx[d];
  return out;
}

template <class T> void max_pool_typed(const Tensor& x, const WindowGeometry& g, const PoolWindows& w,
                                       bool column_major, Tensor& y, Tensor* indices) {
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_size = num_elements(g.in);
  const int64_t out_size = num_elements(g.out);
  const T* xs = x.data<T>();
  T* ys = y.data<T>();
  int64_t* is = indices ? indices->data<int64_t>() : nullptr;
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = xs + p * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_tap = -1;
      for (int64_t t = w.first[size_t(o)]; t < w.first[size_t(o) + 1]; ++t) {
        const T v = xp[w.taps[size_t(t)]];
        if (best_tap < 0 || v > best) {
          best = v;
          best_tap = w.taps[size_t(t)];
        }
      }
      ys[p * out_size + o] = best;
      if (is) {
        const int64_t local = best_tap < 0 ? 0 : (column_major ? column_major_offset(best_tap, g.in) : best_tap);
        is[p * out_size + o] = p * in_size + local;
      }
    }
  }
}

// AveragePool (p == 0) and LpPool (p > 0): the mean, or the p-norm, of every window.
template <class T> void mean_or_norm_pool(const Tensor& x, const WindowGeometry& g, const PoolWindows& w,
                                          bool count_include_pad, int64_t p, Tensor& y) {
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_size = num_elements(g.in);
  const int64_t out_size = num_elements(g.out);
  const T* xs = x.data<T>();
  T* ys = y.data<T>();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = xs + pl * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      double acc = 0.0;
      const int64_t begin = w.first[size_t(o)];
      const int64_t end = w.first[size_t(o) + 1];
      for (int64_t t = begin; t < end; ++t) {
        const double v = double(xp[w.taps[size_t(t)]]);
        acc += p == 0 ? v : std::pow(std::abs(v), double(p));
      }
      double result;
      if (p == 0) {
        const int64_t count = count_include_pad ? w.padded_count[size_t(o)] : end - begin;
        result = count > 0 ? acc / double(count) : 0.0;
      } else {
        result = std::pow(acc, 1.0 / double(p));
      }
      ys[pl * out_size + o] = T(result);
    }
  }
}

int64_t lp_norm_order(const Node& node) {
  // LpPool-1 stored p as a float; later versions as an int.
  int64_t p = 2;
  if (node.has_attr("p")) {
    const Attribute& a = node.attrs.at("p");
    p = a.kind == Attribute::Kind::Float ? int64_t(a.f) : node.attr_int("p");
  }
  VKG_CHECK(p >= 1, node.describe() << ": p must be >= 1, got " << p);
  return p;
}

// Runs a float pool with the type conversions of float_compute_type.
template <class F> Tensor float_pool(const Node& node, const Tensor& x_in, const Shape& out_shape, F&& body) {
  const DType ct = float_compute_type(node, x_in.dtype());
  Tensor x_store;
  const Tensor& x = as_type(x_in, ct, x_store);
  Tensor y(ct, out_shape);
  if (ct == DType::Float32) {
    body.template operator()<float>(x, y);
  } else {
    body.template operator()<double>(x, y);
  }
  return y.dtype() == x_in.dtype() ? y : y.cast(x_in.dtype());
}

// AveragePool (p == 0) or LpPool (p > 0) over the windows of `g`, as the only output.
std::vector<Tensor> average_or_lp_pool(const Node& node, const Tensor& x, const WindowGeometry& g,
                                       bool count_include_pad, int64_t p) {
  const PoolWindows w = pool_windows(g);
  return one_output(float_pool(node, x, pooled_shape(x, g.out), [&]<class T>(const Tensor& xt, Tensor& y) {
    mean_or_norm_pool<T>(xt, g, w, count_include_pad, p, y);
  }));
}

}  // namespace

std::vector<Tensor> max_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x_in = ctx.input(0);
  const WindowGeometry g = pool_geometry(node, x_in);
  const int64_t storage_order = node.attr_int("storage_order", 0);
  VKG_CHECK(storage_order == 0 || storage_order == 1, node.describe()
                                                          << ": storage_order must be 0 or 1, got " << storage_order);
  VKG_CHECK(x_in.dtype() != DType::Bool, node.describe() << ": input type bool is not supported");
  const bool want_indices = ctx.num_outputs() > 1 && !node.outputs[1].empty();
  const PoolWindows w = pool_windows(g);

  // Half types are compared as float (exactly: the max is one of the inputs).
  const bool half = x_in.dtype() == DType::Float16 || x_in.dtype() == DType::BFloat16;
  Tensor x_store;
  const Tensor& x = as_type(x_in, half ? DType::Float32 : x_in.dtype(), x_store);
  Tensor y(x.dtype(), pooled_shape(x, g.out));
  Tensor indices(DType::Int64, want_indices ? y.shape() : Shape{0});
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!is_half_type<T> && !std::is_same_v<T, bool>)
      max_pool_typed<T>(x, g, w, storage_order == 1, y, want_indices ? &indices : nullptr);
  });
  std::vector<Tensor> out;
  out.push_back(half ? y.cast(x_in.dtype()) : std::move(y));
  if (want_indices) out.push_back(std::move(indices));
  return out;
}

std::vector<Tensor> average_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const WindowGeometry g = pool_geometry(node, x);
  const bool count_include_pad = node.attr_int("count_include_pad", 0) != 0;
  return average_or_lp_pool(node, x, g, count_include_pad, 0);
}

std::vector<Tensor> lp_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const WindowGeometry g = pool_geometry(node, x);
  const int64_t p = lp_norm_order(node);
  return average_or_lp_pool(node, x, g, false, p);
}

std::vector<Tensor> global_average_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const WindowGeometry g = global_window(spatial_dims(node, x));
  return average_or_lp_pool(node, x, g, false, 0);
}

std::vector<Tensor> global_lp_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const WindowGeometry g = global_window(spatial_dims(node, x));
  const int64_t p = lp_norm_order(node);
  return average_or_lp_pool(node, x, g, false, p);
}

std::vector<Tensor> global_max_pool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const WindowGeometry g = global_window(spatial_dims(node, x));
  const PoolWindows w = pool_windows(g);
  return one_output(float_pool(node, x, pooled_shape(x, g.out), [&]<class T>(const Tensor& xt, Tensor& y) {
    max_pool_typed<T>(xt, g, w, false, y, nullptr);
  }));
}

std::vector<Tensor> max_unpool(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  spatial_dims(node, x);  // checks X's rank
  VKG_CHECK(indices.shape() == x.shape() && indices.dtype() == DType::Int64,
            node.describe() << ": indices " << indices.describe() << " must be int64 with the shape of X "
                            << shape_to_string(x.shape()));
  // The indices address the shape MaxPool's input had (the inferred shape); with an
  // explicit output_shape the same coordinates are placed into that shape.
  const Shape inferred = unpooled_shape(node, x.shape());
  Shape out_shape = inferred;
  if (ctx.has_input(2)) {
    out_shape = ctx.input(2).to_int64s();
    VKG_CHECK(out_shape.size() == inferred.size() && out_shape[0] == x.dim(0) && out_shape[1] == x.dim(1),
              node.describe() << ": output_shape " << shape_to_string(out_shape) << " does not fit the input "
                              << shape_to_string(x.shape()));
  }
  Tensor y(x.dtype(), out_shape);
  const size_t elem = dtype_size(x.dtype());
  const int64_t* idx = indices.data<int64_t>();
  const int64_t limit = num_elements(inferred);
  std::vector<int64_t> coord(inferred.size());
  for (int64_t e = 0; e < x.size(); ++e) {
    int64_t flat = idx[e];
    VKG_CHECK(flat >= 0 && flat < limit,
              node.describe() << ": index " << flat << " is outside the unpooled shape " << shape_to_string(inferred));
    for (size_t d = inferred.size(); d-- > 0;) {
      coord[d] = flat % inferred[d];
      flat /= inferred[d];
    }
    int64_t target = 0;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      VKG_CHECK(coord[d] < out_shape[d], node.describe() << ": index " << idx[e] << " falls outside output_shape "
                                                         << shape_to_string(out_shape));
      target = target * out_shape[d] + coord[d];
    }
    std::memcpy(y.raw() + size_t(target) * elem, x.raw() + size_t(e) * elem, elem);
  }
  return one_output(std::move(y));
}

}  // namespace vkg::linalg
