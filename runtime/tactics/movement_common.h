// What the movement family's planners share (movement.cpp registers them;
// movement_copy, _strided, _select, _slabs and _pad hold one kind each): the
// storage and size checks of a variant that moves bits, constant-input helpers,
// the dispatch of a movement shader, and the strided view that Transpose,
// Slice, Expand, Tile and DepthToSpace are described by.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg::movement_tactics {

// Indices are 32-bit in the shaders (int for strided offsets).
inline constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

using PlanResult = std::optional<LayerPlan>;

inline uint32_t word(int64_t v) { return uint32_t(int32_t(v)); }

// Whether this tactic's variant moves elements of storage `s`.
bool check_storage(const LayerContext& ctx, StorageType s, std::string& why_not);
// Checks the moved data tensors: every one storable by this variant and small enough for 32-bit indices.
bool check_data(const LayerContext& ctx, const std::vector<const LayerTensor*>& tensors, std::string& why_not);
// Build-time constant inputs (shapes, axes, pads...): present ones must be constant.
bool require_constant(const LayerContext& ctx, size_t i, std::string& why_not);
std::vector<int64_t> constant_ints(const LayerContext& ctx, size_t i, const char* what);
// A scalar read as double; the input must be constant.
std::optional<double> constant_scalar(const LayerContext& ctx, size_t i, std::string& why_not);
// Normalised axes, rejecting out-of-range and repeated ones (invalid ONNX).
std::vector<int64_t> normalize_axes(const LayerContext& ctx, const std::vector<int64_t>& axes, int64_t rank);
bool same_shape(const Shape& computed, const LayerTensor& out, std::string& why_not);

// A dispatch of shaders/movement/`shader` over `invocations` (specialization constant 0 the
// workgroup size, `spec` after it).
Dispatch make_dispatch(const LayerContext& ctx, const std::string& shader, std::vector<SpecValue> spec,
                       std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t invocations);
Dispatch copy_dispatch(const LayerContext& ctx, BindingRef src, BindingRef dst, int64_t n, bool vec4);
// The int32 metadata weight of a shader: at least one element.
Tensor meta_tensor(std::vector<int32_t> values);

// ---------------------------------------------------------------------------
// Strided gathers (movement_strided.cpp)

struct StridedView {
  Shape dims;                    // the output, row-major and contiguous
  std::vector<int64_t> strides;  // source stride of each output axis, in elements
  int64_t offset = 0;            // source element of the multi-index 0
};

using ViewFn = std::optional<StridedView> (*)(const LayerContext&, std::string&);

std::optional<StridedView> transpose_view(const LayerContext& ctx, std::string& why_not);
// DepthToSpace/SpaceToDepth: the permuted 6-D view of the input (runtime/core/depth_space.h).
std::optional<StridedView> depth_space_view(const LayerContext& ctx, std::string& why_not);
std::optional<StridedView> slice_view(const LayerContext& ctx, std::string& why_not);
std::optional<StridedView> expand_view(const LayerContext& ctx, std::string& why_not);
std::optional<StridedView> tile_view(const LayerContext& ctx, std::string& why_not);

// The planner of a strided gather tactic: `view` describes the op, vec4 picks the shader's vector width.
std::function<PlanResult(const LayerContext&, std::string&)> strided_tactic(ViewFn view, bool vec4);
// A permutation in vectors: whole rows of vectors where the innermost axis stays
// innermost, else 4x4 register blocks.
std::function<PlanResult(const LayerContext&, std::string&)> permute_vec4_tactic(ViewFn view);

// ---------------------------------------------------------------------------
// The other planners, registered in movement.cpp.

// movement_copy.cpp
PlanResult plan_copy(const LayerContext& ctx, std::string& why_not, bool vec4);
// movement_select.cpp
PlanResult plan_trilu(const LayerContext& ctx, std::string& why_not);
PlanResult plan_one_hot(const LayerContext& ctx, std::string& why_not);
PlanResult plan_eye_like(const LayerContext& ctx, std::string& why_not);
PlanResult plan_reverse_sequence(const LayerContext& ctx, std::string& why_not);
PlanResult plan_compress(const LayerContext& ctx, std::string& why_not);
// movement_slabs.cpp
enum class SlabMode { Scalar, Vec4, Single };
PlanResult plan_concat(const LayerContext& ctx, std::string& why_not, SlabMode mode);
PlanResult plan_split(const LayerContext& ctx, std::string& why_not, SlabMode mode);
// movement_pad.cpp
PlanResult plan_pad(const LayerContext& ctx, std::string& why_not);

}  // namespace vkg::movement_tactics
