// What the reduce family's planners share (reduce.cpp registers them; reduce_reduction,
// _softmax, _norm and _axis hold one kind each): the geometry of a layer's rows
// (RowGeometry, see reduce.cpp's opening comment), the checks every tactic
// makes, and the dispatch of one row shader under each way of spreading rows
// over invocations (Algo).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/reduction_axes.h"
#include "runtime/engine/tactic.h"

namespace vkg::reduce_tactics {

inline constexpr size_t kMaxRuns = 4;  // (dim, stride) runs per side in shaders/reduce/rows.glsl

// Where a row's elements are: see the file comment and shaders/reduce/rows.glsl.
struct RowGeometry {
  std::array<uint32_t, kMaxRuns> kept_dims{1, 1, 1, 1}, kept_strides{0, 0, 0, 0};
  std::array<uint32_t, kMaxRuns> red_dims{1, 1, 1, 1}, red_strides{0, 0, 0, 0};
  uint32_t rows = 0;      // output rows (elements of the reduced output)
  uint32_t reduced = 0;   // elements per row
  uint32_t red_runs = 0;  // reduced runs in use (0 or 1: offset(r) = r * red_strides[3])

  // The 18 leading push-constant words of every shader of the family.
  std::vector<uint32_t> push() const {
    std::vector<uint32_t> words;
    for (const auto* a : {&kept_dims, &kept_strides, &red_dims, &red_strides})
      words.insert(words.end(), a->begin(), a->end());
    words.push_back(rows);
    words.push_back(reduced);
    return words;
  }
};

// The geometry of reducing `shape` over the axes marked in `mask`; nullopt (with
// why_not) when it does not fit the shaders' 32-bit indices or four runs.
std::optional<RowGeometry> row_geometry(const Shape& shape, const std::vector<bool>& mask, std::string& why_not);

// Checks shared by every tactic of the family: every tensor has a device storage,
// an fp16 tactic has float tensors to compute on and a device that can.
bool layer_supported(const LayerContext& ctx, std::string& why_not);

// A power-of-two workgroup size near `want`, within the device's limits (when known).
uint32_t workgroup_size(const LayerContext& ctx, uint32_t want);
// The workgroup size of a workgroup-per-row tactic for rows of `reduced`
// elements: about 16 elements per invocation, between 32 and 256 invocations.
uint32_t cooperative_size(const LayerContext& ctx, uint32_t reduced);

// How a tactic spreads rows over invocations.
enum class Algo {
  Row,        // one invocation per row
  Workgroup,  // one workgroup per row, combined in shared memory
  Subgroup,   // one subgroup per row, combined with subgroup arithmetic
};

// The dispatch of `shader` for the geometry under `algo`: workgroup size, group
// counts and the geometry push words (the caller appends its own words and spec).
Dispatch row_dispatch(const LayerContext& ctx, const std::string& shader, Algo algo, const RowGeometry& g);
// Whether each invocation's loops over a row (`passes` times over its share) stay within the
// device's loop iteration limit (lavapipe's: a softmax over 300,000 elements by one invocation
// per row came out wrong there). The workgroup and subgroup forms have barriers.
bool row_loops_fit(const LayerContext& ctx, Algo algo, const RowGeometry& g, uint32_t passes, std::string& why_not);
// Whether a subgroup-per-row tactic (`algo` Subgroup) can run on the device.
bool subgroups_usable(const LayerContext& ctx, Algo algo, std::string& why_not);
// The shader of `family` ("reduce", "softmax", "norm") for `algo`.
std::string algo_shader(const char* family, Algo algo);

// ---------------------------------------------------------------------------
// The planners, registered in reduce.cpp.

// reduce_reduction.cpp
std::optional<LayerPlan> plan_reduce(const LayerContext& ctx, std::string& why_not, Algo algo);
// reduce_softmax.cpp
std::optional<LayerPlan> plan_softmax(const LayerContext& ctx, std::string& why_not, Algo algo);
std::optional<LayerPlan> plan_softmax_vec4(const LayerContext& ctx, std::string& why_not, Algo algo);
// reduce_norm.cpp
std::optional<LayerPlan> plan_norm(const LayerContext& ctx, std::string& why_not, Algo algo);
// reduce_axis.cpp
std::optional<LayerPlan> plan_cumsum(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_topk(const LayerContext& ctx, std::string& why_not);
std::optional<LayerPlan> plan_lrn(const LayerContext& ctx, std::string& why_not);

}  // namespace vkg::reduce_tactics
