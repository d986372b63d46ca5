// Vulkan tactics of the reduce family (see runtime/engine/tactic.h): the ten
// Reduce* ops, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and the row
// normalizations (LayerNormalization, RMSNormalization, InstanceNormalization,
// GroupNormalization, MeanVarianceNormalization, LpNormalization).
//
// Every op here works on rows: output row o gathers the input elements
//   base(o) + offset(r)   for r in [0, reduced)
// (the reference backend's ReducePlan). RowGeometry describes base() and
// offset() as up to four (dim, stride) runs each, after dropping size-1 axes
// and merging neighbouring axes; every shader of the family reads it from its
// first 18 push-constant words (shaders/reduce/rows.glsl). Each kind has three
// tactics: one invocation per row (.row), one subgroup per row combining with
// subgroup arithmetic (.subgroup) and one workgroup per row combining in shared
// memory (.workgroup); Softmax and LogSoftmax over contiguous rows also one
// workgroup per row reading vec4s (softmax.vec4_sg, softmax.vec4_wg).
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/window_geometry.h"
#include "runtime/engine/tactic.h"

namespace vkg {
namespace {

constexpr size_t kMaxRuns = 4;  // (dim, stride) runs per side in shaders/reduce/rows.glsl

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
std::optional<RowGeometry> row_geometry(const Shape& shape, const std::vector<bool>& mask, std::string& why_not) {
  const int64_t total = num_elements(shape);
  if (total > std::numeric_limits<int32_t>::max()) {
    why_not = "the input has " + std::to_string(total) + " elements, more than 32-bit indices address";
    return std::nullopt;
  }
  int64_t rows = 1, reduced = 1;
  for (size_t d = 0; d < shape.size(); ++d) (mask[d] ? reduced : rows) *= shape[d];
  RowGeometry g;
  g.rows = uint32_t(rows);
  g.reduced = uint32_t(reduced);
  if (total == 0) {  // nothing to read: rows (if any) reduce empty sets
    g.kept_dims[3] = std::max<uint32_t>(g.rows, 1);
    g.red_dims[3] = g.reduced;
    return g;
  }
  struct Run {
    int64_t dim, stride;
    bool reduced;
  };
  std::vector<Run> runs;
  const std::vector<int64_t> strides = contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == mask[d]) {
      runs.back().dim *= shape[d];
      runs.back().stride = strides[d];
    } else {
      runs.push_back({shape[d], strides[d], mask[d]});
    }
  }
  std::vector<Run> kept, red;
  for (const Run& r : runs) (r.reduced ? red : kept).push_back(r);
  if (kept.size() > kMaxRuns || red.size() > kMaxRuns) {
    why_not = "the reduced and kept axes alternate in more than " + std::to_string(kMaxRuns) + " runs";
    return std::nullopt;
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    g.kept_dims[kMaxRuns - kept.size() + i] = uint32_t(kept[i].dim);
    g.kept_strides[kMaxRuns - kept.size() + i] = uint32_t(kept[i].stride);
  }
  for (size_t i = 0; i < red.size(); ++i) {
    g.red_dims[kMaxRuns - red.size() + i] = uint32_t(red[i].dim);
    g.red_strides[kMaxRuns - red.size() + i] = uint32_t(red[i].stride);
  }
  g.red_runs = uint32_t(red.size());
  return g;
}

// ONNX axes (possibly negative, empty = all) as a per-axis mask, as the reference
// backend reads them; throws Error for an out-of-range or repeated axis.
std::vector<bool> axes_mask(const Node& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(size_t(rank), axes.empty());
  for (int64_t axis : axes) {
    VKG_CHECK(axis >= -rank && axis < rank,
              node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
    const size_t a = size_t(axis < 0 ? axis + rank : axis);
    VKG_CHECK(!mask[a], node.describe() << ": axis " << axis << " is repeated in the axes");
    mask[a] = true;
  }
  return mask;
}

std::vector<bool> trailing_mask(int64_t first, int64_t rank) {
  std::vector<bool> mask(size_t(rank), false);
  for (int64_t d = first; d < rank; ++d) mask[size_t(d)] = true;
  return mask;
}

// Checks shared by every tactic of the family: every tensor has a device storage,
// an fp16 tactic has float tensors to compute on and a device that can.
bool layer_supported(const LayerContext& ctx, std::string& why_not) {
  bool any_float = false;
  auto check = [&](const LayerTensor& t) {
    if (!t.present()) return true;
    if (!storage_for(t.dtype, ctx.precision)) {
      why_not = "tensor '" + t.name + "' is " + dtype_name(t.dtype) + ", which the Vulkan backend cannot hold";
      return false;
    }
    any_float = any_float || is_float_dtype(t.dtype);
    return true;
  };
  for (const LayerTensor& t : ctx.inputs)
    if (!check(t)) return false;
  for (const LayerTensor& t : ctx.outputs)
    if (!check(t)) return false;
  if (ctx.arith != Arith::F32 && !any_float) {
    why_not = "the layer has no float tensors to compute in fp16";
    return false;
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return false;
  }
  return true;
}

// A power-of-two workgroup size near `want`, within the device's limits (when known).
uint32_t workgroup_size(const LayerContext& ctx, uint32_t want) {
  uint32_t limit = 1024;
  if (ctx.device.max_workgroup_invocations > 0) limit = std::min(limit, ctx.device.max_workgroup_invocations);
  if (ctx.device.max_workgroup_size[0] > 0) limit = std::min(limit, ctx.device.max_workgroup_size[0]);
  return std::bit_floor(std::max<uint32_t>(1, std::min(want, limit)));
}

// The workgroup size of a workgroup-per-row tactic for rows of `reduced`
// elements: about 16 elements per invocation, between 32 and 256 invocations.
uint32_t cooperative_size(const LayerContext& ctx, uint32_t reduced) {
  return workgroup_size(ctx, std::clamp<uint32_t>(std::bit_ceil(std::max<uint32_t>(1, reduced / 16)), 32, 256));
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

constexpr uint32_t kRowLocalSize = 64;  // thread-per-row tactics with many rows

// How a tactic spreads rows over invocations.
enum class Algo {
  Row,        // one invocation per row
  Workgroup,  // one workgroup per row, combined in shared memory
  Subgroup,   // one subgroup per row, combined with subgroup arithmetic
};

// The dispatch of `shader` for the geometry under `algo`: workgroup size, group
// counts and the geometry push words (the caller appends its own words and spec).
Dispatch row_dispatch(const LayerContext& ctx, const std::string& shader, Algo algo, const RowGeometry& g) {
  Dispatch d;
  d.shader = ctx.shader(shader);
  d.push = g.push();
  switch (algo) {
    case Algo::Row: {
      // Few rows get small workgroups, so that they still spread over the device.
      const uint32_t want = std::clamp<uint32_t>(std::bit_ceil(std::max<uint32_t>(1, g.rows / 16)), 8, kRowLocalSize);
      const uint32_t wg = workgroup_size(ctx, want);
      d.spec = {{0, wg}};
      d.groups = linear_groups(g.rows, wg, ctx.device);
      break;
    }
    case Algo::Workgroup: {
      const uint32_t wg = cooperative_size(ctx, g.reduced);
      d.spec = {{0, wg}};
      d.groups = linear_groups(uint64_t(g.rows) * wg, wg, ctx.device);
      break;
    }
    case Algo::Subgroup: {
      const uint32_t sg = ctx.device.subgroup_size;
      const uint32_t wg = workgroup_size(ctx, std::max<uint32_t>(64, sg));
      const uint32_t rows_per_group = std::max<uint32_t>(1, wg / sg);
      d.spec = {{0, wg}, {5, rows_per_group}};
      d.groups = linear_groups(uint64_t((g.rows + rows_per_group - 1) / rows_per_group) * wg, wg, ctx.device);
      // Where the device can pin it, the subgroup size the plan was made for (full subgroups).
      if (ctx.device.subgroup_size_control) d.subgroup_size = sg;
      break;
    }
  }
  return d;
}

// Whether each invocation's loops over a row (`passes` times over its share) stay within the
// device's loop iteration limit (lavapipe's: a softmax over 300,000 elements by one invocation
// per row came out wrong there). The workgroup and subgroup forms have barriers.
bool row_loops_fit(const LayerContext& ctx, Algo algo, const RowGeometry& g, uint32_t passes, std::string& why_not) {
  // Invocations sharing a row: one, a workgroup, or a subgroup.
  const uint64_t sharing = algo == Algo::Row         ? 1
                           : algo == Algo::Workgroup ? cooperative_size(ctx, g.reduced)
                                                     : std::max<uint32_t>(1, ctx.device.subgroup_size);
  const uint64_t share = (g.reduced + sharing - 1) / sharing;
  return loops_fit_device(ctx, share * passes + 16, algo == Algo::Row ? 2 : 8, why_not);
}

bool subgroups_usable(const LayerContext& ctx, Algo algo, std::string& why_not) {
  if (algo != Algo::Subgroup) return true;
  if (ctx.device.subgroup_size == 0) {
    why_not = "the device reports no subgroup size (subgroup arithmetic unavailable)";
    return false;
  }
  if (workgroup_size(ctx, std::max<uint32_t>(64, ctx.device.subgroup_size)) < ctx.device.subgroup_size) {
    why_not = "the device's subgroups are larger than its workgroups may be";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Reduce* and ArgMax/ArgMin: shaders/reduce/row.comp and workgroup.comp.

// Operation codes of shaders/reduce/reduce_ops.glsl.
enum class ReduceOp : uint32_t {
  Sum = 0,
  Mean,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp,
  Prod,
  Max,
  Min,
  ArgMax,
  ArgMin,
};

std::optional<ReduceOp> reduce_op(const std::string& op) {
  static const std::pair<const char*, ReduceOp> kOps[] = {
      {"ReduceSum", ReduceOp::Sum},
      {"ReduceMean", ReduceOp::Mean},
      {"ReduceSumSquare", ReduceOp::SumSquare},
      {"ReduceL1", ReduceOp::L1},
      {"ReduceL2", ReduceOp::L2},
      {"ReduceLogSum", ReduceOp::LogSum},
      {"ReduceLogSumExp", ReduceOp::LogSumExp},
      {"ReduceProd", ReduceOp::Prod},
      {"ReduceMax", ReduceOp::Max},
      {"ReduceMin", ReduceOp::Min},
      {"ArgMax", ReduceOp::ArgMax},
      {"ArgMin", ReduceOp::ArgMin},
  };
  for (const auto& [name, code] : kOps)
    if (op == name) return code;
  return std::nullopt;
}

// The shader of `family` ("reduce", "softmax", "norm") for `algo`.
std::string algo_shader(const char* family, Algo algo) {
  switch (algo) {
    case Algo::Row:
      return std::string(family) + "/row";
    case Algo::Workgroup:
      return std::string(family) + "/workgroup";
    case Algo::Subgroup:
      return std::string(family) + "/subgroup";
  }
  return "";
}

std::optional<LayerPlan> plan_reduce(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  std::optional<ReduceOp> op = reduce_op(node.op_type);
  VKG_CHECK(op, node.describe() << ": not a reduction");
  const LayerTensor& x = ctx.input(0);
  // Bool is stored as 0/1 integers: its maximum and minimum (opset 20) are the integer ones.
  VKG_CHECK(x.dtype != DType::Bool || *op == ReduceOp::Max || *op == ReduceOp::Min,
            node.describe() << ": input type bool is not supported");
  const int64_t rank = int64_t(x.shape.size());
  const bool arg = *op == ReduceOp::ArgMax || *op == ReduceOp::ArgMin;

  std::vector<bool> mask;
  if (arg) {
    VKG_CHECK(rank > 0, node.describe() << ": the input must have rank >= 1");
    const int64_t axis = node.attr_int("axis", 0);
    mask = axes_mask(node, {axis}, rank);
    VKG_CHECK(x.shape[size_t(axis < 0 ? axis + rank : axis)] > 0,
              node.describe() << ": cannot take the index of an extreme over an empty axis " << axis);
  } else {
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) {
      const LayerTensor& axes_t = ctx.input(1);
      if (!axes_t.is_constant()) {
        why_not = "the axes input '" + axes_t.name + "' is not a build-time constant";
        return std::nullopt;
      }
      VKG_CHECK(
          is_integer(axes_t.constant->dtype()) && axes_t.constant->rank() <= 1,
          node.describe() << ": the axes input must be a 1-D integer tensor, got " << axes_t.constant->describe());
      axes = axes_t.constant->to_int64s();
    } else {
      axes = node.attr_ints("axes");
    }
    if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
      mask.assign(size_t(rank), false);  // the identity: a sum over single elements
      op = ReduceOp::Sum;
    } else {
      mask = axes_mask(node, axes, rank);
    }
  }
  const std::optional<RowGeometry> g = row_geometry(x.shape, mask, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 1, why_not)) return std::nullopt;

  LayerPlan plan;
  Dispatch d = row_dispatch(ctx, algo_shader("reduce", algo), algo, *g);
  d.spec.push_back({1, uint32_t(*op)});
  d.spec.push_back({2, x.storage == StorageType::I32 ? 1u : 0u});
  d.spec.push_back({3, node.attr_int("select_last_index", 0) != 0 ? 1u : 0u});
  d.spec.push_back({4, std::max<uint32_t>(1, g->red_runs)});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax: shaders/softmax/{row,workgroup,subgroup,vec4}.comp.

enum class SoftmaxKind : uint32_t { Softmax = 0, LogSoftmax, Hardmax };

// The rows of a Softmax, LogSoftmax or Hardmax layer.
std::optional<RowGeometry> softmax_rows(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(is_float_dtype(x.dtype) || x.dtype == DType::Float64,
            node.describe() << ": input type " << dtype_name(x.dtype) << " is not supported (floating types only)");
  const int64_t rank = int64_t(x.shape.size());
  std::vector<bool> mask(size_t(rank), false);
  if (rank > 0 && ctx.opset < 13) {  // coerced to 2-D at `axis`: the op runs over [axis, rank)
    int64_t axis = node.attr_int("axis", 1);
    VKG_CHECK(axis >= -rank && axis <= rank,
              node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
    mask = trailing_mask(axis < 0 ? axis + rank : axis, rank);
  } else if (rank > 0) {
    mask = axes_mask(node, {node.attr_int("axis", -1)}, rank);
  }
  return row_geometry(x.shape, mask, why_not);
}

SoftmaxKind softmax_kind(const Node& node) {
  return node.op_type == "Softmax"      ? SoftmaxKind::Softmax
         : node.op_type == "LogSoftmax" ? SoftmaxKind::LogSoftmax
                                        : SoftmaxKind::Hardmax;
}

std::optional<LayerPlan> plan_softmax(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const std::optional<RowGeometry> g = softmax_rows(ctx, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d = row_dispatch(ctx, algo_shader("softmax", algo), algo, *g);
  d.spec.push_back({1, uint32_t(softmax_kind(ctx.node))});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// softmax.vec4_* (shaders/softmax/vec4.comp): Softmax and LogSoftmax over rows whose elements are
// contiguous, one workgroup per row reading and writing vec4s (texels where the device has them):
// of cooperative_size() invocations (Algo::Workgroup), or of the device's subgroup size, at least
// 8 (Algo::Subgroup: the tree's barriers cost a workgroup of one subgroup next to nothing; on
// lavapipe PP-OCRv4 rec's 40 rows of 6625, 1.48 ms with 256 invocations, 0.45 ms with 8). Any
// size computes the same: the size is not pinned.
std::optional<LayerPlan> plan_softmax_vec4(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const std::optional<RowGeometry> g = softmax_rows(ctx, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;
  if (g->red_runs > 1 || (g->red_runs == 1 && g->red_strides[kMaxRuns - 1] != 1)) {
    why_not = "serves rows of contiguous elements only (the softmax axis is not innermost)";
    return std::nullopt;
  }
  const uint32_t sg = ctx.device.subgroup_size;
  const uint32_t wg =
      algo == Algo::Subgroup ? workgroup_size(ctx, std::max<uint32_t>(8, sg)) : cooperative_size(ctx, g->reduced);
  LayerPlan plan;
  Dispatch d;
  d.shader = ctx.texel_shader("softmax/vec4", uint64_t(ctx.input(0).size()));
  d.push = g->push();
  d.spec = {{0, wg}, {1, uint32_t(softmax_kind(ctx.node))}};
  d.groups = linear_groups(uint64_t(g->rows) * wg, wg, ctx.device);
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// ---------------------------------------------------------------------------
// LayerNormalization, InstanceNormalization, MeanVarianceNormalization,
// LpNormalization: shaders/norm/{row,workgroup}.comp.

// Operation codes of shaders/norm/norm_ops.glsl.
enum class NormOp : uint32_t {
  Layer = 0,     // (x - mean) * inv_std * scale[r] + bias[r]
  Instance,      // (x - mean) * inv_std * scale[c] + bias[c]
  MeanVariance,  // (x - mean) / (std + 1e-9)
  MeanOnly,      // x - mean (MeanVarianceNormalization-1, normalize_variance = 0)
  L1,            // x / sum |x|
  L2,            // x / sqrt(sum x^2)
  Rms,           // x * inv_rms * scale[r]
  Group,         // (x - mean) * inv_std * scale[c] + bias[c], over (sample, group) rows
};

// Bindings of the norm shaders: 0 X, 1 Y, 2 scale, 3 bias, 4 Mean, 5 InvStdDev.
struct NormLayer {
  NormOp op = NormOp::Layer;
  std::vector<bool> mask;
  float epsilon = 0;
  std::optional<BindingRef> scale, bias, mean, inv_std;
  uint32_t scale_period = 1, bias_period = 1, channels = 1;
  Shape view;  // the shape the mask applies to, when not the input's (GroupNormalization)
};

// A per-element LayerNormalization parameter (Scale or B) of shape `t`, broadcast
// (numpy, unidirectional) to `normalized`: a constant is expanded to the whole row;
// a runtime tensor is bound as is when it is a suffix of the row (read at r % period).
std::optional<BindingRef> bind_row_parameter(const LayerContext& ctx, LayerPlan& plan, size_t i,
                                             const Shape& normalized, uint32_t& period, std::string& why_not) {
  const LayerTensor& t = ctx.input(i);
  const char* what = i == 1 ? "Scale" : "B";
  bool fits = t.shape.size() <= normalized.size();
  for (size_t d = 0; fits && d < t.shape.size(); ++d) {
    const int64_t nd = normalized[normalized.size() - t.shape.size() + d];
    fits = t.shape[d] == nd || t.shape[d] == 1;
  }
  VKG_CHECK(fits, ctx.node.describe() << ": " << what << " of shape " << shape_to_string(t.shape)
                                      << " cannot be broadcast to " << shape_to_string(normalized));
  const int64_t row = num_elements(normalized);
  if (t.is_constant()) {
    Tensor full(DType::Float32, normalized);
    const std::vector<double> values = t.constant->to_doubles();
    const std::vector<int64_t> strides = broadcast_strides(t.shape, normalized);
    const std::vector<int64_t> dims = normalized;
    std::vector<int64_t> index(dims.size(), 0);
    float* out = full.data<float>();
    for (int64_t e = 0; e < row; ++e) {
      int64_t src = 0;
      for (size_t d = 0; d < dims.size(); ++d) src += index[d] * strides[d];
      out[e] = float(values[size_t(src)]);
      for (size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    period = uint32_t(std::max<int64_t>(row, 1));
    return add_weight(plan, to_storage(full, t.storage, ctx.node.describe() + " input '" + t.name + "'"));
  }
  // A runtime parameter: its leading 1s dropped, it must equal the row's trailing dims.
  size_t lead = 0;
  while (lead < t.shape.size() && t.shape[lead] == 1) ++lead;
  const Shape core(t.shape.begin() + ptrdiff_t(lead), t.shape.end());
  if (!std::equal(core.begin(), core.end(), normalized.end() - ptrdiff_t(core.size()))) {
    why_not = std::string(what) + " is a runtime tensor of shape " + shape_to_string(t.shape) +
              " that broadcasts inside the row " + shape_to_string(normalized);
    return std::nullopt;
  }
  period = uint32_t(std::max<int64_t>(num_elements(core), 1));
  return BindingRef::input(uint32_t(i));
}

std::optional<NormLayer> layer_norm(const LayerContext& ctx, LayerPlan& plan, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  int64_t axis = node.attr_int("axis", -1);
  VKG_CHECK(rank > 0 && axis >= -rank && axis < rank,
            node.describe() << ": axis " << axis << " is out of range for an input of rank " << rank);
  if (axis < 0) axis += rank;
  const int64_t stash = node.attr_int("stash_type", 1);
  VKG_CHECK(stash == 1 || stash == 10 || stash == 11 || stash == 16,
            node.describe() << ": stash_type " << stash << " is not a floating type");
  NormLayer n;
  n.op = node.op_type == "RMSNormalization" ? NormOp::Rms : NormOp::Layer;
  n.mask = trailing_mask(axis, rank);
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  n.scale = bind_row_parameter(ctx, plan, 1, normalized, n.scale_period, why_not);
  if (!n.scale) return std::nullopt;
  if (n.op == NormOp::Layer && ctx.has_input(2)) {
    n.bias = bind_row_parameter(ctx, plan, 2, normalized, n.bias_period, why_not);
    if (!n.bias) return std::nullopt;
  }
  if (ctx.outputs.size() > 1 && ctx.outputs[1].present()) n.mean = BindingRef::output(1);
  if (ctx.outputs.size() > 2 && ctx.outputs[2].present()) n.inv_std = BindingRef::output(2);
  return n;
}

// GroupNormalization: rows are (sample, group) blocks, contiguous in NCHW. Scale and bias
// are per channel (opset 21) or per group (18: expanded to channels when constant).
std::optional<NormLayer> group_norm(const LayerContext& ctx, LayerPlan& plan, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(x.shape.size() >= 2, node.describe()
                                     << ": the input must have rank >= 2 (N x C x ...), got rank " << x.shape.size());
  const int64_t channels = x.shape[1], groups = node.attr_int("num_groups");
  VKG_CHECK(groups > 0 && channels % groups == 0,
            node.describe() << ": num_groups " << groups << " does not divide the " << channels << " channels");
  const int64_t per_param = ctx.opset >= 21 ? 1 : channels / groups;
  const int64_t spatial = x.size() / std::max<int64_t>(x.shape[0] * channels, 1);
  NormLayer n;
  n.op = NormOp::Group;
  n.view = {x.shape[0], groups, channels / groups * spatial};
  n.mask = {false, false, true};
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  n.scale_period = uint32_t(std::max<int64_t>(spatial, 1));
  n.bias_period = uint32_t(channels / groups);
  n.channels = uint32_t(groups);
  for (size_t i : {size_t(1), size_t(2)}) {
    const LayerTensor& t = ctx.input(i);
    VKG_CHECK(t.size() * per_param == channels,
              node.describe() << ": " << (i == 1 ? "scale" : "bias") << " must have " << channels / per_param
                              << " elements (one per " << (per_param == 1 ? "channel" : "group") << ")");
    std::optional<BindingRef> ref;
    if (per_param == 1) {
      ref = bind_input(ctx, plan, i);
    } else if (!t.is_constant()) {
      why_not = "a per-group scale or bias (GroupNormalization-18) must be a build-time constant";
      return std::nullopt;
    } else {
      const std::vector<double> values = t.constant->to_doubles();
      Tensor full(DType::Float32, {channels});
      for (int64_t c = 0; c < channels; ++c) full.data<float>()[c] = float(values[size_t(c / per_param)]);
      ref = add_weight(plan, to_storage(full, t.storage, node.describe() + " input '" + t.name + "'"));
    }
    (i == 1 ? n.scale : n.bias) = ref;
  }
  return n;
}

std::optional<NormLayer> instance_norm(const LayerContext& ctx, LayerPlan& plan) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(x.shape.size() >= 2, node.describe()
                                     << ": the input must have rank >= 2 (N x C x ...), got rank " << x.shape.size());
  const int64_t channels = x.shape[1];
  VKG_CHECK(ctx.input(1).size() == channels && ctx.input(2).size() == channels,
            node.describe() << ": scale and B must have " << channels << " elements (the channels of the input)");
  NormLayer n;
  n.op = NormOp::Instance;
  n.mask = trailing_mask(2, int64_t(x.shape.size()));
  n.epsilon = node.attr_float("epsilon", 1e-5f);
  n.scale = bind_input(ctx, plan, 1);
  n.bias = bind_input(ctx, plan, 2);
  n.channels = uint32_t(std::max<int64_t>(channels, 1));
  return n;
}

std::optional<NormLayer> mean_variance_norm(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t rank = int64_t(x.shape.size());
  NormLayer n;
  n.op = NormOp::MeanVariance;
  if (ctx.opset < 9) {
    VKG_CHECK(rank >= 2, node.describe() << ": the input must have rank >= 2");
    n.mask = trailing_mask(node.attr_int("across_channels", 0) != 0 ? 1 : 2, rank);
    if (node.attr_int("normalize_variance", 1) == 0) n.op = NormOp::MeanOnly;
  } else {
    n.mask = axes_mask(node, node.attr_ints("axes", {0, 2, 3}), rank);
  }
  return n;
}

std::optional<NormLayer> lp_norm(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const int64_t p = node.attr_int("p", 2);
  VKG_CHECK(p == 1 || p == 2, node.describe() << ": p must be 1 or 2, got " << p);
  VKG_CHECK(!x.shape.empty(), node.describe() << ": the input must have rank >= 1");
  NormLayer n;
  n.op = p == 1 ? NormOp::L1 : NormOp::L2;
  n.mask = axes_mask(node, {node.attr_int("axis", -1)}, int64_t(x.shape.size()));
  return n;
}

std::optional<LayerPlan> plan_norm(const LayerContext& ctx, std::string& why_not, Algo algo) {
  if (!layer_supported(ctx, why_not) || !subgroups_usable(ctx, algo, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(is_float_dtype(x.dtype) || x.dtype == DType::Float64,
            node.describe() << ": input type " << dtype_name(x.dtype) << " is not supported (floating types only)");
  LayerPlan plan;
  std::optional<NormLayer> n;
  if (node.op_type == "LayerNormalization" || node.op_type == "RMSNormalization") {
    n = layer_norm(ctx, plan, why_not);
  } else if (node.op_type == "GroupNormalization") {
    n = group_norm(ctx, plan, why_not);
  } else if (node.op_type == "InstanceNormalization") {
    n = instance_norm(ctx, plan);
  } else if (node.op_type == "MeanVarianceNormalization") {
    n = mean_variance_norm(ctx);
  } else {
    n = lp_norm(ctx);
  }
  if (!n) return std::nullopt;
  const std::optional<RowGeometry> g = row_geometry(n->view.empty() ? x.shape : n->view, n->mask, why_not);
  if (!g || !row_loops_fit(ctx, algo, *g, 3, why_not)) return std::nullopt;

  // Unused bindings point at a small scratch buffer the shader never touches.
  const bool need_dummy = !n->scale || !n->bias || !n->mean || !n->inv_std;
  if (need_dummy) plan.scratch_bytes.push_back(16);
  const BindingRef dummy = BindingRef::scratch(0);

  Dispatch d = row_dispatch(ctx, algo_shader("norm", algo), algo, *g);
  d.spec.push_back({1, uint32_t(n->op)});
  d.spec.push_back({2, n->bias ? 1u : 0u});
  d.spec.push_back({3, (n->mean ? 1u : 0u) | (n->inv_std ? 2u : 0u)});
  d.spec.push_back({4, std::max<uint32_t>(1, g->red_runs)});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0),   n->scale.value_or(dummy),
                n->bias.value_or(dummy),  n->mean.value_or(dummy), n->inv_std.value_or(dummy)};
  d.push.push_back(float_bits(n->epsilon));
  d.push.push_back(n->scale_period);
  d.push.push_back(n->bias_period);
  d.push.push_back(n->channels);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// The rows CumSum and TopK scan along one axis of `shape`: outer * inner rows of `len`
// elements, `inner` apart (the axis is checked as every reduction's axes are).
struct AxisRows {
  int64_t rows = 1, len = 1, inner = 1;
};

AxisRows axis_rows(const Node& node, const Shape& shape, int64_t axis) {
  const std::vector<bool> mask = axes_mask(node, {axis}, int64_t(shape.size()));
  AxisRows r;
  int64_t outer = 1;
  bool after = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (mask[d]) {
      r.len = shape[d];
      after = true;
    } else {
      (after ? r.inner : outer) *= shape[d];
    }
  }
  r.rows = outer * r.inner;
  return r;
}

// One invocation per row (shaders/reduce/{cumsum,topk}.comp): push constants rows, len,
// inner; the caller adds its specialization constants, bindings and further push words.
Dispatch axis_rows_dispatch(const LayerContext& ctx, const std::string& shader, const AxisRows& r) {
  Dispatch d;
  d.shader = ctx.shader(shader);
  const uint32_t wg = workgroup_size(ctx, 64);
  d.spec = {{0, wg}};
  d.push = {uint32_t(r.rows), uint32_t(r.len), uint32_t(std::max<int64_t>(r.inner, 1))};
  d.groups = linear_groups(uint64_t(r.rows), wg, ctx.device);
  return d;
}

// CumSum: one invocation per row along the axis, whose value (input 1) must be a
// build-time constant.
std::optional<LayerPlan> plan_cumsum(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& axis_t = ctx.input(1);
  if (!axis_t.is_constant()) {
    why_not = "the axis input '" + axis_t.name + "' is not a build-time constant";
    return std::nullopt;
  }
  const std::vector<int64_t> given = axis_t.constant->to_int64s();
  VKG_CHECK(!x.shape.empty() && given.size() == 1,
            node.describe() << ": axis must be one value in [-rank, rank) for an input of rank " << x.shape.size());
  const AxisRows rows = axis_rows(node, x.shape, given[0]);
  // An invocation scans a whole row (wrong past lavapipe's loop iteration limit at 300,000).
  if (!loops_fit_device(ctx, uint64_t(rows.len), 2, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d = axis_rows_dispatch(ctx, "reduce/cumsum", rows);
  d.spec.insert(d.spec.end(), {{1, x.storage == StorageType::I32 ? 1u : 0u},
                               {2, node.attr_int("exclusive", 0) != 0 ? 1u : 0u},
                               {3, node.attr_int("reverse", 0) != 0 ? 1u : 0u}});
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// TopK: one invocation per row along the axis, K selection passes; K (input 1) must be a
// build-time constant. Sorted output only.
std::optional<LayerPlan> plan_topk(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& k_t = ctx.input(1);
  if (!k_t.is_constant()) {
    why_not = "K ('" + k_t.name + "') is not a build-time constant";
    return std::nullopt;
  }
  if (node.attr_int("sorted", 1) == 0) {
    why_not = "unsorted output (sorted=0) is not supported";
    return std::nullopt;
  }
  VKG_CHECK(!x.shape.empty(), node.describe() << ": the input must have rank >= 1");
  const AxisRows rows = axis_rows(node, x.shape, node.attr_int("axis", -1));
  const std::vector<int64_t> ks = k_t.constant->to_int64s();
  VKG_CHECK(ks.size() == 1 && ks[0] >= 0 && ks[0] <= rows.len,
            node.describe() << ": K must be one value in [0, " << rows.len << "]");
  // An invocation selects K times over its row (wrong past lavapipe's loop iteration limit).
  if (!loops_fit_device(ctx, uint64_t(rows.len) * uint64_t(std::max<int64_t>(ks[0], 1)), 2, why_not))
    return std::nullopt;
  LayerPlan plan;
  const uint64_t out_elems = uint64_t(rows.rows * ks[0]);
  auto output_or_scratch = [&](size_t i) {
    if (i < ctx.outputs.size() && ctx.outputs[i].present()) return BindingRef::output(uint32_t(i));
    plan.scratch_bytes.push_back(std::max<uint64_t>(16, out_elems * 4));
    return BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1));
  };
  Dispatch d = axis_rows_dispatch(ctx, "reduce/topk", rows);
  d.spec.insert(d.spec.end(),
                {{1, x.storage == StorageType::I32 ? 1u : 0u}, {2, node.attr_int("largest", 1) != 0 ? 1u : 0u}});
  d.bindings = {bind_input(ctx, plan, 0), output_or_scratch(0), output_or_scratch(1)};
  d.push.push_back(uint32_t(ks[0]));
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// LRN: shaders/norm/lrn.comp, one invocation per element summing its channel window.
std::optional<LayerPlan> plan_lrn(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = std::string("LRN does not take ") + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() >= 2,
            node.describe() << ": the input must have rank >= 2 (N x C x ...), got " << shape_to_string(x.shape));
  const int64_t size = node.attr_int("size");
  VKG_CHECK(size >= 1, node.describe() << ": size must be at least 1, got " << size);
  const int64_t channels = x.shape[1];
  const int64_t inner = num_elements(Shape(x.shape.begin() + 2, x.shape.end()));
  const window::ChannelWindow channel_window = window::lrn_channel_window(size);
  const auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  Dispatch d;
  d.shader = ctx.shader("norm/lrn");
  const uint32_t wg = workgroup_size(ctx, 64);
  d.spec = {{0, wg}};
  LayerPlan plan;
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  d.push = {uint32_t(x.size()),
            uint32_t(std::max<int64_t>(channels, 1)),
            uint32_t(std::max<int64_t>(inner, 1)),
            uint32_t(channel_window.before),
            uint32_t(channel_window.after),
            bits(float(double(node.attr_float("alpha", 1e-4f)) / double(size))),
            bits(node.attr_float("beta", 0.75f)),
            bits(node.attr_float("bias", 1.0f))};
  d.groups = linear_groups(uint64_t(x.size()), wg, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

template <std::optional<LayerPlan> (*Plan)(const LayerContext&, std::string&, Algo), Algo A>
std::optional<LayerPlan> planner(const LayerContext& ctx, std::string& why_not) {
  return Plan(ctx, why_not, A);
}

}  // namespace

void register_reduce_tactics(TacticRegistry& r) {
  using enum Arith;
  const std::vector<std::string> reduce_ops = {"ReduceL1",  "ReduceL2",        "ReduceLogSum", "ReduceLogSumExp",
                                               "ReduceMax", "ReduceMean",      "ReduceMin",    "ReduceProd",
                                               "ReduceSum", "ReduceSumSquare", "ArgMax",       "ArgMin"};
  const std::vector<std::string> softmax_ops = {"Softmax", "LogSoftmax", "Hardmax"};
  const std::vector<std::string> layer_norm_ops = {"LayerNormalization", "RMSNormalization"};
  const std::vector<std::string> norm_ops = {"InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization",
                                             "LpNormalization"};

  // Reductions mostly have many short rows (pooling-like means, arg-extremes
  // over classes): thread-per-row first. Softmax and normalization rows are
  // long: a subgroup per row first.
  r.add_variants("reduce.row", reduce_ops, 0, {F32, F16, F16Acc32}, planner<plan_reduce, Algo::Row>);
  r.add_variants("reduce.subgroup", reduce_ops, 1, {F32, F16, F16Acc32}, planner<plan_reduce, Algo::Subgroup>);
  r.add_variants("reduce.workgroup", reduce_ops, 2, {F32, F16, F16Acc32}, planner<plan_reduce, Algo::Workgroup>);
  r.add_variants("softmax.vec4_sg", {"Softmax", "LogSoftmax"}, 0, {F32, F16Acc32},
                 planner<plan_softmax_vec4, Algo::Subgroup>);
  r.add_variants("softmax.vec4_wg", {"Softmax", "LogSoftmax"}, 1, {F32, F16Acc32},
                 planner<plan_softmax_vec4, Algo::Workgroup>);
  r.add_variants("softmax.subgroup", softmax_ops, 0, {F32, F16, F16Acc32}, planner<plan_softmax, Algo::Subgroup>);
  r.add_variants("softmax.row", softmax_ops, 1, {F32, F16, F16Acc32}, planner<plan_softmax, Algo::Row>);
  r.add_variants("softmax.workgroup", softmax_ops, 2, {F32, F16, F16Acc32}, planner<plan_softmax, Algo::Workgroup>);
  r.add_variants("layernorm.subgroup", layer_norm_ops, 0, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Subgroup>);
  r.add_variants("layernorm.row", layer_norm_ops, 1, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Row>);
  r.add_variants("layernorm.workgroup", layer_norm_ops, 2, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Workgroup>);
  r.add_variants("cumsum.scalar", {"CumSum"}, 0, {F32, F16Acc32}, plan_cumsum);
  r.add_variants("lrn.window", {"LRN"}, 0, {F32, F16Acc32}, plan_lrn);
  r.add_variants("topk.select", {"TopK"}, 0, {F32, F16Acc32}, plan_topk);
  r.add_variants("norm.subgroup", norm_ops, 0, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Subgroup>);
  r.add_variants("norm.row", norm_ops, 1, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Row>);
  r.add_variants("norm.workgroup", norm_ops, 2, {F32, F16, F16Acc32}, planner<plan_norm, Algo::Workgroup>);
}

}  // namespace vkg
