#include "runtime/core/roi_align_params.h"

#include <string>

#include "runtime/core/error.h"

namespace vkg {

RoiAlignParams roi_align_params(const Node& node, int64_t opset) {
  RoiAlignParams p;
  const std::string mode = node.attr_string("mode", "avg");
  VKG_CHECK(mode == "avg" || mode == "max", node.describe() << ": mode must be avg or max, got " << mode);
  p.max = mode == "max";
  const std::string transform =
      opset >= 16 ? node.attr_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  VKG_CHECK(
      transform == "half_pixel" || transform == "output_half_pixel",
      node.describe() << ": coordinate_transformation_mode must be half_pixel or output_half_pixel, got " << transform);
  p.half_pixel = transform == "half_pixel";
  p.output_height = node.attr_int("output_height", 1);
  p.output_width = node.attr_int("output_width", 1);
  p.sampling_ratio = node.attr_int("sampling_ratio", 0);
  p.spatial_scale = node.attr_float("spatial_scale", 1.0f);
  VKG_CHECK(p.output_height > 0 && p.output_width > 0 && p.sampling_ratio >= 0,
            node.describe() << ": output_height and output_width must be positive, sampling_ratio not negative");
  return p;
}

}  // namespace vkg
