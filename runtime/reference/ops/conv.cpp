// Conv and ConvTranspose: im2col / col2im around the shared GEMM, a plain view of the
// input for pointwise convolutions, and a direct loop for depthwise ones. Any number
// of spatial dims; float32 and float64 (float16 and bfloat16 are computed in float32).
// DeformConv (2-D) is a direct loop in double.
#include <cmath>

#include "runtime/reference/ops/linalg_kernels.h"
#include "runtime/reference/ops/normalization_common.h"

namespace vkg::linalg {

namespace {

void check_ranks(const Node& node, const Tensor& x, const Tensor& w) {
  VKG_CHECK(x.rank() >= 3, node.describe()
                               << ": input X must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x.shape()));
  VKG_CHECK(w.rank() == x.rank(), node.describe() << ": weights " << shape_to_string(w.shape())
                                                  << " must have the rank of the input " << shape_to_string(x.shape()));
}

void check_same_type(const Node& node, const Tensor& x, const Tensor& w) {
  VKG_CHECK(w.dtype() == x.dtype(), node.describe() << ": weights have type " << dtype_name(w.dtype())
                                                    << " but the input has type " << dtype_name(x.dtype()));
}

// The spatial position of flat kernel offset kk.
std::vector<int64_t> kernel_position(const Shape& kernel, int64_t kk) {
  std::vector<int64_t> pos(kernel.size());
  for (size_t d = kernel.size(); d-- > 0;) {
    pos[d] = kk % kernel[d];
    kk /= kernel[d];
  }
  return pos;
}

// Fills row `r` of every `rows x len` block of y with value[r] (the bias), or zeros.
template <class T> void fill_channels(T* y, int64_t blocks, int64_t rows, int64_t len, const T* value) {
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t r = 0; r < rows; ++r) std::fill_n(y + (b * rows + r) * len, len, value ? value[r] : T(0));
}

// A new [batch, channels, spatial...] output of x's type and batch with every channel
// set to its `bias` value, or to zero without a bias.
template <class T> Tensor biased_output(const Tensor& x, int64_t channels, const Shape& spatial, const Tensor* bias) {
  Shape shape{x.dim(0), channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  Tensor out(x.dtype(), shape);
  fill_channels(out.data<T>(), x.dim(0), channels, num_elements(spatial), bias ? bias->data<T>() : nullptr);
  return out;
}

// Largest number of elements an im2col/col2im buffer may hold; bigger problems are
// done in slices of rows, which does not change any sum.
constexpr int64_t kMaxColumnElements = int64_t(1) << 23;

// Rows of `grid` per slice when each of its positions needs `per_position` buffer elements.
int64_t rows_per_slice(const Shape& grid, int64_t per_position) {
  return std::max<int64_t>(1, kMaxColumnElements / std::max<int64_t>(1, per_position * grid.back()));
}

// col[c * K + kk][o] = the input of channel c that output position o (of the output rows
// [row_begin, row_end)) reads at kernel offset kk, or 0 in the padding. The row length
// of col is the number of positions in those rows.
template <class T>
void im2col(const T* x, int64_t channels, const WindowGeometry& g, int64_t row_begin, int64_t row_end, T* col) {
  const WindowMap map{g.out, g.in, g.strides, g.dilations, g.pads_begin};
  const int64_t in_size = num_elements(g.in);
  const int64_t row_len = g.out.back();
  const int64_t cols = (row_end - row_begin) * row_len;
  const int64_t step = g.strides.back();
  const int64_t kernel_size = num_elements(g.kernel);
  for (int64_t kk = 0; kk < kernel_size; ++kk) {
    const std::vector<int64_t> kpos = kernel_position(g.kernel, kk);
    for (int64_t c = 0; c < channels; ++c) {
      const T* xc = x + c * in_size;
      T* dst = col + (c * kernel_size + kk) * cols;
      visit_window_rows(map, kpos.data(), row_begin, row_end,
                        [&](int64_t out_row, int64_t in_row, int64_t lo, int64_t hi) {
                          T* d = dst + out_row;
                          std::fill(d, d + lo, T(0));
                          const T* src = xc + in_row;
                          if (step == 1) {
                            for (int64_t j = lo; j < hi; ++j) d[j] = src[j];
                          } else {
                            for (int64_t j = lo; j < hi; ++j) d[j] = src[j * step];
                          }
                          std::fill(d + hi, d + row_len, T(0));
                        });
    }
  }
}

// y[m] += sum over kernel offsets of w[m, kk] * x (one input channel per group).
template <class T> void depthwise(const T* x, const T* w, int64_t out_channels, const WindowGeometry& g, T* y) {
  const WindowMap map{g.out, g.in, g.strides, g.dilations, g.pads_begin};
  const int64_t step = g.strides.back();
  const int64_t kernel_size = num_elements(g.kernel);
  const int64_t out_size = num_elements(g.out);
  for (int64_t kk = 0; kk < kernel_size; ++kk) {
    const std::vector<int64_t> kpos = kernel_position(g.kernel, kk);
    for (int64_t m = 0; m < out_channels; ++m) {
      const T wv = w[m * kernel_size + kk];
      T* ym = y + m * out_size;
      visit_window_rows(map, kpos.data(), 0, grid_rows(g.out),
                        [&](int64_t out_row, int64_t in_row, int64_t lo, int64_t hi) {
                          T* d = ym + out_row;
                          const T* src = x + in_row;
                          if (step == 1) {
                            for (int64_t j = lo; j < hi; ++j) d[j] += wv * src[j];
                          } else {
                            for (int64_t j = lo; j < hi; ++j) d[j] += wv * src[j * step];
                          }
                        });
    }
  }
}

bool is_pointwise(const WindowGeometry& g) {
  for (size_t i = 0; i < g.rank(); ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) return false;
  return true;
}

// y[m] += w^T x scattered to the output positions (col2im).
template <class T> Tensor conv_transpose_typed(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t group,
                                               const WindowGeometry& g) {
  const int64_t batch = x.dim(0);
  const int64_t in_channels = x.dim(1);
  const int64_t cg = in_channels / group;
  const int64_t mg = w.dim(1);
  const int64_t out_channels = mg * group;
  const int64_t kernel_size = num_elements(g.kernel);
  const int64_t in_size = num_elements(g.in);
  const int64_t out_size = num_elements(g.out);

  Tensor out = biased_output<T>(x, out_channels, g.out, bias);
  T* y = out.data<T>();
  if (out.empty() || in_size == 0) return out;

  // The "iterated" grid is X's, the target grid Y's.
  const WindowMap map{g.in, g.out, g.strides, g.dilations, g.pads_begin};
  const int64_t step = g.strides.back();
  const int64_t rows_k = mg * kernel_size;  // rows of the column buffer
  const int64_t rows = grid_rows(g.in);
  const int64_t slice_rows = rows_per_slice(g.in, rows_k);
  const int64_t row_len = g.in.back();
  std::vector<T> col(size_t(rows_k * std::min(rows, slice_rows) * row_len));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = x.data<T>() + (n * in_channels + gi * cg) * in_size;
      const T* wg = w.data<T>() + gi * cg * rows_k;
      T* yg = y + (n * out_channels + gi * mg) * out_size;
      for (int64_t r0 = 0; r0 < rows; r0 += slice_rows) {
        const int64_t r1 = std::min(rows, r0 + slice_rows);
        const int64_t cols = (r1 - r0) * row_len;
        gemm<T>(true, false, rows_k, cols, cg, T(1), wg, rows_k, xg + r0 * row_len, in_size, T(0), col.data(), cols);
        for (int64_t m = 0; m < mg; ++m) {
          T* ym = yg + m * out_size;
          for (int64_t kk = 0; kk < kernel_size; ++kk) {
            const std::vector<int64_t> kpos = kernel_position(g.kernel, kk);
            const T* src = col.data() + (m * kernel_size + kk) * cols;
            visit_window_rows(map, kpos.data(), r0, r1, [&](int64_t in_row, int64_t out_row, int64_t lo, int64_t hi) {
              for (int64_t j = lo; j < hi; ++j) ym[out_row + j * step] += src[in_row + j];
            });
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

const Tensor* conv_bias(const KernelContext& ctx, size_t index, int64_t channels, DType dtype) {
  if (!ctx.has_input(index)) return nullptr;
  const Tensor& b = ctx.input(index);
  VKG_CHECK(b.rank() == 1 && b.dim(0) == channels, ctx.node.describe() << ": bias " << shape_to_string(b.shape())
                                                                       << " must be 1-D with " << channels
                                                                       << " values (one per output channel)");
  VKG_CHECK(b.dtype() == dtype,
            ctx.node.describe() << ": bias has type " << dtype_name(b.dtype()) << ", expected " << dtype_name(dtype));
  return &b;
}

ConvSetup conv_setup(const Node& node, const Tensor& x, const Tensor& w) {
  check_ranks(node, x, w);
  const int64_t group = node.attr_int("group", 1);
  VKG_CHECK(group >= 1, node.describe() << ": group must be >= 1, got " << group);
  VKG_CHECK(x.dim(1) % group == 0 && w.dim(0) % group == 0,
            node.describe() << ": group " << group << " does not divide the " << x.dim(1) << " input channels and the "
                            << w.dim(0) << " output channels");
  VKG_CHECK(w.dim(1) * group == x.dim(1), node.describe() << ": input has " << x.dim(1) << " channels but the weights "
                                                          << shape_to_string(w.shape()) << " with group " << group
                                                          << " expect " << w.dim(1) * group);
  const Shape spatial(x.shape().begin() + 2, x.shape().end());
  return {group, resolve_window(node, spatial, conv_kernel_shape(node, w.shape()), false)};
}

template <class T> Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvSetup& setup) {
  const int64_t group = setup.group;
  const WindowGeometry& g = setup.geometry;
  const int64_t batch = x.dim(0);
  const int64_t in_channels = x.dim(1);
  const int64_t out_channels = w.dim(0);
  const int64_t cg = in_channels / group;   // input channels per group
  const int64_t mg = out_channels / group;  // output channels per group
  const int64_t kernel_size = num_elements(g.kernel);
  const int64_t in_size = num_elements(g.in);
  const int64_t out_size = num_elements(g.out);

  Tensor out = biased_output<T>(x, out_channels, g.out, bias);
  T* y = out.data<T>();
  if (out.empty()) return out;

  const bool pointwise = is_pointwise(g);
  const int64_t k = cg * kernel_size;  // the GEMM's inner dim
  const int64_t rows = grid_rows(g.out);
  const int64_t slice_rows = rows_per_slice(g.out, k);
  const int64_t row_len = g.out.back();
  std::vector<T> col;
  if (!pointwise && cg > 1) col.resize(size_t(k * std::min(rows, slice_rows) * row_len));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = x.data<T>() + (n * in_channels + gi * cg) * in_size;
      const T* wg = w.data<T>() + gi * mg * k;
      T* yg = y + (n * out_channels + gi * mg) * out_size;
      if (pointwise) {
        gemm<T>(false, false, mg, out_size, k, T(1), wg, k, xg, out_size, T(1), yg, out_size);
      } else if (cg == 1) {
        depthwise(xg, wg, mg, g, yg);
      } else {
        for (int64_t r0 = 0; r0 < rows; r0 += slice_rows) {
          const int64_t r1 = std::min(rows, r0 + slice_rows);
          const int64_t cols = (r1 - r0) * row_len;
          im2col(xg, cg, g, r0, r1, col.data());
          gemm<T>(false, false, mg, cols, k, T(1), wg, k, col.data(), cols, T(1), yg + r0 * row_len, out_size);
        }
      }
    }
  }
  return out;
}

template Tensor conv_forward<float>(const Tensor&, const Tensor&, const Tensor*, const ConvSetup&);
template Tensor conv_forward<double>(const Tensor&, const Tensor&, const Tensor*, const ConvSetup&);
template Tensor conv_forward<int32_t>(const Tensor&, const Tensor&, const Tensor*, const ConvSetup&);

std::vector<Tensor> conv(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x_in = ctx.input(0);
  const Tensor& w_in = ctx.input(1);
  const ConvSetup setup = conv_setup(node, x_in, w_in);
  check_same_type(node, x_in, w_in);
  const Tensor* b_in = conv_bias(ctx, 2, w_in.dim(0), x_in.dtype());

  const DType ct = float_compute_type(node, x_in.dtype());
  Tensor x_store, w_store, b_store;
  const Tensor& x = as_type(x_in, ct, x_store);
  const Tensor& w = as_type(w_in, ct, w_store);
  const Tensor* b = b_in ? &as_type(*b_in, ct, b_store) : nullptr;
  Tensor y = ct == DType::Float32 ? conv_forward<float>(x, w, b, setup) : conv_forward<double>(x, w, b, setup);
  return one_output(y.dtype() == x_in.dtype() ? std::move(y) : y.cast(x_in.dtype()));
}

std::vector<Tensor> conv_transpose(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x_in = ctx.input(0);
  const Tensor& w_in = ctx.input(1);
  check_ranks(node, x_in, w_in);
  check_same_type(node, x_in, w_in);
  const int64_t group = node.attr_int("group", 1);
  VKG_CHECK(group >= 1, node.describe() << ": group must be >= 1, got " << group);
  VKG_CHECK(w_in.dim(0) == x_in.dim(1), node.describe() << ": input has " << x_in.dim(1) << " channels but the weights "
                                                        << shape_to_string(w_in.shape()) << " expect " << w_in.dim(0));
  VKG_CHECK(x_in.dim(1) % group == 0,
            node.describe() << ": group " << group << " does not divide the " << x_in.dim(1) << " input channels");
  const Tensor* b_in = conv_bias(ctx, 2, w_in.dim(1) * group, x_in.dtype());
  const Shape spatial(x_in.shape().begin() + 2, x_in.shape().end());
  const WindowGeometry g = resolve_transpose_window(node, spatial, conv_kernel_shape(node, w_in.shape()));

  const DType ct = float_compute_type(node, x_in.dtype());
  Tensor x_store, w_store, b_store;
  const Tensor& x = as_type(x_in, ct, x_store);
  const Tensor& w = as_type(w_in, ct, w_store);
  const Tensor* b = b_in ? &as_type(*b_in, ct, b_store) : nullptr;
  Tensor y = ct == DType::Float32 ? conv_transpose_typed<float>(x, w, b, group, g)
                                  : conv_transpose_typed<double>(x, w, b, group, g);
  return one_output(y.dtype() == x_in.dtype() ? std::move(y) : y.cast(x_in.dtype()));
}

// DeformConv (opset 19), 2-D: a Conv whose every tap (ki, kj) of output (i, j) samples X at
// its regular position moved by offset [N, offset_group * kH * kW * 2, oH, oW] ((dy, dx)
// pairs, per offset group of input channels), bilinearly with zeros outside X, times
// mask [N, offset_group * kH * kW, oH, oW] when given. As ONNX's reference (GridSample
// with align_corners), a sample's coordinates are rounded to float32. Computed in double.
std::vector<Tensor> deform_conv(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  VKG_CHECK(x.rank() == 4, node.describe() << ": only 2-D DeformConv (X [N, C, H, W]) is supported, got "
                                           << x.describe());
  const ConvSetup setup = conv_setup(node, x, w);
  const WindowGeometry& g = setup.geometry;
  const int64_t offset_groups = node.attr_int("offset_group", 1);
  const int64_t batch = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t out_channels = w.dim(0), kh = g.kernel[0], kw = g.kernel[1], oh = g.out[0], ow = g.out[1];
  VKG_CHECK(offset_groups >= 1 && channels % offset_groups == 0,
            node.describe() << ": offset_group " << offset_groups << " must divide the " << channels
                            << " input channels");
  VKG_CHECK(offset.shape() == Shape({batch, offset_groups * kh * kw * 2, oh, ow}),
            node.describe() << ": offset must be [" << batch << ", " << offset_groups * kh * kw * 2 << ", " << oh
                            << ", " << ow << "], got " << offset.describe());
  const Tensor* mask = ctx.has_input(4) ? &ctx.input(4) : nullptr;
  VKG_CHECK(!mask || mask->shape() == Shape({batch, offset_groups * kh * kw, oh, ow}),
            node.describe() << ": mask must be [" << batch << ", " << offset_groups * kh * kw << ", " << oh << ", "
                            << ow << "], got " << mask->describe());
  const Tensor* bias = conv_bias(ctx, 3, out_channels, x.dtype());
  const std::vector<double> xs = load_doubles(node, x), ws = load_doubles(node, w), offs = load_doubles(node, offset);
  const std::vector<double> masks = mask ? load_doubles(node, *mask) : std::vector<double>();
  const std::vector<double> bs = bias ? load_doubles(node, *bias) : std::vector<double>();
  const int64_t cg = channels / setup.group, mg = out_channels / setup.group, channels_per_offset = channels / offset_groups;
  const auto sample = [&](const double* plane, double y, double xx) {
    y = double(float(y)), xx = double(float(xx));
    const double y0 = std::floor(y), x0 = std::floor(xx);
    double v = 0;
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int64_t yi = int64_t(y0) + dy, xi = int64_t(x0) + dx;
        if (yi < 0 || yi >= height || xi < 0 || xi >= width) continue;
        const double wy = dy ? y - y0 : 1 - (y - y0), wx = dx ? xx - x0 : 1 - (xx - x0);
        v += wy * wx * plane[yi * width + xi];
      }
    return v;
  };
  std::vector<double> ys(size_t(batch * out_channels * oh * ow));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oc = 0; oc < out_channels; ++oc) {
      const int64_t group = oc / mg;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias ? bs[size_t(oc)] : 0.0;
          for (int64_t c = 0; c < cg; ++c) {
            const int64_t ic = group * cg + c, og = ic / channels_per_offset;
            const double* plane = xs.data() + (n * channels + ic) * height * width;
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t tap = (og * kh + ki) * kw + kj;
                const double dy = offs[size_t(((n * offset_groups * kh * kw + tap) * 2 * oh + i) * ow + j)];
                const double dx = offs[size_t((((n * offset_groups * kh * kw + tap) * 2 + 1) * oh + i) * ow + j)];
                const double y = double(g.tap(0, i, ki)) + dy;
                const double xx = double(g.tap(1, j, kj)) + dx;
                const double m = mask ? masks[size_t(((n * offset_groups * kh * kw + tap) * oh + i) * ow + j)] : 1.0;
                acc += ws[size_t(((oc * cg + c) * kh + ki) * kw + kj)] * m * sample(plane, y, xx);
              }
          }
          ys[size_t(((n * out_channels + oc) * oh + i) * ow + j)] = acc;
        }
    }
  return one_output(store_doubles(node, x.dtype(), {batch, out_channels, oh, ow}, ys));
}

}  // namespace vkg::linalg
