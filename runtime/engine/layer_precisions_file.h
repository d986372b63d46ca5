// The layer-precisions file: the answer of `debug precision`
// (--save-layer-precisions), read back by the builder's --load-layer-precisions.
//   {"format": "vkgraphy-layer-precisions", "version": 1,
//    "precision_constraints": "obey",
//    "layer_precisions": {"big": "fp32", "small": "fp32"}}
// Names are node names (a fused layer is pinned through any of its nodes),
// exactly as --layer-precisions takes them. Documented in docs/tactic-files.md.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "runtime/engine/builder.h"

namespace vkg {

struct LayerPrecisions {
  std::map<std::string, Precision> layers;
  std::optional<PrecisionConstraints> constraints;  // how they were meant to apply
};

// Throws Error naming the file and the place of anything missing or wrong,
// and saying what the file is when it is another of vkgraphy's JSON files.
LayerPrecisions load_layer_precisions(const std::string& path);
// Written whole or not at all.
void save_layer_precisions(const std::string& path, const LayerPrecisions& precisions);

}  // namespace vkg
