// The layer-precisions file: the answer of `debug precision`
// (--save-layer-precisions), read back by the builder's --load-layer-precisions,
// which also takes the precisions another build chose, from its tactic replay
// (--save-tactics) or its engine file: so a build on lavapipe can have the fp16
// layers, and their arithmetic, of a build on a GPU.
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
  // From a replay or an engine: the arithmetic of each fp16 node's tactic (f16: fp16
  // accumulation, f16acc32: fp32), BuilderConfig::layer_arith.
  std::map<std::string, Arith> arith;
};

// Reads a layer-precisions file, a tactic replay or an engine file (told apart by their
// contents); from the latter two, every node of every layer takes its layer's precision and
// arithmetic (reformats and constants have no nodes). Throws Error naming the file and the
// place of anything missing or wrong, and saying what the file is when it is another of
// vkgraphy's JSON files.
LayerPrecisions load_layer_precisions(const std::string& path);
// Written whole or not at all.
void save_layer_precisions(const std::string& path, const LayerPrecisions& precisions);

}  // namespace vkg
