// How ONNX Resize (opsets 10 to 19) and the deprecated Upsample sample their input: the
// parameters a node gives, and for every output coordinate along every axis the input
// "taps" with their weights (one for nearest, two for linear, four for cubic, more for
// antialiased downsampling). An output element is the weighted sum over the product of
// its per-axis taps. The rules follow ONNX's own reference implementation (the one that
// made the conformance data), including its preference for the left pixel when the source
// coordinate is a whole number. One implementation serves the reference kernel and the
// Vulkan tactics, which turn the taps into tables at build time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg::resize {

enum class Mode { Nearest, Linear, Cubic };

enum class CoordinateMode {
  HalfPixel,
  HalfPixelSymmetric,  // opset 19
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNn,
  TfCropAndResize
};

// Legacy is Resize-10/Upsample's rule: truncate when upsampling, round up when downsampling.
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Legacy };

struct Params {
  Mode mode = Mode::Nearest;
  CoordinateMode coordinates = CoordinateMode::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;  // linear and cubic downsampling widen their filter by 1 / scale (opset 18)
  double extrapolation_value = 0.0;
  std::vector<double> scales;  // per axis
  std::vector<double> roi;     // starts then ends, 2 * rank values (tf_crop_and_resize)
  Shape out_shape;
  bool sizes_given = false;  // out_shape came from `sizes`
};

// Resize's optional inputs as the caller holds them: nullopt when absent or empty.
struct Inputs {
  std::optional<std::vector<double>> roi;
  std::optional<std::vector<double>> scales;
  std::optional<Shape> sizes;
};

// Resize-11 and later (the `axes` and keep_aspect_ratio_policy of opset 18 included).
// Throws Error naming the node for an unknown mode or inputs that do not fit the shape.
Params params(const Node& node, int64_t opset, const Shape& in_shape, const Inputs& inputs);

// Resize-10 and Upsample: the given scales, asymmetric coordinates, legacy nearest rounding.
Params legacy_params(const Node& node, const Shape& in_shape, std::vector<double> scales);

// keep_aspect_ratio_policy (Resize-18) turns the sizes of the resized axes (lengths
// in_dims) into one scale for all of them: the largest that keeps every axis within
// its size (`not_larger`), else the smallest that reaches every size (not_smaller).
double aspect_ratio_scale(bool not_larger, const std::vector<int64_t>& sizes, const std::vector<int64_t>& in_dims);
// The length of an axis of length `in` under that one scale: rounded to nearest, half up.
int64_t aspect_ratio_length(int64_t in, double scale);

// The input coordinate (in input pixels, not clamped) that output coordinate `x` along
// `axis` samples: ONNX's coordinate_transformation_mode with p's scales and output shape.
double source_coordinate(const Params& p, size_t axis, int64_t x, int64_t in_dim);

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

// Keys' cubic convolution kernel at distance t with coefficient a (Resize's cubic_coeff_a;
// GridSample's cubic mode uses a = -0.75): zero from distance 2 on.
double cubic_kernel(double t, double a);

// The taps of output coordinate `x` along `axis`; indices are clamped into [0, in_dim).
AxisTaps taps_for(const Params& p, size_t axis, int64_t x, int64_t in_dim);

// One optional input (roi, scales, sizes) of a Resize/Upsample node as the caller holds it:
// given (present and not empty) and its value when known at build time (else nullptr).
struct NodeInput {
  bool given = false;
  const Tensor* value = nullptr;
};

// The parameters of a Resize (any opset) or Upsample node on an input of `in_shape` giving
// `out_shape`, its optional inputs looked up through `input` (by input index): roi, scales and
// the sizes of axes or keep_aspect_ratio_policy must be build-time constants; sizes computed at
// run time equal the output shape. nullopt with `why` filled where a value is not known; throws
// Error (naming the node) for invalid attributes or values.
std::optional<Params> node_params(const Node& node, int64_t opset, const Shape& in_shape, const Shape& out_shape,
                                  const std::function<NodeInput(size_t)>& input, std::string& why);

// Per axis the whole factor f by which nearest mode upsamples it, reading input o / f for every
// output coordinate o (1 for an axis left as it is); nullopt for any other sampling, with
// `why_not` (when given) naming the first axis that samples otherwise.
std::optional<std::vector<int64_t>> whole_nearest_factors(const Params& p, const Shape& in_shape,
                                                          std::string* why_not = nullptr);

// GridSample (opsets 16, 20, 22): its mode ("bilinear"/"linear", "nearest",
// "bicubic"/"cubic": both spellings at every opset), padding and corner alignment. Throws
// Error naming the node for unknown values.
enum class GridPadding { Zeros, Border, Reflection };
struct GridSampleParams {
  Mode mode = Mode::Linear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
};
GridSampleParams grid_sample_params(const Node& node);

}  // namespace vkg::resize
