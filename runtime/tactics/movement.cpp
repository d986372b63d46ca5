// Vulkan tactics of the movement family (see runtime/engine/tactic.h): copies
// (Identity, Dropout, Reshape, Flatten, Squeeze, Unsqueeze), Transpose,
// Concat, Split, Slice, Expand, Tile and Pad. They move bits and never
// compute: the f32 variants move 32-bit words (float32 and int32 storage
// alike), the f16 variants float16 elements; there are no f16acc32 variants.
//
// Transpose, Slice, Expand and Tile are all one strided gather
// (shaders/movement/strided.comp): the output, contiguous, is a view `dims`
// of the source with per-axis `strides` (zero: broadcast, negative: reversed)
// and a base `offset`.
//
// This file registers them; each kind's planner lives in a movement_*.cpp of its
// own (copy, strided, select, slabs, pad), the helpers they share in
// movement_common.h.
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/movement_common.h"

namespace vkg {

void register_movement_tactics(TacticRegistry& r) {
  using namespace movement_tactics;
  const auto both = {Arith::F32, Arith::F16};
  const std::vector<std::string> copies = {"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  r.add_variants("copy.vec4", copies, 0, both,
                 [](const LayerContext& c, std::string& w) { return plan_copy(c, w, true); });
  r.add_variants("copy.scalar", copies, 1, both,
                 [](const LayerContext& c, std::string& w) { return plan_copy(c, w, false); });
  r.add_variants("transpose.vec4", {"Transpose"}, 0, both, permute_vec4_tactic(transpose_view));
  r.add_variants("transpose.scalar", {"Transpose"}, 1, both, strided_tactic(transpose_view, false));
  r.add_variants("depth_space.vec4", {"DepthToSpace", "SpaceToDepth"}, 0, both, permute_vec4_tactic(depth_space_view));
  r.add_variants("depth_space.scalar", {"DepthToSpace", "SpaceToDepth"}, 1, both,
                 strided_tactic(depth_space_view, false));
  r.add_variants("trilu.scalar", {"Trilu"}, 0, both, plan_trilu);
  r.add_variants("one_hot.scalar", {"OneHot"}, 0, {Arith::F32}, plan_one_hot);
  r.add_variants("eye_like.scalar", {"EyeLike"}, 0, {Arith::F32}, plan_eye_like);
  r.add_variants("reverse_sequence.scalar", {"ReverseSequence"}, 0, both, plan_reverse_sequence);
  r.add_variants("compress.scalar", {"Compress"}, 0, both, plan_compress);
  r.add_variants("slice.vec4", {"Slice"}, 0, both, strided_tactic(slice_view, true));
  r.add_variants("slice.scalar", {"Slice"}, 1, both, strided_tactic(slice_view, false));
  r.add_variants("expand.vec4", {"Expand"}, 0, both, strided_tactic(expand_view, true));
  r.add_variants("expand.scalar", {"Expand"}, 1, both, strided_tactic(expand_view, false));
  r.add_variants("tile.vec4", {"Tile"}, 0, both, strided_tactic(tile_view, true));
  r.add_variants("tile.scalar", {"Tile"}, 1, both, strided_tactic(tile_view, false));
  r.add_variants("concat.vec4", {"Concat"}, 0, both,
                 [](const LayerContext& c, std::string& w) { return plan_concat(c, w, SlabMode::Vec4); });
  r.add_variants("concat.scalar", {"Concat"}, 1, both,
                 [](const LayerContext& c, std::string& w) { return plan_concat(c, w, SlabMode::Scalar); });
  r.add_variants("concat.single", {"Concat"}, 2, both,
                 [](const LayerContext& c, std::string& w) { return plan_concat(c, w, SlabMode::Single); });
  r.add_variants("split.vec4", {"Split"}, 0, both,
                 [](const LayerContext& c, std::string& w) { return plan_split(c, w, SlabMode::Vec4); });
  r.add_variants("split.scalar", {"Split"}, 1, both,
                 [](const LayerContext& c, std::string& w) { return plan_split(c, w, SlabMode::Scalar); });
  r.add_variants("split.single", {"Split"}, 2, both,
                 [](const LayerContext& c, std::string& w) { return plan_split(c, w, SlabMode::Single); });
  r.add_variants("pad.scalar", {"Pad"}, 0, both, plan_pad);
}

}  // namespace vkg
