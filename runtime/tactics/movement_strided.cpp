// The strided gathers: Transpose, DepthToSpace and SpaceToDepth, Slice, Expand
// and Tile, each described as a view of its input (StridedView) and gathered by
// shaders/movement/strided.comp, or by 4x4 register blocks (transpose4x4.comp)
// for a permutation that moves the innermost axis.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/core/depth_space.h"
#include "runtime/core/error.h"
#include "runtime/tactics/movement_common.h"

namespace vkg::movement_tactics {

namespace {

// Drops size-1 axes and merges neighbours that are contiguous in the source too.
StridedView coalesce(const StridedView& v) {
  StridedView out;
  out.offset = v.offset;
  if (num_elements(v.dims) == 0) return v;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] == 1) continue;
    if (!out.dims.empty() && out.strides.back() == v.strides[d] * v.dims[d]) {
      out.dims.back() *= v.dims[d];
      out.strides.back() = v.strides[d];
    } else {
      out.dims.push_back(v.dims[d]);
      out.strides.push_back(v.strides[d]);
    }
  }
  return out;
}

// Whether the coalesced view moves whole vectors: innermost axis contiguous and
// divisible by 4, every vector start aligned to 4 elements.
bool vec4_view(const StridedView& v) {
  if (v.dims.empty() || v.strides.back() != 1 || v.dims.back() % 4 != 0 || v.offset % 4 != 0) return false;
  return std::all_of(v.strides.begin(), v.strides.end() - 1, [](int64_t s) { return s % 4 == 0; });
}

bool fits_int32(const StridedView& v) {
  int64_t lo = v.offset, hi = v.offset;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    const int64_t reach = (v.dims[d] - 1) * v.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return lo >= 0 && hi <= kMaxElements;
}

// Plans the gather of `view` from input 0 into output 0; vec4 declines views that do not allow it.
PlanResult plan_strided(const LayerContext& ctx, std::string& why_not, const StridedView& full, bool vec4) {
  const StridedView v = coalesce(full);
  const int64_t n = num_elements(v.dims);
  if (n > 0 && !fits_int32(v)) {
    why_not = "source offsets do not fit in int32";
    return std::nullopt;
  }
  if (vec4 && !vec4_view(v)) {
    why_not = "the innermost run of the gather is not contiguous vectors of 4 aligned elements";
    return std::nullopt;
  }
  std::vector<int32_t> meta;
  for (int64_t d : v.dims) meta.push_back(int32_t(d));
  for (int64_t s : v.strides) meta.push_back(int32_t(s));
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const BindingRef m = add_weight(plan, meta_tensor(std::move(meta)));
  const uint32_t width = vec4 ? 4 : 1;
  // Up to 8 dims, the geometry as constants (shaders/movement/strided.comp: kRank, dims, strides).
  std::vector<SpecValue> spec = {{1, width}};
  if (!v.dims.empty() && v.dims.size() <= 8) {
    spec.push_back({2, uint32_t(v.dims.size())});
    for (size_t d = 0; d < v.dims.size(); ++d) {
      spec.push_back({uint32_t(10 + d), uint32_t(v.dims[d])});
      spec.push_back({uint32_t(20 + d), word(v.strides[d])});
    }
  }
  plan.dispatches.push_back(make_dispatch(ctx, "strided", std::move(spec), {src, BindingRef::output(0), m},
                                          {uint32_t(n), uint32_t(v.dims.size()), word(v.offset)}, uint64_t(n) / width));
  return plan;
}

// Transpose in 4x4 register blocks (transpose4x4.comp); v is coalesced with offset 0.
PlanResult plan_transpose_blocks(const LayerContext& ctx, std::string& why_not, const StridedView& v) {
  const size_t rank = v.dims.size();
  const auto inner = std::find(v.strides.begin(), v.strides.end(), 1);
  if (rank < 2 || inner == v.strides.end()) {
    why_not = "not a transpose of the innermost axis";
    return std::nullopt;
  }
  const size_t a = rank - 1, b = size_t(inner - v.strides.begin());
  const std::vector<int64_t> out_strides = contiguous_strides(v.dims);
  const bool aligned = v.dims[a] % 4 == 0 && v.dims[b] % 4 == 0 &&
                       std::all_of(v.strides.begin(), v.strides.end(), [](int64_t s) { return s == 1 || s % 4 == 0; });
  if (!aligned) {
    why_not = "the transposed axes (" + std::to_string(v.dims[b]) + " and " + std::to_string(v.dims[a]) +
              " elements) are not both divisible by 4";
    return std::nullopt;
  }
  Shape grid = v.dims;
  std::vector<int64_t> src = v.strides, dst = out_strides;
  grid[a] /= 4, grid[b] /= 4;
  src[a] *= 4, src[b] *= 4;
  dst[a] *= 4, dst[b] *= 4;
  std::vector<int32_t> meta;
  for (int64_t d : grid) meta.push_back(int32_t(d));
  for (int64_t s : src) meta.push_back(int32_t(s));
  for (int64_t s : dst) meta.push_back(int32_t(s));
  LayerPlan plan;
  const BindingRef in = bind_input(ctx, plan, 0);
  const BindingRef m = add_weight(plan, meta_tensor(std::move(meta)));
  const int64_t blocks = num_elements(grid);
  plan.dispatches.push_back(make_dispatch(
      ctx, "transpose4x4", {}, {in, BindingRef::output(0), m},
      {uint32_t(blocks), uint32_t(rank), uint32_t(v.strides[a]), uint32_t(out_strides[b])}, uint64_t(blocks)));
  return plan;
}

// ONNX Slice clamping (as runtime/reference/ops/movement.cpp): start and count along one axis.
void slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim, int64_t& first, int64_t& count) {
  first = 0, count = 0;
  if (dim == 0) return;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) count = (end - start + step - 1) / step;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (start > end) count = (start - end - step - 1) / -step;
  }
  first = start;
}

// `plan` (a copy through view `v`) marked as a copy of a range of the input where every output
// element is the input element after the previous one (LayerPlan::input_range).
PlanResult with_input_range(PlanResult plan, const StridedView& v) {
  const StridedView c = coalesce(v);
  if (plan && num_elements(v.dims) > 0 && (c.dims.empty() || (c.dims.size() == 1 && c.strides[0] == 1)))
    plan->input_range = c.offset;
  return plan;
}

}  // namespace

std::optional<StridedView> transpose_view(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) reversed[size_t(d)] = rank - 1 - d;
  const std::vector<int64_t> given = ctx.node.attr_ints("perm", reversed);
  VKG_CHECK(int64_t(given.size()) == rank,
            ctx.node.describe() << ": perm " << shape_to_string(given) << " does not match rank " << rank);
  const std::vector<int64_t> perm = normalize_axes(ctx, given, rank);
  const std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  StridedView v;
  for (int64_t p : perm) {
    v.dims.push_back(x.shape[size_t(p)]);
    v.strides.push_back(in_strides[size_t(p)]);
  }
  if (!same_shape(v.dims, ctx.output(0), why_not)) return std::nullopt;
  return v;
}

// DepthToSpace/SpaceToDepth: the permuted 6-D view of the input (runtime/core/depth_space.h).
std::optional<StridedView> depth_space_view(const LayerContext& ctx, std::string& why_not) {
  const BlockPermutation p = depth_space_permutation(ctx.node, ctx.input(0).shape);
  if (!same_shape(p.out_shape, ctx.output(0), why_not)) return std::nullopt;
  const std::vector<int64_t> strides = contiguous_strides(p.view);
  StridedView v;
  for (int64_t a : p.perm) {
    v.dims.push_back(p.view[size_t(a)]);
    v.strides.push_back(strides[size_t(a)]);
  }
  return v;
}

std::optional<StridedView> slice_view(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  bool axes_given = false;
  if (ctx.opset < 10) {
    starts = ctx.node.attr_ints("starts");
    ends = ctx.node.attr_ints("ends");
    axes = ctx.node.attr_ints("axes");
    axes_given = ctx.node.has_attr("axes");
  } else {
    for (size_t i = 1; i <= 4; ++i)
      if (!require_constant(ctx, i, why_not)) return std::nullopt;
    starts = constant_ints(ctx, 1, "starts");
    ends = constant_ints(ctx, 2, "ends");
    if (ctx.has_input(3)) {
      axes = constant_ints(ctx, 3, "axes");
      axes_given = true;
    }
    if (ctx.has_input(4)) steps = constant_ints(ctx, 4, "steps");
  }
  if (!axes_given) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  VKG_CHECK(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size(),
            ctx.node.describe() << ": starts, ends, axes and steps differ in length");
  axes = normalize_axes(ctx, axes, rank);

  const std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  StridedView v;
  v.dims = x.shape;
  v.strides = in_strides;
  for (size_t k = 0; k < axes.size(); ++k) {
    VKG_CHECK(steps[k] != 0, ctx.node.describe() << ": step must not be zero");
    const size_t d = size_t(axes[k]);
    int64_t first = 0, count = 0;
    slice_axis(starts[k], ends[k], steps[k], x.shape[d], first, count);
    v.dims[d] = count;
    v.strides[d] = steps[k] * in_strides[d];
    v.offset += first * in_strides[d];
  }
  if (!same_shape(v.dims, ctx.output(0), why_not)) return std::nullopt;
  if (num_elements(v.dims) == 0) v.offset = 0;
  return v;
}

std::optional<StridedView> expand_view(const LayerContext& ctx, std::string& why_not) {
  if (!require_constant(ctx, 1, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  const Shape requested = constant_ints(ctx, 1, "shape");
  Shape shape;
  try {
    shape = broadcast_shapes(x.shape, requested);
  } catch (const Error& e) {
    VKG_THROW(ctx.node.describe() << ": " << e.what());
  }
  if (!same_shape(shape, ctx.output(0), why_not)) return std::nullopt;
  return StridedView{shape, broadcast_strides(x.shape, shape), 0};
}

std::optional<StridedView> tile_view(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  std::vector<int64_t> repeats;
  if (ctx.opset < 6) {
    // Tile-1: a scalar `tiles` count along one `axis`, both inputs.
    if (!require_constant(ctx, 1, why_not) || !require_constant(ctx, 2, why_not)) return std::nullopt;
    repeats.assign(size_t(rank), 1);
    const std::vector<int64_t> axis = constant_ints(ctx, 2, "axis"), tiles = constant_ints(ctx, 1, "tiles");
    VKG_CHECK(axis.size() == 1 && tiles.size() == 1, ctx.node.describe() << ": tiles and axis must be scalars");
    repeats[size_t(normalize_axes(ctx, axis, rank)[0])] = tiles[0];
  } else {
    if (!require_constant(ctx, 1, why_not)) return std::nullopt;
    repeats = constant_ints(ctx, 1, "repeats");
  }
  VKG_CHECK(int64_t(repeats.size()) == rank,
            ctx.node.describe() << ": repeats " << shape_to_string(repeats) << " do not match rank " << rank);
  // The output viewed as [r0, d0, r1, d1, ...]: the repeat index does not move in the source.
  const std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  StridedView v;
  Shape shape;
  for (size_t d = 0; d < size_t(rank); ++d) {
    VKG_CHECK(repeats[d] >= 0, ctx.node.describe() << ": negative repeat in " << shape_to_string(repeats));
    shape.push_back(x.shape[d] * repeats[d]);
    v.dims.push_back(repeats[d]);
    v.strides.push_back(0);
    v.dims.push_back(x.shape[d]);
    v.strides.push_back(in_strides[d]);
  }
  if (!same_shape(shape, ctx.output(0), why_not)) return std::nullopt;
  return v;
}

// The planner of a strided gather tactic: `view` describes the op, vec4 picks the shader's vector width.
std::function<PlanResult(const LayerContext&, std::string&)> strided_tactic(ViewFn view, bool vec4) {
  return [view, vec4](const LayerContext& ctx, std::string& why_not) -> PlanResult {
    if (!check_data(ctx, {&ctx.input(0), &ctx.output(0)}, why_not)) return std::nullopt;
    const auto v = view(ctx, why_not);
    if (!v) return std::nullopt;
    return with_input_range(plan_strided(ctx, why_not, *v, vec4), *v);
  };
}

// A permutation in vectors: whole rows of vectors where the innermost axis stays
// innermost, else 4x4 register blocks.
std::function<PlanResult(const LayerContext&, std::string&)> permute_vec4_tactic(ViewFn view) {
  return [view](const LayerContext& ctx, std::string& why_not) -> PlanResult {
    if (!check_data(ctx, {&ctx.input(0), &ctx.output(0)}, why_not)) return std::nullopt;
    const auto v = view(ctx, why_not);
    if (!v) return std::nullopt;
    const StridedView c = coalesce(*v);
    if (num_elements(c.dims) == 0) {
      why_not = "empty tensor";
      return std::nullopt;
    }
    if (!c.strides.empty() && c.strides.back() == 1) return with_input_range(plan_strided(ctx, why_not, c, true), c);
    return plan_transpose_blocks(ctx, why_not, c);
  };
}

}  // namespace vkg::movement_tactics
