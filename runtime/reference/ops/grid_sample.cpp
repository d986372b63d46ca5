// GridSample (opsets 16, 20, 22): samples X [N, C, D1 .. Dr] at the normalized coordinates
// of grid [N, O1 .. Or, r] (the last grid axis holds the coordinate of Dr first, of D1
// last), giving Y [N, C, O1 .. Or]. Opset 16 takes 4-D inputs only; from opset 20 any r.
// The rules follow ONNX's reference implementation, which made the conformance data:
// coordinates are denormalized in float32; out-of-range coordinates are clamped (border)
// or reflected (reflection) before the taps are taken; nearest rounds half to even; taps
// outside X read zero, the border or the reflection; cubic is Keys' kernel with a = -0.75.
#include <cmath>

#include "runtime/core/resize_sampling.h"
#include "runtime/reference/ops/normalization_common.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {
namespace {

using resize::GridPadding;
using resize::Mode;

// Reflects x into [lo, hi] by the nearer border, as often as needed.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = int64_t(dx / range);
    const double r = dx - double(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = int64_t(dx / range);
    const double r = dx - double(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

struct GridTap {
  int64_t index = -1;  // -1: outside X with zeros padding
  double weight = 0;
};

// The taps along one axis of size `dim` for the normalized coordinate `g`.
std::vector<GridTap> axis_taps(const resize::GridSampleParams& p, double g, int64_t dim) {
  const double lo = p.align_corners ? 0.0 : -0.5;
  const double hi = p.align_corners ? double(dim - 1) : double(dim) - 0.5;
  double x = double(float(p.align_corners ? (g + 1) / 2.0 * double(dim - 1) : ((g + 1) * double(dim) - 1) / 2.0));
  if (p.mode == Mode::Nearest) x = std::nearbyint(x);  // half to even (the default rounding mode)
  if (x < lo || x > hi) {
    switch (p.padding) {
      case GridPadding::Zeros:
        break;
      case GridPadding::Border:
        x = std::clamp(x, 0.0, double(dim - 1));
        break;
      case GridPadding::Reflection:
        x = reflect(x, lo, hi);
        break;
    }
  }
  const auto resolve = [&](int64_t i, double w) {
    switch (p.padding) {
      case GridPadding::Zeros:
        return GridTap{i >= 0 && i < dim ? i : -1, w};
      case GridPadding::Border:
        return GridTap{std::clamp<int64_t>(i, 0, dim - 1), w};
      case GridPadding::Reflection:
        return GridTap{int64_t(reflect(double(i), lo, hi)), w};
    }
    return GridTap{};
  };
  std::vector<GridTap> taps;
  switch (p.mode) {
    case Mode::Nearest:
      taps.push_back(resolve(int64_t(x), 1.0));  // x is whole: truncation is exact
      break;
    case Mode::Linear: {
      const double x0 = std::floor(x), t = x - x0;
      taps.push_back(resolve(int64_t(x0), 1 - t));
      taps.push_back(resolve(int64_t(x0) + 1, t));
      break;
    }
    case Mode::Cubic: {
      const double x0 = std::floor(x), t = x - x0;
      for (int64_t k = -1; k <= 2; ++k)
        taps.push_back(resolve(int64_t(x0) + k, resize::cubic_kernel(t - double(k), -0.75)));
      break;
    }
  }
  return taps;
}

std::vector<Tensor> grid_sample(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const resize::GridSampleParams p = resize::grid_sample_params(node);
  VKG_CHECK(x.rank() >= 3 && grid.rank() == x.rank(), node.describe()
                                                          << ": X and grid must have the same rank >= 3, got "
                                                          << x.describe() << " and " << grid.describe());
  VKG_CHECK(ctx.opset >= 20 || x.rank() == 4,
            node.describe() << ": GridSample-16 takes 4-D inputs only (N-D from opset 20), got " << x.describe());
  const int64_t r = x.rank() - 2;
  VKG_CHECK(grid.dim(0) == x.dim(0) && grid.dim(grid.rank() - 1) == r,
            node.describe() << ": grid must be [" << x.dim(0) << ", ..., " << r << "], got " << grid.describe());
  VKG_CHECK(is_floating(x.dtype()), node.describe()
                                        << ": GridSample of " << dtype_name(x.dtype()) << " is not supported");
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
  const Shape out_spatial(grid.shape().begin() + 1, grid.shape().end() - 1);
  const int64_t in_size = num_elements(in_spatial), out_size = num_elements(out_spatial);
  const std::vector<int64_t> strides = contiguous_strides(in_spatial);
  Shape y_shape = {batch, channels};
  y_shape.insert(y_shape.end(), out_spatial.begin(), out_spatial.end());
  const std::vector<double> xs = load_doubles(node, x);
  const std::vector<double> gs = load_doubles(node, grid);
  std::vector<double> ys(size_t(num_elements(y_shape)), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out_size; ++o) {
      // The tensor product of the per-axis taps: (offset in a channel, weight) pairs.
      std::vector<std::pair<int64_t, double>> points = {{0, 1.0}};
      for (int64_t a = 0; a < r; ++a) {
        const double g = gs[size_t((n * out_size + o) * r + (r - 1 - a))];
        std::vector<std::pair<int64_t, double>> next;
        for (const auto& [offset, weight] : points)
          for (const GridTap& t : axis_taps(p, g, in_spatial[size_t(a)]))
            next.emplace_back(offset < 0 || t.index < 0 ? -1 : offset + t.index * strides[size_t(a)],
                              weight * t.weight);
        points = std::move(next);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const double* plane = xs.data() + (n * channels + c) * in_size;
        double acc = 0;
        for (const auto& [offset, weight] : points)
          if (offset >= 0) acc += weight * plane[offset];
        ys[size_t((n * channels + c) * out_size + o)] = acc;
      }
    }
  return {store_doubles(node, x.dtype(), y_shape, ys)};
}

// AffineGrid (opset 20): theta [N, 2, 3] and size (N, C, H, W) give the sampling grid
// [N, H, W, 2] of GridSample, theta times (x, y, 1) at each pixel's normalized coordinates
// (pixel centers, or corners with align_corners); theta [N, 3, 4] and (N, C, D, H, W) give
// [N, D, H, W, 3]. The last grid axis holds x (the innermost axis) first.
std::vector<Tensor> affine_grid(const KernelContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& theta = ctx.input(0);
  const std::vector<int64_t> size = int_input(ctx, 1, "size");
  VKG_CHECK(size.size() == 4 || size.size() == 5,
            node.describe() << ": size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got " << size.size());
  const int64_t r = int64_t(size.size()) - 2;
  VKG_CHECK(theta.rank() == 3 && theta.dim(0) == size[0] && theta.dim(1) == r && theta.dim(2) == r + 1,
            node.describe() << ": theta must be [" << size[0] << ", " << r << ", " << r + 1 << "], got "
                            << theta.describe());
  VKG_CHECK(is_floating(theta.dtype()), node.describe() << ": theta must be a float tensor, got " << theta.describe());
  const bool align = node.attr_int("align_corners", 0) != 0;
  const Shape spatial(size.begin() + 2, size.end());
  for (int64_t d : spatial) VKG_CHECK(d >= 0, node.describe() << ": size must not be negative");
  const int64_t points = num_elements(spatial);
  const auto coordinate = [&](int64_t i, int64_t n) {
    if (align) return n > 1 ? -1.0 + 2.0 * double(i) / double(n - 1) : -1.0;
    return -1.0 + (2.0 * double(i) + 1.0) / double(n);
  };
  const std::vector<double> t = load_doubles(node, theta);
  std::vector<double> grid(size_t(size[0] * points * r));
  for (int64_t n = 0; n < size[0]; ++n)
    for (int64_t p = 0; p < points; ++p) {
      // The homogeneous point (x, y[, z], 1): the innermost axis first.
      std::vector<double> point(size_t(r + 1), 1.0);
      int64_t rest = p;
      for (int64_t a = r - 1; a >= 0; --a) {
        const int64_t dim = spatial[size_t(a)];
        point[size_t(r - 1 - a)] = coordinate(rest % dim, dim);
        rest /= dim;
      }
      for (int64_t row = 0; row < r; ++row) {
        double v = 0;
        for (int64_t col = 0; col <= r; ++col) v += t[size_t((n * r + row) * (r + 1) + col)] * point[size_t(col)];
        grid[size_t((n * points + p) * r + row)] = v;
      }
    }
  Shape out = {size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(r);
  return {store_doubles(node, theta.dtype(), out, grid)};
}

}  // namespace

void register_grid_sample_ops(OpRegistry& registry) {
  registry.add("GridSample", grid_sample);
  registry.add("AffineGrid", affine_grid);
}

}  // namespace vkg
