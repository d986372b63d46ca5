// Reference kernels of Resize (opsets 10, 11, 13) and the deprecated Upsample.
//
// Every output coordinate, along every axis, maps to a few input "taps" with
// weights (one for nearest, two for linear, four for cubic); an output element
// is the weighted sum over the product of its per-axis taps. The coordinate and
// neighbour rules follow ONNX's own reference implementation (the one that made
// the conformance data), including its preference for the left pixel when the
// source coordinate is a whole number.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/reference/kernel.h"
#include "runtime/reference/ops/shape_helpers.h"

namespace vkg {

namespace {

enum class ResizeMode { Nearest, Linear, Cubic };

enum class CoordinateMode { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };

// Legacy is Resize-10/Upsample's rule: truncate when upsampling, round up when downsampling.
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Legacy };

struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  CoordinateMode coordinates = CoordinateMode::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  std::vector<double> scales;  // per axis
  std::vector<double> roi;     // starts then ends, 2 * rank values (tf_crop_and_resize)
  Shape out_shape;
  bool sizes_given = false;  // out_shape came from `sizes`, scales were derived from it
};

// One input element that contributes to an output coordinate along one axis.
struct Tap {
  int64_t index = 0;
  double weight = 1.0;
};

// The taps of one output coordinate along one axis. `outside` marks a
// tf_crop_and_resize coordinate that falls outside the input: the output is the
// extrapolation value.
struct AxisTaps {
  bool outside = false;
  std::vector<Tap> taps;
};

ResizeMode parse_mode(const KernelContext& ctx) {
  const std::string mode = ctx.node.attr_string("mode", "nearest");
  if (mode == "nearest") return ResizeMode::Nearest;
  if (mode == "linear" || mode == "bilinear") return ResizeMode::Linear;
  if (mode == "cubic") return ResizeMode::Cubic;
  VKG_THROW(ctx.node.describe() << ": unknown mode '" << mode << "'");
}

CoordinateMode parse_coordinates(const KernelContext& ctx) {
  const std::string mode = ctx.node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "half_pixel") return CoordinateMode::HalfPixel;
  if (mode == "pytorch_half_pixel") return CoordinateMode::PytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::AlignCorners;
  if (mode == "asymmetric") return CoordinateMode::Asymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::TfHalfPixelForNn;
  if (mode == "tf_crop_and_resize") return CoordinateMode::TfCropAndResize;
  VKG_THROW(ctx.node.describe() << ": unknown coordinate_transformation_mode '" << mode << "'");
}

NearestMode parse_nearest(const KernelContext& ctx) {
  const std::string mode = ctx.node.attr_string("nearest_mode", "round_prefer_floor");
  if (mode == "round_prefer_floor") return NearestMode::RoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestMode::RoundPreferCeil;
  if (mode == "floor") return NearestMode::Floor;
  if (mode == "ceil") return NearestMode::Ceil;
  VKG_THROW(ctx.node.describe() << ": unknown nearest_mode '" << mode << "'");
}

// Output shape from scales: floor(input * scale), times the roi extent for tf_crop_and_resize.
void set_shape_from_scales(const KernelContext& ctx, const Tensor& x, ResizeParams& p) {
  VKG_CHECK(int64_t(p.scales.size()) == x.rank(), ctx.node.describe()
                                                      << ": " << p.scales.size() << " scales for " << x.describe());
  const size_t rank = p.scales.size();
  for (size_t d = 0; d < rank; ++d) {
    VKG_CHECK(p.scales[d] > 0, ctx.node.describe() << ": scale " << p.scales[d] << " must be positive");
    double extent = double(x.dim(int64_t(d))) * p.scales[d];
    if (p.coordinates == CoordinateMode::TfCropAndResize) extent *= p.roi[d + rank] - p.roi[d];
    VKG_CHECK(std::isfinite(extent) && extent >= 0 && extent < 1e15,
              ctx.node.describe() << ": scale " << p.scales[d] << " gives an invalid size for " << x.describe());
    p.out_shape.push_back(int64_t(std::floor(extent)));
  }
}

// Resize-11/13: inputs X, roi, scales, sizes; all coordinate and nearest modes.
ResizeParams resize_params(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto rank = size_t(x.rank());
  ResizeParams p;
  p.mode = parse_mode(ctx);
  p.coordinates = parse_coordinates(ctx);
  p.nearest = parse_nearest(ctx);
  p.cubic_a = ctx.node.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.node.attr_int("exclude_outside", 0) != 0;
  p.extrapolation_value = ctx.node.attr_float("extrapolation_value", 0.0f);

  p.roi.assign(rank, 0.0);
  p.roi.resize(2 * rank, 1.0);
  if (ctx.has_input(1) && !ctx.input(1).empty() && p.coordinates == CoordinateMode::TfCropAndResize) {
    p.roi = ctx.input(1).to_doubles();
    VKG_CHECK(p.roi.size() == 2 * rank, ctx.node.describe() << ": roi has " << p.roi.size() << " values, "
                                                            << x.describe() << " needs " << 2 * rank);
  }
  const bool has_scales = ctx.has_input(2) && !ctx.input(2).empty();
  const bool has_sizes = ctx.has_input(3) && !ctx.input(3).empty();
  VKG_CHECK(has_scales != has_sizes, ctx.node.describe() << ": exactly one of scales and sizes must be given");
  if (has_scales) {
    p.scales = ctx.input(2).to_doubles();
    set_shape_from_scales(ctx, x, p);
    return p;
  }
  p.out_shape = int_input(ctx, 3, "sizes");
  VKG_CHECK(p.out_shape.size() == rank,
            ctx.node.describe() << ": sizes " << shape_to_string(p.out_shape) << " do not match " << x.describe());
  p.sizes_given = true;
  for (size_t d = 0; d < rank; ++d) {
    VKG_CHECK(p.out_shape[d] >= 0, ctx.node.describe() << ": negative size in " << shape_to_string(p.out_shape));
    p.scales.push_back(double(p.out_shape[d]) / double(x.dim(int64_t(d))));
  }
  return p;
}

// Resize-10 and Upsample: scales only, asymmetric coordinates, legacy nearest rounding.
ResizeParams legacy_params(const KernelContext& ctx, std::vector<double> scales) {
  ResizeParams p;
  p.mode = parse_mode(ctx);
  VKG_CHECK(p.mode != ResizeMode::Cubic, ctx.node.describe() << ": cubic mode needs opset 11 or later");
  p.coordinates = CoordinateMode::Asymmetric;
  p.nearest = NearestMode::Legacy;
  p.scales = std::move(scales);
  set_shape_from_scales(ctx, ctx.input(0), p);
  return p;
}

// Source coordinate of output coordinate `x` along one axis (ONNX's coordinate_transformation_mode).
double source_coordinate(const ResizeParams& p, size_t axis, int64_t x, int64_t in_dim) {
  const double scale = p.scales[axis];
  const auto out_dim = double(p.out_shape[axis]);
  const double in = double(in_dim);
  switch (p.coordinates) {
    case CoordinateMode::HalfPixel:
      return (double(x) + 0.5) / scale - 0.5;
    case CoordinateMode::PytorchHalfPixel:
      return out_dim > 1 ? (double(x) + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::AlignCorners: {
      // The conformance data divides by the unrounded resized length when scales are given.
      const double length = p.sizes_given ? out_dim : scale * in;
      return length == 1 ? 0.0 : double(x) * (in - 1) / (length - 1);
    }
    case CoordinateMode::Asymmetric:
      return double(x) / scale;
    case CoordinateMode::TfHalfPixelForNn:
      return (double(x) + 0.5) / scale;
    case CoordinateMode::TfCropAndResize: {
      const double start = p.roi[axis], end = p.roi[axis + p.scales.size()];
      if (out_dim > 1) return start * (in - 1) + double(x) * (end - start) * (in - 1) / (out_dim - 1);
      return 0.5 * (start + end) * (in - 1);
    }
  }
  return 0.0;
}

// Input index that nearest mode picks for source coordinate xo.
int64_t nearest_index(const ResizeParams& p, size_t axis, double xo) {
  const double f = std::floor(xo);
  const double r = xo - f;
  if (p.nearest == NearestMode::Legacy) return int64_t(p.scales[axis] < 1 ? std::ceil(xo) : std::trunc(xo));
  if (r == 0) return int64_t(f);
  switch (p.nearest) {
    case NearestMode::RoundPreferFloor:
      return int64_t(r <= 0.5 ? f : f + 1);
    case NearestMode::RoundPreferCeil:
      return int64_t(r < 0.5 ? f : f + 1);
    case NearestMode::Floor:
      return int64_t(f);
    case NearestMode::Ceil:
      return int64_t(f + 1);
    case NearestMode::Legacy:
      break;
  }
  return int64_t(f);
}

// Keys' cubic convolution weights of the four taps around a point at `ratio` past the second one.
std::vector<double> cubic_weights(double ratio, double a) {
  const double t0 = ratio + 1, t1 = ratio, t2 = 1 - ratio, t3 = 2 - ratio;
  return {((a * t0 - 5 * a) * t0 + 8 * a) * t0 - 4 * a, ((a + 2) * t1 - (a + 3)) * t1 * t1 + 1,
          ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1, ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a};
}

AxisTaps taps_for(const ResizeParams& p, size_t axis, int64_t x, int64_t in_dim) {
  const double xo = source_coordinate(p, axis, x, in_dim);
  AxisTaps out;
  if (p.coordinates == CoordinateMode::TfCropAndResize && (xo < 0 || xo > double(in_dim - 1))) {
    out.outside = true;
    return out;
  }
  auto clamp_index = [in_dim](int64_t i) { return std::clamp<int64_t>(i, 0, in_dim - 1); };
  if (p.mode == ResizeMode::Nearest) {
    out.taps.push_back({clamp_index(nearest_index(p, axis, xo)), 1.0});
    return out;
  }
  // The left neighbour is preferred: a whole-number coordinate k is ratio 1 past k - 1.
  double left = std::floor(xo);
  double ratio = xo - left;
  if (ratio == 0) {
    left -= 1;
    ratio = 1;
  }
  std::vector<Tap> taps;
  if (p.mode == ResizeMode::Linear) {
    taps = {{int64_t(left), 1 - ratio}, {int64_t(left) + 1, ratio}};
  } else {
    const std::vector<double> w = cubic_weights(ratio, p.cubic_a);
    for (int64_t k = 0; k < 4; ++k) taps.push_back({int64_t(left) - 1 + k, w[size_t(k)]});
  }
  if (p.exclude_outside) {
    double sum = 0;
    for (Tap& t : taps) {
      if (t.index < 0 || t.index >= in_dim) t.weight = 0;
      sum += t.weight;
    }
    for (Tap& t : taps) t.weight /= sum;
  }
  for (const Tap& t : taps)
    if (t.weight != 0) out.taps.push_back({clamp_index(t.index), t.weight});
  if (out.taps.empty()) out.taps.push_back({clamp_index(int64_t(left)), 0.0});
  return out;
}

// Advances `pick` to the next combination of per-axis choices; false after the last one.
bool next_combination(std::vector<size_t>& pick, const std::vector<const AxisTaps*>& axes) {
  for (size_t d = pick.size(); d-- > 0;) {
    if (++pick[d] < axes[d]->taps.size()) return true;
    pick[d] = 0;
  }
  return false;
}

Tensor run_resize(const KernelContext& ctx, const ResizeParams& p) {
  const Tensor& x = ctx.input(0);
  const size_t rank = p.out_shape.size();
  Tensor out(x.dtype(), p.out_shape);
  if (out.empty()) return out;
  VKG_CHECK(!x.empty(), ctx.node.describe() << ": cannot resize the empty tensor " << x.describe() << " to "
                                            << shape_to_string(p.out_shape));

  std::vector<std::vector<AxisTaps>> taps(rank);  // [axis][output coordinate]
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < p.out_shape[d]; ++o) taps[d].push_back(taps_for(p, d, o, x.dim(int64_t(d))));

  const auto in_strides = contiguous_strides(x.shape());
  const size_t elem = dtype_size(x.dtype());
  const std::vector<double> values = p.mode == ResizeMode::Nearest ? std::vector<double>{} : x.to_doubles();
  std::vector<const AxisTaps*> axes(rank);
  std::vector<size_t> pick(rank);
  int64_t k = 0;
  for (IndexIterator it(p.out_shape); !it.done(); it.next(), ++k) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      axes[d] = &taps[d][size_t(it.index()[d])];
      outside = outside || axes[d]->outside;
    }
    if (outside) {
      out.set_from_double(k, p.extrapolation_value);
      continue;
    }
    if (p.mode == ResizeMode::Nearest) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) offset += axes[d]->taps[0].index * in_strides[d];
      std::memcpy(out.raw() + size_t(k) * elem, x.raw() + size_t(offset) * elem, elem);
      continue;
    }
    double sum = 0;
    std::fill(pick.begin(), pick.end(), 0);
    do {
      double weight = 1;
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        const Tap& t = axes[d]->taps[pick[d]];
        weight *= t.weight;
        offset += t.index * in_strides[d];
      }
      sum += weight * values[size_t(offset)];
    } while (next_combination(pick, axes));
    out.set_from_double(k, sum);
  }
  return out;
}

std::vector<Tensor> resize(const KernelContext& ctx) {
  if (ctx.opset < 11) return {run_resize(ctx, legacy_params(ctx, ctx.input(1).to_doubles()))};
  return {run_resize(ctx, resize_params(ctx))};
}

std::vector<Tensor> upsample(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<double> scales;
  if (ctx.has_input(1)) {
    scales = ctx.input(1).to_doubles();  // Upsample-9
  } else if (ctx.node.has_attr("scales")) {
    for (float s : ctx.node.attr_floats("scales")) scales.push_back(s);  // Upsample-7
  } else {
    // Upsample-1: NCHW with height_scale and width_scale.
    VKG_CHECK(x.rank() == 4, ctx.node.describe()
                                 << ": height_scale/width_scale need a 4-D input, got " << x.describe());
    scales = {1.0, 1.0, ctx.node.attr_float("height_scale", 1.0f), ctx.node.attr_float("width_scale", 1.0f)};
  }
  return {run_resize(ctx, legacy_params(ctx, scales))};
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  registry.add("Resize", resize);
  registry.add("Upsample", upsample);
  register_pad_ops(registry);
}

}  // namespace vkg
