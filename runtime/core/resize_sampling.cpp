#include "runtime/core/resize_sampling.h"

#include <algorithm>
#include <cmath>

namespace vkg::resize {

namespace {

Mode parse_mode(const Node& node) {
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest") return Mode::Nearest;
  if (mode == "linear" || mode == "bilinear") return Mode::Linear;
  if (mode == "cubic") return Mode::Cubic;
  VKG_THROW(node.describe() << ": unknown mode '" << mode << "'");
}

CoordinateMode parse_coordinates(const Node& node, int64_t opset) {
  const std::string mode = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "half_pixel") return CoordinateMode::HalfPixel;
  if (mode == "half_pixel_symmetric" && opset >= 19) return CoordinateMode::HalfPixelSymmetric;
  if (mode == "pytorch_half_pixel") return CoordinateMode::PytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::AlignCorners;
  if (mode == "asymmetric") return CoordinateMode::Asymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::TfHalfPixelForNn;
  if (mode == "tf_crop_and_resize") return CoordinateMode::TfCropAndResize;
  VKG_THROW(node.describe() << ": unknown coordinate_transformation_mode '" << mode << "'");
}

NearestMode parse_nearest(const Node& node) {
  const std::string mode = node.attr_string("nearest_mode", "round_prefer_floor");
  if (mode == "round_prefer_floor") return NearestMode::RoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestMode::RoundPreferCeil;
  if (mode == "floor") return NearestMode::Floor;
  if (mode == "ceil") return NearestMode::Ceil;
  VKG_THROW(node.describe() << ": unknown nearest_mode '" << mode << "'");
}

// Output shape from scales: floor(input * scale), times the roi extent for tf_crop_and_resize.
void set_shape_from_scales(const Node& node, const Shape& in, Params& p) {
  VKG_CHECK(p.scales.size() == in.size(),
            node.describe() << ": " << p.scales.size() << " scales for an input of shape " << shape_to_string(in));
  const size_t rank = p.scales.size();
  for (size_t d = 0; d < rank; ++d) {
    VKG_CHECK(p.scales[d] > 0, node.describe() << ": scale " << p.scales[d] << " must be positive");
    double extent = double(in[d]) * p.scales[d];
    if (p.coordinates == CoordinateMode::TfCropAndResize) extent *= p.roi[d + rank] - p.roi[d];
    VKG_CHECK(std::isfinite(extent) && extent >= 0 && extent < 1e15,
              node.describe() << ": scale " << p.scales[d] << " gives an invalid size for " << shape_to_string(in));
    p.out_shape.push_back(int64_t(std::floor(extent)));
  }
}

// The axes roi, scales and sizes cover: opset 18's `axes`, else all of them.
std::vector<int64_t> resized_axes(const Node& node, int64_t opset, int64_t rank) {
  std::vector<int64_t> axes;
  if (opset < 18 || !node.has_attr("axes")) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  for (int64_t a : node.attr_ints("axes")) {
    VKG_CHECK(a >= -rank && a < rank, node.describe() << ": axis " << a << " is out of range for rank " << rank);
    const int64_t axis = a < 0 ? a + rank : a;
    VKG_CHECK(std::find(axes.begin(), axes.end(), axis) == axes.end(),
              node.describe() << ": axis " << a << " is given more than once");
    axes.push_back(axis);
  }
  return axes;
}

}  // namespace

Params params(const Node& node, int64_t opset, const Shape& in, const Inputs& inputs) {
  const size_t rank = in.size();
  Params p;
  p.mode = parse_mode(node);
  p.coordinates = parse_coordinates(node, opset);
  p.nearest = parse_nearest(node);
  p.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  p.extrapolation_value = node.attr_float("extrapolation_value", 0.0f);
  p.antialias = opset >= 18 && node.attr_int("antialias", 0) != 0;
  const std::vector<int64_t> axes = resized_axes(node, opset, int64_t(rank));
  const size_t n = axes.size();
  const std::string where = node.describe() + ": ";

  p.roi.assign(rank, 0.0);
  p.roi.resize(2 * rank, 1.0);
  if (inputs.roi && p.coordinates == CoordinateMode::TfCropAndResize) {
    const std::vector<double>& roi = *inputs.roi;
    VKG_CHECK(roi.size() == 2 * n, where << "roi has " << roi.size() << " values, " << n << " axes of "
                                         << shape_to_string(in) << " need " << 2 * n);
    for (size_t k = 0; k < n; ++k) {
      p.roi[size_t(axes[k])] = roi[k];
      p.roi[size_t(axes[k]) + rank] = roi[k + n];
    }
  }
  VKG_CHECK(inputs.scales.has_value() != inputs.sizes.has_value(),
            where << "exactly one of scales and sizes must be given");
  p.scales.assign(rank, 1.0);
  if (inputs.scales) {
    VKG_CHECK(inputs.scales->size() == n,
              where << inputs.scales->size() << " scales for " << n << " axes of " << shape_to_string(in));
    for (size_t k = 0; k < n; ++k) p.scales[size_t(axes[k])] = (*inputs.scales)[k];
    set_shape_from_scales(node, in, p);
    return p;
  }
  const Shape& sizes = *inputs.sizes;
  VKG_CHECK(sizes.size() == n,
            where << "sizes " << shape_to_string(sizes) << " do not match " << n << " axes of " << shape_to_string(in));
  for (int64_t s : sizes) VKG_CHECK(s >= 0, where << "negative size in " << shape_to_string(sizes));
  p.sizes_given = true;
  p.out_shape = in;
  const std::string policy = opset >= 18 ? node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy == "stretch") {
    for (size_t k = 0; k < n; ++k) {
      const auto d = size_t(axes[k]);
      p.out_shape[d] = sizes[k];
      p.scales[d] = double(sizes[k]) / double(in[d]);
    }
    return p;
  }
  VKG_CHECK(policy == "not_larger" || policy == "not_smaller",
            where << "unknown keep_aspect_ratio_policy '" << policy << "'");
  std::vector<int64_t> in_dims;
  for (int64_t a : axes) in_dims.push_back(in[size_t(a)]);
  const double scale = aspect_ratio_scale(policy == "not_larger", sizes, in_dims);
  for (int64_t a : axes) {
    p.out_shape[size_t(a)] = aspect_ratio_length(in[size_t(a)], scale);
    p.scales[size_t(a)] = scale;
  }
  return p;
}

double aspect_ratio_scale(bool not_larger, const std::vector<int64_t>& sizes, const std::vector<int64_t>& in_dims) {
  double scale = not_larger ? INFINITY : 0.0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const double s = double(sizes[k]) / double(in_dims[k]);
    scale = not_larger ? std::min(scale, s) : std::max(scale, s);
  }
  return scale;
}

int64_t aspect_ratio_length(int64_t in, double scale) { return int64_t(std::floor(scale * double(in) + 0.5)); }

Params legacy_params(const Node& node, const Shape& in, std::vector<double> scales) {
  Params p;
  p.mode = parse_mode(node);
  VKG_CHECK(p.mode != Mode::Cubic, node.describe() << ": cubic mode needs opset 11 or later");
  p.coordinates = CoordinateMode::Asymmetric;
  p.nearest = NearestMode::Legacy;
  p.scales = std::move(scales);
  set_shape_from_scales(node, in, p);
  return p;
}

double source_coordinate(const Params& p, size_t axis, int64_t x, int64_t in_dim) {
  const double scale = p.scales[axis];
  const auto out_dim = double(p.out_shape[axis]);
  const double in = double(in_dim);
  switch (p.coordinates) {
    case CoordinateMode::HalfPixel:
      return (double(x) + 0.5) / scale - 0.5;
    case CoordinateMode::HalfPixelSymmetric: {
      // Centres the sampled extent when the output length was rounded down.
      const double adjustment = out_dim / (scale * in);
      return in / 2 * (1 - adjustment) + (double(x) + 0.5) / scale - 0.5;
    }
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

namespace {

// Input index that nearest mode picks for source coordinate xo.
int64_t nearest_index(const Params& p, size_t axis, double xo) {
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

// Keys' cubic convolution kernel at distance t.
double keys(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0.0;
}

}  // namespace

double cubic_kernel(double t, double a) { return keys(t, a); }

AxisTaps taps_for(const Params& p, size_t axis, int64_t x, int64_t in_dim) {
  const double xo = source_coordinate(p, axis, x, in_dim);
  AxisTaps out;
  if (p.coordinates == CoordinateMode::TfCropAndResize && (xo < 0 || xo > double(in_dim - 1))) {
    out.outside = true;
    return out;
  }
  auto clamp_index = [in_dim](int64_t i) { return std::clamp<int64_t>(i, 0, in_dim - 1); };
  if (p.mode == Mode::Nearest) {
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
  if (p.antialias && p.scales[axis] < 1) {
    // The filter stretched by 1 / scale over more taps, its weights normalised to sum 1.
    const double scale = p.scales[axis];
    const bool linear = p.mode == Mode::Linear;
    const auto first = int64_t(std::floor((linear ? -1.0 : -2.0) / scale) + 1);
    double sum = 0;
    for (int64_t i = first; i < 2 - first; ++i) {
      const double t = scale * (double(i) - ratio);
      const double w = linear ? std::max(0.0, 1 - std::fabs(t)) : keys(t, p.cubic_a);
      taps.push_back({int64_t(left) + i, w});
      sum += w;
    }
    for (Tap& t : taps) t.weight /= sum;
  } else if (p.mode == Mode::Linear) {
    taps = {{int64_t(left), 1 - ratio}, {int64_t(left) + 1, ratio}};
  } else {
    for (int64_t k = -1; k <= 2; ++k) taps.push_back({int64_t(left) + k, keys(double(k) - ratio, p.cubic_a)});
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

GridSampleParams grid_sample_params(const Node& node) {
  GridSampleParams p;
  const std::string mode = node.attr_string("mode", "linear");
  if (mode == "bilinear" || mode == "linear") {
    p.mode = Mode::Linear;
  } else if (mode == "nearest") {
    p.mode = Mode::Nearest;
  } else if (mode == "bicubic" || mode == "cubic") {
    p.mode = Mode::Cubic;
  } else {
    VKG_THROW(node.describe() << ": unknown GridSample mode '" << mode << "' (expected linear, nearest or cubic)");
  }
  const std::string padding = node.attr_string("padding_mode", "zeros");
  if (padding == "zeros") {
    p.padding = GridPadding::Zeros;
  } else if (padding == "border") {
    p.padding = GridPadding::Border;
  } else if (padding == "reflection") {
    p.padding = GridPadding::Reflection;
  } else {
    VKG_THROW(node.describe() << ": unknown GridSample padding_mode '" << padding
                              << "' (expected zeros, border or reflection)");
  }
  p.align_corners = node.attr_int("align_corners", 0) != 0;
  return p;
}

std::optional<Params> node_params(const Node& node, int64_t opset, const Shape& in_shape, const Shape& out_shape,
                                  const std::function<NodeInput(size_t)>& input, std::string& why) {
  auto constant_values = [&](size_t i, const char* what) -> std::optional<std::vector<double>> {
    const NodeInput in = input(i);
    if (in.value == nullptr) {
      why = std::string(what) + " ('" + node.inputs.at(i) + "') must be a build-time constant";
      return std::nullopt;
    }
    return in.value->to_doubles();
  };
  if (node.op_type == "Upsample" || opset < 11) {  // Resize-10 and Upsample: scales only
    std::vector<double> scales;
    if (input(1).given) {
      auto given = constant_values(1, "scales");  // Resize-10, Upsample-9
      if (!given) return std::nullopt;
      scales = *given;
    } else if (node.has_attr("scales")) {
      for (float s : node.attr_floats("scales")) scales.push_back(s);  // Upsample-7
    } else {
      VKG_CHECK(in_shape.size() == 4, node.describe() << ": height_scale/width_scale need a 4-D input");
      scales = {1.0, 1.0, node.attr_float("height_scale", 1.0f), node.attr_float("width_scale", 1.0f)};
    }
    return legacy_params(node, in_shape, scales);
  }
  Inputs inputs;
  if (input(1).given && node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    inputs.roi = constant_values(1, "roi");
    if (!inputs.roi) return std::nullopt;
  }
  if (input(2).given) {
    inputs.scales = constant_values(2, "scales");
    if (!inputs.scales) return std::nullopt;
  }
  if (const NodeInput sizes = input(3); sizes.given) {
    if (sizes.value != nullptr) {
      inputs.sizes = sizes.value->to_int64s();
    } else if (opset >= 18 &&
               (node.has_attr("axes") || node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")) {
      why = "sizes ('" + node.inputs.at(3) + "') must be a build-time constant with axes or keep_aspect_ratio_policy";
      return std::nullopt;
    } else {
      inputs.sizes = out_shape;
    }
  }
  return params(node, opset, in_shape, inputs);
}

std::optional<std::vector<int64_t>> whole_nearest_factors(const Params& p, const Shape& in_shape,
                                                          std::string* why_not) {
  if (p.mode != Mode::Nearest || p.out_shape.size() != in_shape.size()) {
    if (why_not) *why_not = "not nearest mode, or the output's rank differs from the input's";
    return std::nullopt;
  }
  std::vector<int64_t> factors;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t in = in_shape[d], out = p.out_shape[d];
    bool whole = in > 0 && out % in == 0;
    const int64_t f = whole ? out / in : 1;
    for (int64_t o = 0; whole && o < out; ++o) {
      const AxisTaps a = taps_for(p, d, o, in);
      whole = !a.outside && !a.taps.empty() && a.taps[0].index == o / f;
    }
    if (!whole) {
      if (why_not)
        *why_not = "axis " + std::to_string(d) + " (" + std::to_string(in) + " -> " + std::to_string(out) +
                   ") is not upsampled by a whole factor reading o / factor";
      return std::nullopt;
    }
    factors.push_back(f);
  }
  return factors;
}

}  // namespace vkg::resize
