// RoiAlign's attributes (opsets 10 and 16), read in one place for the reference
// kernel and the roi_align tactic.
#pragma once

#include <cstdint>

#include "runtime/core/graph.h"

namespace vkg {

struct RoiAlignParams {
  bool max = false;        // mode "max" (else "avg")
  bool half_pixel = true;  // coordinate_transformation_mode "half_pixel" (opset 16's default), else "output_half_pixel"
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive
  float spatial_scale = 1.0f;
};

// Throws Error naming the node for a bad mode or coordinate_transformation_mode,
// a non-positive output size or a negative sampling ratio.
RoiAlignParams roi_align_params(const Node& node, int64_t opset);

}  // namespace vkg
