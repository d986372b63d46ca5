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
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "runtime/core/error.h"
#include "runtime/core/depth_space.h"
#include "runtime/engine/tactic.h"

namespace vkg {

namespace {

constexpr uint32_t kLocalSize = 64;
constexpr uint32_t kMaxParts = 8;  // inputs of concat_multi.comp, outputs of split_multi.comp
// Indices are 32-bit in the shaders (int for strided offsets).
constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

using PlanResult = std::optional<LayerPlan>;

uint32_t word(int64_t v) { return uint32_t(int32_t(v)); }

// Whether this tactic's variant moves elements of storage `s`.
bool check_storage(const LayerContext& ctx, StorageType s, std::string& why_not) {
  switch (ctx.arith) {
    case Arith::F32:
      if (s == StorageType::F32 || s == StorageType::I32) return true;
      why_not = "the f32 variant moves 32-bit elements, not " + std::string(storage_type_name(s));
      return false;
    case Arith::F16:
      if (s == StorageType::F16) return true;
      why_not =
          "the f16 variant moves float16 elements only (this tensor is " + std::string(storage_type_name(s)) + ")";
      return false;
    case Arith::F16Acc32:
      why_not = "movement tactics have no f16acc32 variant";
      return false;
  }
  return false;
}

// Checks the moved data tensors: every one storable by this variant and small enough for 32-bit indices.
bool check_data(const LayerContext& ctx, const std::vector<const LayerTensor*>& tensors, std::string& why_not) {
  for (const LayerTensor* t : tensors) {
    if (!check_storage(ctx, t->storage, why_not)) return false;
    if (t->size() > kMaxElements) {
      why_not = "tensor '" + t->name + "' has more than 2^31 elements";
      return false;
    }
  }
  return true;
}

// Build-time constant inputs (shapes, axes, pads...): present ones must be constant.
bool require_constant(const LayerContext& ctx, size_t i, std::string& why_not) {
  if (!ctx.has_input(i) || ctx.inputs[i].is_constant()) return true;
  why_not = "input " + std::to_string(i) + " ('" + ctx.inputs[i].name + "') is not a build-time constant";
  return false;
}

std::vector<int64_t> constant_ints(const LayerContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.constant_input(i);
  VKG_CHECK(!is_floating(t.dtype()) && t.dtype() != DType::Bool,
            ctx.node.describe() << ": " << what << " must be integers, got " << t.describe());
  return t.to_int64s();
}

// Normalised axes, rejecting out-of-range and repeated ones (invalid ONNX).
std::vector<int64_t> normalize_axes(const LayerContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t a : axes) {
    VKG_CHECK(a >= -rank && a < rank, ctx.node.describe() << ": axis " << a << " is out of range for rank " << rank);
    const int64_t n = a < 0 ? a + rank : a;
    VKG_CHECK(!seen[size_t(n)], ctx.node.describe() << ": axis " << a << " is repeated");
    seen[size_t(n)] = true;
    out.push_back(n);
  }
  return out;
}

bool same_shape(const Shape& computed, const LayerTensor& out, std::string& why_not) {
  if (computed == out.shape) return true;
  why_not =
      "computed output shape " + shape_to_string(computed) + " differs from the layer's " + shape_to_string(out.shape);
  return false;
}

Dispatch make_dispatch(const LayerContext& ctx, const std::string& shader, std::vector<SpecValue> spec,
                       std::vector<BindingRef> bindings, std::vector<uint32_t> push, uint64_t invocations) {
  Dispatch d;
  d.shader = ctx.shader("movement/" + shader);
  d.spec = {{0, kLocalSize}};
  d.spec.insert(d.spec.end(), spec.begin(), spec.end());
  d.bindings = std::move(bindings);
  d.push = std::move(push);
  d.groups = linear_groups(invocations, kLocalSize, ctx.device);
  return d;
}

// ---------------------------------------------------------------------------
// Copies

Dispatch copy_dispatch(const LayerContext& ctx, BindingRef src, BindingRef dst, int64_t n, bool vec4) {
  const uint64_t invocations = vec4 ? uint64_t(n / 4 + n % 4) : uint64_t(n);
  return make_dispatch(ctx, "copy", {{1, vec4 ? 4u : 1u}}, {src, dst}, {uint32_t(n)}, invocations);
}

// A scalar read as double; the input must be constant.
std::optional<double> constant_scalar(const LayerContext& ctx, size_t i, std::string& why_not) {
  if (!require_constant(ctx, i, why_not)) return std::nullopt;
  const Tensor& t = ctx.constant_input(i);
  VKG_CHECK(t.size() == 1, ctx.node.describe() << ": input " << i << " must be a scalar, got " << t.describe());
  return t.get_as_double(0);
}

// Dropout at inference: refuses training mode with a non-zero ratio (that needs random numbers).
bool dropout_is_copy(const LayerContext& ctx, std::string& why_not) {
  if (ctx.opset < 12 || !ctx.has_input(2)) return true;
  const auto training = constant_scalar(ctx, 2, why_not);
  if (!training) return false;
  if (*training == 0.0) return true;
  double ratio = 0.5;
  if (ctx.has_input(1)) {
    const auto r = constant_scalar(ctx, 1, why_not);
    if (!r) return false;
    ratio = *r;
  }
  if (ratio == 0.0) return true;
  why_not = "training mode with a non-zero ratio needs random numbers (inference only)";
  return false;
}

// Dropout's mask output: all true (ones of the input's type before opset 10).
Dispatch mask_dispatch(const LayerContext& ctx, const LayerTensor& mask) {
  uint32_t bits = 1;  // int32 storage: true
  uint32_t half = 0;
  switch (mask.storage) {
    case StorageType::F32: {
      const float one = 1.0f;
      std::memcpy(&bits, &one, sizeof bits);
      break;
    }
    case StorageType::F16:
      bits = 0x3c00;  // float16 1.0
      half = 1;
      break;
    case StorageType::I32:
      break;
  }
  return make_dispatch(ctx, "fill", {{1, half}}, {BindingRef::output(1)}, {uint32_t(mask.size()), bits},
                       uint64_t(mask.size()));
}

PlanResult plan_copy(const LayerContext& ctx, std::string& why_not, bool vec4) {
  const std::string& op = ctx.node.op_type;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  if (x.size() != y.size()) {
    why_not = "input and output sizes differ";
    return std::nullopt;
  }
  if (op == "Dropout") {
    if (!dropout_is_copy(ctx, why_not)) return std::nullopt;
  } else {
    // Reshape's shape, Squeeze/Unsqueeze's axes.
    for (size_t i = 1; i < ctx.inputs.size(); ++i)
      if (!require_constant(ctx, i, why_not)) return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  plan.dispatches.push_back(copy_dispatch(ctx, src, BindingRef::output(0), x.size(), vec4));
  if (op == "Dropout" && ctx.outputs.size() > 1 && ctx.outputs[1].present()) {
    const LayerTensor& mask = ctx.outputs[1];
    if (mask.storage == StorageType::F16 && ctx.arith != Arith::F16) {
      why_not = "a float16 mask needs the f16 variant";
      return std::nullopt;
    }
    plan.dispatches.push_back(mask_dispatch(ctx, mask));
  }
  return plan;
}

// ---------------------------------------------------------------------------
// Strided gathers: Transpose, Slice, Expand, Tile

struct StridedView {
  Shape dims;                    // the output, row-major and contiguous
  std::vector<int64_t> strides;  // source stride of each output axis, in elements
  int64_t offset = 0;            // source element of the multi-index 0
};

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

// The int32 metadata weight of a shader: at least one element.
Tensor meta_tensor(std::vector<int32_t> values) {
  if (values.empty()) values.push_back(0);
  const int64_t n = int64_t(values.size());
  return Tensor::from_vector<int32_t>({n}, values);
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

// Trilu: the upper or lower triangle of the last two axes; k (input 1) must be a
// build-time constant.
PlanResult plan_trilu(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  if (!check_data(ctx, {&x, &ctx.output(0)}, why_not)) return std::nullopt;
  VKG_CHECK(x.shape.size() >= 2, ctx.node.describe() << ": the input must have rank >= 2, got "
                                                     << shape_to_string(x.shape));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    if (!require_constant(ctx, 1, why_not)) return std::nullopt;
    const std::vector<int64_t> ks = constant_ints(ctx, 1, "k");
    VKG_CHECK(ks.size() == 1, ctx.node.describe() << ": k must hold one value");
    k = ks[0];
  }
  const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond the matrix, every k keeps or drops all alike
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const uint32_t upper = ctx.node.attr_int("upper", 1) != 0 ? 1u : 0u;
  plan.dispatches.push_back(make_dispatch(ctx, "trilu", {{1, upper}}, {src, BindingRef::output(0)},
                                          {uint32_t(x.size()), uint32_t(rows), uint32_t(cols), word(k)},
                                          uint64_t(x.size())));
  return plan;
}

// OneHot: depth (input 1) must be a build-time constant; indices and values are bound.
PlanResult plan_one_hot(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& indices = ctx.input(0);
  const LayerTensor& values = ctx.input(2);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&indices, &values, &y}, why_not)) return std::nullopt;
  if (indices.dtype == DType::Bool || (is_floating(indices.dtype) && indices.dtype != DType::Float32)) {
    why_not = std::string("indices of type ") + dtype_name(indices.dtype) + " (int or float32 only)";
    return std::nullopt;
  }
  const std::optional<double> depth_value = constant_scalar(ctx, 1, why_not);
  if (!depth_value) return std::nullopt;
  VKG_CHECK(std::isfinite(*depth_value) && *depth_value >= 1,
            ctx.node.describe() << ": depth must be at least 1, got " << *depth_value);
  VKG_CHECK(values.size() == 2, ctx.node.describe() << ": values must hold two values [off, on]");
  const auto depth = int64_t(*depth_value);
  const auto rank = int64_t(indices.shape.size()) + 1;
  const int64_t axis = normalize_axes(ctx, {ctx.node.attr_int("axis", -1)}, rank)[0];
  Shape shape = indices.shape;
  shape.insert(shape.begin() + axis, depth);
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  int64_t inner = 1;
  for (int64_t d = axis; d + 1 < rank; ++d) inner *= indices.shape[size_t(d)];
  LayerPlan plan;
  const BindingRef idx = bind_input(ctx, plan, 0);
  const BindingRef vals = bind_input(ctx, plan, 2);
  plan.dispatches.push_back(make_dispatch(
      ctx, "one_hot", {{1, indices.storage == StorageType::F32 ? 1u : 0u}, {2, ctx.opset >= 11 ? 1u : 0u}},
      {idx, vals, BindingRef::output(0)},
      {uint32_t(y.size()), uint32_t(depth), uint32_t(std::max<int64_t>(inner, 1))}, uint64_t(y.size())));
  return plan;
}

// EyeLike: only the output is written; the input gives its shape.
PlanResult plan_eye_like(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&y}, why_not)) return std::nullopt;
  VKG_CHECK(y.shape.size() == 2, ctx.node.describe() << ": the input must be 2-D, got " << shape_to_string(y.shape));
  const int64_t rows = y.shape[0], cols = y.shape[1];
  const int64_t k = std::clamp<int64_t>(ctx.node.attr_int("k", 0), -rows - 1, cols + 1);
  const uint32_t one = y.storage == StorageType::F32 ? 0x3f800000u : 1u;
  LayerPlan plan;
  plan.dispatches.push_back(make_dispatch(ctx, "eye_like", {}, {BindingRef::output(0)},
                                          {uint32_t(y.size()), uint32_t(std::max<int64_t>(cols, 1)), word(k), one},
                                          uint64_t(y.size())));
  return plan;
}

// ReverseSequence: the lengths are bound like data (a runtime input or a weight).
PlanResult plan_reverse_sequence(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& lens = ctx.input(1);
  if (!check_data(ctx, {&x, &ctx.output(0)}, why_not)) return std::nullopt;
  VKG_CHECK(x.shape.size() >= 2,
            ctx.node.describe() << ": the input must have rank >= 2, got " << shape_to_string(x.shape));
  const int64_t time_axis = ctx.node.attr_int("time_axis", 0), batch_axis = ctx.node.attr_int("batch_axis", 1);
  VKG_CHECK((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0),
            ctx.node.describe() << ": time_axis and batch_axis must be 0 and 1 (in either order), got " << time_axis
                                << " and " << batch_axis);
  const int64_t steps = x.shape[size_t(time_axis)], batch = x.shape[size_t(batch_axis)];
  VKG_CHECK(lens.size() == batch, ctx.node.describe() << ": sequence_lens has " << lens.size()
                                                      << " values for a batch of " << batch);
  if (lens.storage != StorageType::I32) {
    why_not = "sequence_lens is not an integer tensor";
    return std::nullopt;
  }
  const int64_t inner = x.size() / std::max<int64_t>(1, steps * batch);
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const BindingRef lb = bind_input(ctx, plan, 1);
  plan.dispatches.push_back(make_dispatch(ctx, "reverse_sequence", {{1, time_axis == 0 ? 1u : 0u}},
                                          {src, lb, BindingRef::output(0)},
                                          {uint32_t(x.size()), uint32_t(std::max<int64_t>(steps, 1)),
                                           uint32_t(std::max<int64_t>(batch, 1)), uint32_t(std::max<int64_t>(inner, 1))},
                                          uint64_t(x.size())));
  return plan;
}

// Compress: the condition (input 1) must be a build-time constant, which fixes the
// output shape; the kept indices become a weight.
PlanResult plan_compress(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  if (!require_constant(ctx, 1, why_not)) return std::nullopt;
  const Tensor& cond = ctx.constant_input(1);
  VKG_CHECK(cond.dtype() == DType::Bool && cond.rank() == 1,
            ctx.node.describe() << ": the condition must be a 1-D bool tensor, got " << cond.describe());
  const bool flat = !ctx.node.has_attr("axis");
  const auto rank = int64_t(x.shape.size());
  const int64_t axis = flat ? 0 : normalize_axes(ctx, {ctx.node.attr_int("axis")}, rank)[0];
  const int64_t dim = flat ? x.size() : x.shape[size_t(axis)];
  std::vector<int32_t> kept;
  for (int64_t j = 0; j < cond.size(); ++j) {
    if (!cond.data<bool>()[j]) continue;
    VKG_CHECK(j < dim, ctx.node.describe() << ": the condition selects index " << j << " of an axis of size " << dim);
    kept.push_back(int32_t(j));
  }
  int64_t inner = 1;
  Shape shape = {int64_t(kept.size())};
  if (!flat) {
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[size_t(d)];
    shape = x.shape;
    shape[size_t(axis)] = int64_t(kept.size());
  }
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  const auto k = uint32_t(std::max<size_t>(kept.size(), 1));
  const BindingRef table = add_weight(plan, meta_tensor(kept));
  plan.dispatches.push_back(make_dispatch(
      ctx, "compress", {}, {src, table, BindingRef::output(0)},
      {uint32_t(y.size()), k, uint32_t(std::max<int64_t>(dim, 1)), uint32_t(std::max<int64_t>(inner, 1))},
      uint64_t(y.size())));
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

using ViewFn = std::optional<StridedView> (*)(const LayerContext&, std::string&);

// `plan` (a copy through view `v`) marked as a copy of a range of the input where every output
// element is the input element after the previous one (LayerPlan::input_range).
PlanResult with_input_range(PlanResult plan, const StridedView& v) {
  const StridedView c = coalesce(v);
  if (plan && num_elements(v.dims) > 0 && (c.dims.empty() || (c.dims.size() == 1 && c.strides[0] == 1)))
    plan->input_range = c.offset;
  return plan;
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

// ---------------------------------------------------------------------------
// Concat and Split: slabs of rows along an axis

// The concatenated/split tensor viewed as [outer, row], row = its axis times inner;
// part k owns columns [ends[k-1], ends[k]) of every row.
struct Slabs {
  int64_t outer = 1;
  int64_t row = 0;
  std::vector<int64_t> ends;
  int64_t begin(size_t k) const { return k == 0 ? 0 : ends[k - 1]; }
  int64_t width(size_t k) const { return ends[k] - begin(k); }
};

Slabs make_slabs(const Shape& whole, int64_t axis, const std::vector<int64_t>& sizes) {
  Slabs s;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) s.outer *= whole[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < whole.size(); ++d) inner *= whole[d];
  s.row = whole[size_t(axis)] * inner;
  int64_t end = 0;
  for (int64_t size : sizes) s.ends.push_back(end += size * inner);
  return s;
}

bool slabs_vec4(const Slabs& s) {
  return s.row % 4 == 0 && std::all_of(s.ends.begin(), s.ends.end(), [](int64_t e) { return e % 4 == 0; });
}

// One slab copy: part k of `s` between its own tensor and the whole one.
Dispatch slab_dispatch(const LayerContext& ctx, const Slabs& s, size_t k, BindingRef src, BindingRef dst, bool to_whole,
                       uint32_t width) {
  const int64_t w = s.width(k) / width, row = s.row / width, begin = s.begin(k) / width;
  const int64_t n = s.outer * w;
  std::vector<uint32_t> push =
      to_whole ? std::vector<uint32_t>{uint32_t(n), uint32_t(w), uint32_t(w), 0, uint32_t(row), uint32_t(begin)}
               : std::vector<uint32_t>{uint32_t(n), uint32_t(w), uint32_t(row), uint32_t(begin), uint32_t(w), 0};
  return make_dispatch(ctx, "slab", {{1, width}, small_indices_spec(uint64_t(n))}, {src, dst}, std::move(push),
                       uint64_t(n));
}

// A dispatch that writes nothing, for layers whose outputs are all empty.
Dispatch empty_dispatch(const LayerContext& ctx, BindingRef src, BindingRef dst) {
  return copy_dispatch(ctx, src, dst, 0, false);
}

std::vector<uint32_t> multi_push(const Slabs& s, int64_t n) {
  std::vector<uint32_t> push = {uint32_t(n), uint32_t(s.row)};
  for (uint32_t k = 0; k < kMaxParts; ++k) push.push_back(uint32_t(k < s.ends.size() ? s.ends[k] : s.row));
  return push;
}

bool check_parts(const LayerContext& ctx, size_t parts, std::string& why_not) {
  if (parts > kMaxParts) {
    why_not = std::to_string(parts) + " parts: the single dispatch takes at most " + std::to_string(kMaxParts);
    return false;
  }
  if (ctx.device.max_storage_buffers_per_stage < kMaxParts + 1) {
    why_not = "the device binds fewer than " + std::to_string(kMaxParts + 1) + " storage buffers per stage";
    return false;
  }
  return true;
}

enum class SlabMode { Scalar, Vec4, Single };

PlanResult plan_concat(const LayerContext& ctx, std::string& why_not, SlabMode mode) {
  const size_t parts = ctx.inputs.size();
  VKG_CHECK(parts > 0, ctx.node.describe() << ": needs at least one input");
  const LayerTensor& y = ctx.output(0);
  std::vector<const LayerTensor*> data = {&y};
  for (size_t k = 0; k < parts; ++k) data.push_back(&ctx.input(k));
  if (!check_data(ctx, data, why_not)) return std::nullopt;
  const int64_t rank = int64_t(y.shape.size());
  VKG_CHECK(rank > 0, ctx.node.describe() << ": cannot concatenate scalars");
  // Concat-1 defaulted the axis to 1; from opset 4 it is required.
  const int64_t axis_attr = ctx.opset < 4 ? ctx.node.attr_int("axis", 1) : ctx.node.attr_int("axis");
  const int64_t axis = normalize_axes(ctx, {axis_attr}, rank)[0];
  std::vector<int64_t> sizes;
  Shape shape = ctx.input(0).shape;
  VKG_CHECK(int64_t(shape.size()) == rank, ctx.node.describe() << ": input ranks differ");
  shape[size_t(axis)] = 0;
  for (size_t k = 0; k < parts; ++k) {
    const Shape& s = ctx.input(k).shape;
    VKG_CHECK(s.size() == shape.size(), ctx.node.describe() << ": input ranks differ");
    sizes.push_back(s[size_t(axis)]);
    shape[size_t(axis)] += s[size_t(axis)];
  }
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  const Slabs s = make_slabs(shape, axis, sizes);

  LayerPlan plan;
  std::vector<BindingRef> inputs;
  for (size_t k = 0; k < parts; ++k) inputs.push_back(bind_input(ctx, plan, k));
  switch (mode) {
    case SlabMode::Scalar:
    case SlabMode::Vec4: {
      const bool vec4 = mode == SlabMode::Vec4;
      if (vec4 && !slabs_vec4(s)) {
        why_not = "the inputs' slabs are not whole vectors of 4 elements";
        return std::nullopt;
      }
      for (size_t k = 0; k < parts; ++k)
        if (s.outer * s.width(k) > 0)
          plan.dispatches.push_back(slab_dispatch(ctx, s, k, inputs[k], BindingRef::output(0), true, vec4 ? 4 : 1));
      break;
    }
    case SlabMode::Single: {
      if (!check_parts(ctx, parts, why_not)) return std::nullopt;
      if (y.size() == 0) break;
      std::vector<BindingRef> bindings = {BindingRef::output(0)};
      for (uint32_t k = 0; k < kMaxParts; ++k) bindings.push_back(inputs[k < parts ? k : 0]);
      plan.dispatches.push_back(make_dispatch(ctx, "concat_multi", {{1, uint32_t(parts)}}, std::move(bindings),
                                              multi_push(s, y.size()), uint64_t(y.size())));
      break;
    }
  }
  if (plan.dispatches.empty()) plan.dispatches.push_back(empty_dispatch(ctx, inputs[0], BindingRef::output(0)));
  return plan;
}

// Split sizes along `axis` from the split input/attribute, or equal parts.
std::optional<std::vector<int64_t>> split_sizes(const LayerContext& ctx, int64_t dim, std::string& why_not) {
  const size_t n = ctx.outputs.size();
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    if (!require_constant(ctx, 1, why_not)) return std::nullopt;
    sizes = constant_ints(ctx, 1, "split");
  } else if (ctx.opset < 13) {
    sizes = ctx.node.attr_ints("split");
  }
  if (sizes.empty()) {
    if (ctx.opset >= 18 && ctx.node.has_attr("num_outputs")) {
      // Split-18: the last chunk is smaller when the axis does not divide evenly.
      const int64_t parts = ctx.node.attr_int("num_outputs");
      VKG_CHECK(parts == int64_t(n) && parts > 0, ctx.node.describe()
                                                      << ": num_outputs " << parts << " but " << n << " outputs");
      const int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::clamp<int64_t>(dim - k * chunk, 0, chunk));
    } else {
      VKG_CHECK(dim % int64_t(n) == 0,
                ctx.node.describe() << ": an axis of " << dim << " cannot be split into " << n << " equal parts");
      sizes.assign(n, dim / int64_t(n));
    }
  }
  VKG_CHECK(sizes.size() == n, ctx.node.describe()
                                   << ": split has " << sizes.size() << " sizes for " << n << " outputs");
  VKG_CHECK(std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s >= 0; }) &&
                std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) == dim,
            ctx.node.describe() << ": split sizes " << shape_to_string(sizes) << " do not add up to " << dim);
  return sizes;
}

PlanResult plan_split(const LayerContext& ctx, std::string& why_not, SlabMode mode) {
  const LayerTensor& x = ctx.input(0);
  const size_t parts = ctx.outputs.size();
  std::vector<const LayerTensor*> data = {&x};
  for (const LayerTensor& t : ctx.outputs)
    if (t.present()) data.push_back(&t);
  if (!check_data(ctx, data, why_not)) return std::nullopt;
  const int64_t rank = int64_t(x.shape.size());
  const int64_t axis = normalize_axes(ctx, {ctx.node.attr_int("axis", 0)}, rank)[0];
  const auto sizes = split_sizes(ctx, x.shape[size_t(axis)], why_not);
  if (!sizes) return std::nullopt;
  for (size_t k = 0; k < parts; ++k) {
    if (!ctx.outputs[k].present()) continue;
    Shape shape = x.shape;
    shape[size_t(axis)] = (*sizes)[k];
    if (!same_shape(shape, ctx.outputs[k], why_not)) return std::nullopt;
  }
  const Slabs s = make_slabs(x.shape, axis, *sizes);

  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  size_t first_output = 0;
  while (first_output + 1 < parts && !ctx.outputs[first_output].present()) ++first_output;
  switch (mode) {
    case SlabMode::Scalar:
    case SlabMode::Vec4: {
      const bool vec4 = mode == SlabMode::Vec4;
      if (vec4 && !slabs_vec4(s)) {
        why_not = "the outputs' slabs are not whole vectors of 4 elements";
        return std::nullopt;
      }
      for (size_t k = 0; k < parts; ++k)
        if (ctx.outputs[k].present() && s.outer * s.width(k) > 0)
          plan.dispatches.push_back(
              slab_dispatch(ctx, s, k, src, BindingRef::output(uint32_t(k)), false, vec4 ? 4 : 1));
      break;
    }
    case SlabMode::Single: {
      if (!check_parts(ctx, parts, why_not)) return std::nullopt;
      if (x.size() == 0) break;
      // Absent outputs get a scratch buffer of their size (nobody reads it).
      std::vector<BindingRef> bindings = {src};
      for (uint32_t k = 0; k < kMaxParts; ++k) {
        if (k >= parts) {
          bindings.push_back(BindingRef::output(uint32_t(first_output)));
        } else if (ctx.outputs[k].present()) {
          bindings.push_back(BindingRef::output(k));
        } else {
          plan.scratch_bytes.push_back(uint64_t(std::max<int64_t>(1, s.outer * s.width(k))) *
                                       storage_element_bytes(x.storage));
          bindings.push_back(BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1)));
        }
      }
      plan.dispatches.push_back(make_dispatch(ctx, "split_multi", {{1, uint32_t(parts)}}, std::move(bindings),
                                              multi_push(s, x.size()), uint64_t(x.size())));
      break;
    }
  }
  if (plan.dispatches.empty())
    plan.dispatches.push_back(empty_dispatch(ctx, src, BindingRef::output(uint32_t(first_output))));
  return plan;
}

// ---------------------------------------------------------------------------
// Pad

enum class PadMode : uint32_t { Constant = 0, Reflect = 1, Edge = 2, Wrap = 3 };

PadMode pad_mode(const LayerContext& ctx) {
  const std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap") return PadMode::Wrap;
  VKG_THROW(ctx.node.describe() << ": unknown mode '" << mode << "'");
}

PlanResult plan_pad(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  const int64_t rank = int64_t(x.shape.size());
  const PadMode mode = pad_mode(ctx);
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);

  std::vector<int64_t> pads, axes;
  std::optional<BindingRef> fill;
  Tensor fill_value(x.dtype, {});  // zero unless given
  if (ctx.opset < 11) {
    // Pad-1 called the attribute "paddings"; Pad-2 renamed it "pads".
    pads = ctx.node.attr_ints(ctx.opset < 2 ? "paddings" : "pads");
    fill_value.set_from_double(0, ctx.node.attr_float("value", 0.0f));
  } else {
    for (size_t i : {size_t(1), size_t(3)})
      if (!require_constant(ctx, i, why_not)) return std::nullopt;
    pads = constant_ints(ctx, 1, "pads");
    if (ctx.has_input(2) && ctx.inputs[2].size() > 0) {
      const LayerTensor& value = ctx.inputs[2];
      VKG_CHECK(value.size() == 1 && value.dtype == x.dtype,
                ctx.node.describe() << ": constant_value must be one " << dtype_name(x.dtype) << " element");
      if (!check_storage(ctx, value.storage, why_not)) return std::nullopt;
      fill = bind_input(ctx, plan, 2);
    }
    if (ctx.has_input(3)) axes = normalize_axes(ctx, constant_ints(ctx, 3, "axes"), rank);
  }
  if (!fill) fill = add_weight(plan, to_storage(fill_value, x.storage, ctx.node.describe() + " constant value"));
  if (axes.empty()) {
    axes.resize(size_t(rank));
    std::iota(axes.begin(), axes.end(), int64_t(0));
  }
  VKG_CHECK(pads.size() == 2 * axes.size(), ctx.node.describe()
                                                << ": " << pads.size() << " pads for " << axes.size() << " axes");
  std::vector<int64_t> before(size_t(rank), 0), after(size_t(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    before[size_t(axes[k])] = pads[k];
    after[size_t(axes[k])] = pads[k + axes.size()];
  }

  const std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  Shape shape;
  std::vector<int32_t> meta;
  for (size_t d = 0; d < size_t(rank); ++d) {
    const int64_t crop_lo = std::max<int64_t>(0, -before[d]);
    const int64_t kept = x.shape[d] - crop_lo - std::max<int64_t>(0, -after[d]);
    VKG_CHECK(kept >= 0, ctx.node.describe() << ": pads " << before[d] << ", " << after[d] << " crop more than the "
                                             << x.shape[d] << " elements of axis " << d);
    const int64_t pad_lo = std::max<int64_t>(0, before[d]);
    const int64_t out_dim = kept + pad_lo + std::max<int64_t>(0, after[d]);
    VKG_CHECK(mode == PadMode::Constant || kept > 0 || out_dim == 0,
              ctx.node.describe() << ": cannot pad an empty axis in mode " << ctx.node.attr_string("mode", ""));
    shape.push_back(out_dim);
    for (int64_t m : {out_dim, kept, pad_lo, crop_lo, in_strides[d]}) {
      if (m > kMaxElements) {
        why_not = "pads do not fit in int32";
        return std::nullopt;
      }
      meta.push_back(int32_t(m));
    }
  }
  if (!same_shape(shape, y, why_not)) return std::nullopt;
  const BindingRef m = add_weight(plan, meta_tensor(std::move(meta)));
  plan.dispatches.push_back(make_dispatch(ctx, "pad", {}, {src, BindingRef::output(0), *fill, m},
                                          {uint32_t(y.size()), uint32_t(rank), uint32_t(mode)}, uint64_t(y.size())));
  return plan;
}

}  // namespace

void register_movement_tactics(TacticRegistry& r) {
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
