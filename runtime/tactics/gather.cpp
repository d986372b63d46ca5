// Vulkan tactics of the gather family (see runtime/engine/tactic.h): ops that
// move elements by index (Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND), Resize/Upsample, and the generators Range and
// ConstantOfShape when the builder could not fold them. Shaders: shaders/gather/.
//
// Indices are int32 on the device. ONNX makes an out-of-range index an error;
// the shaders clamp every index into its axis (after wrapping negative ones) so
// that no access leaves its buffer, and the reference backend reports the error.
// Scatters with duplicate indices apply their updates in the reference's order
// (one invocation owns every update that can reach an output element), so they
// match exactly even with reduction "none".
//
// NonZero has no tactic: its output shape depends on the data, which a built
// engine cannot have; the builder names it among the unsupported ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/core/index_tuples.h"
#include "runtime/core/resize_sampling.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg {

namespace {

// One dispatch of `invocations` one-dimensional invocations (vkg_linear_index()).
Dispatch linear_dispatch(const LayerContext& ctx, const std::string& shader, std::vector<BindingRef> bindings,
                         std::vector<uint32_t> push, uint64_t invocations, std::vector<SpecValue> spec = {}) {
  Dispatch d;
  d.shader = ctx.shader(shader);
  d.spec = {{0, kLocalSize}};
  d.spec.insert(d.spec.end(), spec.begin(), spec.end());
  d.bindings = std::move(bindings);
  d.push = std::move(push);
  d.groups = linear_groups(invocations, kLocalSize, ctx.device);
  return d;
}

// An int32 weight holding `values` (one zero when empty: every binding needs a buffer).
BindingRef add_int_table(LayerPlan& plan, std::vector<int32_t> values) {
  if (values.empty()) values.push_back(0);
  return add_weight(plan, Tensor::from_vector<int32_t>({int64_t(values.size())}, values));
}

BindingRef add_float_table(LayerPlan& plan, std::vector<float> values) {
  if (values.empty()) values.push_back(0.0f);
  return add_weight(plan, Tensor::from_vector<float>({int64_t(values.size())}, values));
}

// Every tensor of the layer has at most 2^31 - 1 elements (32-bit indexing in the shaders).
bool sizes_fit(const LayerContext& ctx, std::string& why) {
  auto fits = [&](const LayerTensor& t) {
    if (!t.present() || t.size() <= std::numeric_limits<int32_t>::max()) return true;
    why = "tensor '" + t.name + "' has more than 2^31 - 1 elements";
    return false;
  };
  return std::all_of(ctx.inputs.begin(), ctx.inputs.end(), fits) &&
         std::all_of(ctx.outputs.begin(), ctx.outputs.end(), fits);
}

// Whether a data-movement shader of ctx.arith moves `t`: the f32 variant moves
// 32-bit words (float32 or int32 storage), the f16 variant float16 storage.
bool movable(const LayerContext& ctx, const LayerTensor& t, std::string& why) {
  const bool half = ctx.arith != Arith::F32;
  if (half == (t.storage == StorageType::F16)) return true;
  why = std::string(arith_name(ctx.arith)) + " tactics cannot move '" + t.name + "' (" + dtype_name(t.dtype) +
        ", stored as " + storage_type_name(t.storage) + ")";
  if (half) why += ": fp16 tactics serve float data only";
  return false;
}

// Checks shared by every tactic: an fp16 tactic needs float data, and all sizes fit 32-bit indexing.
bool common_checks(const LayerContext& ctx, const LayerTensor& data, std::string& why) {
  return movable(ctx, data, why) && sizes_fit(ctx, why);
}

int64_t normalized_axis(const LayerContext& ctx, int64_t axis, int64_t rank) {
  VKG_CHECK(axis >= -rank && axis < rank, ctx.node.describe()
                                              << ": axis " << axis << " is out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

// ---------------------------------------------------------------------------
// Gather, GatherElements, GatherND

std::optional<LayerPlan> plan_gather(const LayerContext& ctx, std::string& why, uint32_t vec) {
  const LayerTensor& data = ctx.input(0);
  const LayerTensor& indices = ctx.input(1);
  const LayerTensor& out = ctx.output(0);
  if (!common_checks(ctx, data, why)) return std::nullopt;
  const auto rank = int64_t(data.shape.size());
  VKG_CHECK(rank >= 1, ctx.node.describe() << ": data must have rank >= 1");
  const int64_t axis = normalized_axis(ctx, ctx.node.attr_int("axis", 0), rank);
  const int64_t dim = data.shape[size_t(axis)];
  const int64_t inner = num_elements(data.shape, size_t(axis) + 1, data.shape.size());
  const int64_t count = indices.size();
  if (dim == 0 && out.size() > 0) {
    why = "data is empty along the axis, so every index is out of range";
    return std::nullopt;
  }
  if (inner % vec != 0) {
    why = "the inner size " + std::to_string(inner) + " is not a multiple of " + std::to_string(vec);
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef d = bind_input(ctx, plan, 0), i = bind_input(ctx, plan, 1);
  const int64_t n = out.size() / vec;
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/gather", {d, i, BindingRef::output(0)},
                                            {u32(n), u32(std::max<int64_t>(inner / vec, 1)),
                                             u32(std::max<int64_t>(count, 1)), u32(std::max<int64_t>(dim, 1))},
                                            uint64_t(n), {{1, vec}}));
  return plan;
}

std::optional<LayerPlan> plan_gather_elements(const LayerContext& ctx, std::string& why) {
  const LayerTensor& data = ctx.input(0);
  const LayerTensor& indices = ctx.input(1);
  if (!common_checks(ctx, data, why)) return std::nullopt;
  const auto rank = int64_t(data.shape.size());
  VKG_CHECK(rank >= 1 && int64_t(indices.shape.size()) == rank,
            ctx.node.describe() << ": data and indices must have the same rank >= 1");
  const int64_t axis = normalized_axis(ctx, ctx.node.attr_int("axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    VKG_CHECK(d == axis || indices.shape[size_t(d)] <= data.shape[size_t(d)],
              ctx.node.describe() << ": indices " << shape_to_string(indices.shape) << " do not fit data "
                                  << shape_to_string(data.shape) << " outside axis " << axis);
  const int64_t dim = data.shape[size_t(axis)];
  if (dim == 0 && indices.size() > 0) {
    why = "data is empty along the axis, so every index is out of range";
    return std::nullopt;
  }
  std::vector<int32_t> meta;
  for (int64_t s : indices.shape) meta.push_back(int32_t(s));
  for (int64_t s : contiguous_strides(data.shape)) meta.push_back(int32_t(s));
  LayerPlan plan;
  const BindingRef d = bind_input(ctx, plan, 0), i = bind_input(ctx, plan, 1);
  const BindingRef m = add_int_table(plan, std::move(meta));
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/gather_elements", {d, i, BindingRef::output(0), m},
                                            {u32(indices.size()), u32(rank), u32(axis), u32(std::max<int64_t>(dim, 1))},
                                            uint64_t(indices.size())));
  return plan;
}

// The index tuples of GatherND and ScatterND with the table their shaders read.
struct NdIndexTable : IndexTuples {
  std::vector<int32_t> meta;  // [depth] sizes of the indexed axes, [depth] their strides
  bool empty_axis = false;    // an indexed axis has size 0
};

NdIndexTable nd_index_table(const LayerContext& ctx, const Shape& data, const Shape& indices, int64_t batch_dims) {
  NdIndexTable nd;
  static_cast<IndexTuples&>(nd) = index_tuples(ctx.node, data, indices, batch_dims);
  const std::vector<int64_t> strides = contiguous_strides(data);
  for (int64_t j = 0; j < nd.depth; ++j) {
    const int64_t size = data[size_t(batch_dims + j)];
    nd.meta.push_back(int32_t(std::max<int64_t>(size, 1)));
    nd.empty_axis = nd.empty_axis || size == 0;
  }
  for (int64_t j = 0; j < nd.depth; ++j) nd.meta.push_back(int32_t(strides[size_t(batch_dims + j)]));
  return nd;
}

std::optional<LayerPlan> plan_gather_nd(const LayerContext& ctx, std::string& why) {
  const LayerTensor& data = ctx.input(0);
  const LayerTensor& indices = ctx.input(1);
  const LayerTensor& out = ctx.output(0);
  if (!common_checks(ctx, data, why)) return std::nullopt;
  const int64_t batch_dims = ctx.node.attr_int("batch_dims", 0);
  VKG_CHECK(batch_dims >= 0 && batch_dims < int64_t(std::min(data.shape.size(), indices.shape.size())),
            ctx.node.describe() << ": batch_dims " << batch_dims << " is out of range");
  for (int64_t d = 0; d < batch_dims; ++d)
    VKG_CHECK(data.shape[size_t(d)] == indices.shape[size_t(d)],
              ctx.node.describe() << ": batch dimensions of data and indices differ");
  NdIndexTable nd = nd_index_table(ctx, data.shape, indices.shape, batch_dims);
  if (nd.empty_axis && out.size() > 0) {
    why = "data is empty along an indexed axis, so every index is out of range";
    return std::nullopt;
  }
  const int64_t tuples = nd.tuple_count;
  const int64_t batch_size = num_elements(data.shape, size_t(batch_dims), data.shape.size());
  LayerPlan plan;
  const BindingRef d = bind_input(ctx, plan, 0), i = bind_input(ctx, plan, 1);
  const BindingRef m = add_int_table(plan, std::move(nd.meta));
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/gather_nd", {d, i, BindingRef::output(0), m},
                                            {u32(out.size()), u32(std::max<int64_t>(nd.slice, 1)),
                                             u32(std::max<int64_t>(tuples, 1)), u32(batch_size), u32(nd.depth)},
                                            uint64_t(out.size())));
  return plan;
}

// ---------------------------------------------------------------------------
// Scatter, ScatterElements, ScatterND: copy data to the output, then apply the updates.

// kReduction of shaders/gather/scatter.glsl.
uint32_t scatter_reduction(const LayerContext& ctx) {
  const std::string r = ctx.node.attr_string("reduction", "none");
  if (r == "none") return 0;
  if (r == "add") return 1;
  if (r == "mul") return 2;
  if (r == "max") return 3;
  if (r == "min") return 4;
  VKG_THROW(ctx.node.describe() << ": unknown reduction '" << r << "'");
}

// kKind of shaders/gather/scatter.glsl.
uint32_t scatter_kind(const LayerTensor& data) {
  if (data.dtype == DType::Bool) return 2;
  return data.storage == StorageType::I32 ? 1 : 0;
}

// The first dispatch of a scatter: out = data.
Dispatch copy_dispatch(const LayerContext& ctx, BindingRef from, int64_t n) {
  return linear_dispatch(ctx, "gather/copy", {from, BindingRef::output(0)}, {u32(n)}, uint64_t(n / 4 + n % 4),
                         {{1, 4}});
}

std::optional<LayerPlan> plan_scatter_elements(const LayerContext& ctx, std::string& why) {
  const LayerTensor& data = ctx.input(0);
  const LayerTensor& indices = ctx.input(1);
  const LayerTensor& updates = ctx.input(2);
  if (!common_checks(ctx, data, why)) return std::nullopt;
  const auto rank = int64_t(data.shape.size());
  VKG_CHECK(rank >= 1 && int64_t(indices.shape.size()) == rank && updates.shape == indices.shape,
            ctx.node.describe() << ": data, indices and updates must have the same rank >= 1, updates the shape "
                                   "of indices");
  const int64_t axis = normalized_axis(ctx, ctx.node.attr_int("axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    VKG_CHECK(d == axis || indices.shape[size_t(d)] <= data.shape[size_t(d)],
              ctx.node.describe() << ": indices " << shape_to_string(indices.shape) << " do not fit data "
                                  << shape_to_string(data.shape) << " outside axis " << axis);
  const uint32_t reduction = scatter_reduction(ctx);
  const int64_t dim = data.shape[size_t(axis)];
  if (dim == 0 && indices.size() > 0) {
    why = "data is empty along the axis, so every index is out of range";
    return std::nullopt;
  }
  const int64_t count = indices.shape[size_t(axis)];
  const int64_t lines = count == 0 ? 0 : indices.size() / count;
  std::vector<int32_t> meta;
  for (int64_t s : indices.shape) meta.push_back(int32_t(s));
  for (int64_t s : contiguous_strides(data.shape)) meta.push_back(int32_t(s));

  LayerPlan plan;
  const BindingRef d = bind_input(ctx, plan, 0), i = bind_input(ctx, plan, 1), u = bind_input(ctx, plan, 2);
  const BindingRef m = add_int_table(plan, std::move(meta));
  plan.dispatches.push_back(copy_dispatch(ctx, d, data.size()));
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/scatter_elements", {BindingRef::output(0), i, u, m},
                                            {u32(lines), u32(rank), u32(axis), u32(std::max<int64_t>(dim, 1))},
                                            uint64_t(lines), {{1, reduction}, {2, scatter_kind(data)}}));
  return plan;
}

std::optional<LayerPlan> plan_scatter_nd(const LayerContext& ctx, std::string& why) {
  const LayerTensor& data = ctx.input(0);
  const LayerTensor& indices = ctx.input(1);
  const LayerTensor& updates = ctx.input(2);
  if (!common_checks(ctx, data, why)) return std::nullopt;
  NdIndexTable nd = nd_index_table(ctx, data.shape, indices.shape, 0);
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + nd.depth, data.shape.end());
  VKG_CHECK(updates.shape == expected, ctx.node.describe() << ": updates " << shape_to_string(updates.shape)
                                                           << " should be " << shape_to_string(expected));
  const uint32_t reduction = scatter_reduction(ctx);
  const int64_t tuples = nd.tuple_count;
  if (nd.empty_axis && tuples > 0 && nd.slice > 0) {
    why = "data is empty along an indexed axis, so every index is out of range";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef d = bind_input(ctx, plan, 0), i = bind_input(ctx, plan, 1), u = bind_input(ctx, plan, 2);
  const BindingRef m = add_int_table(plan, std::move(nd.meta));
  plan.dispatches.push_back(copy_dispatch(ctx, d, data.size()));
  const int64_t slice = tuples == 0 ? 0 : nd.slice;
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/scatter_nd", {BindingRef::output(0), i, u, m},
                                            {u32(slice), u32(tuples), u32(nd.depth)}, uint64_t(slice),
                                            {{1, reduction}, {2, scatter_kind(data)}}));
  return plan;
}

// ---------------------------------------------------------------------------
// Resize and Upsample. The coordinate rules mirror the reference
// (runtime/reference/ops/resize.cpp); here they fill per-axis tap tables at
// build time, so one shader serves every mode.

using resize::AxisTaps;
using resize::Tap;

// A Resize/Upsample layer resolved at build time.
struct ResizeLayer {
  resize::Params params;
  Shape in_shape;
  std::vector<std::vector<AxisTaps>> taps;  // [axis][output coordinate]; empty when the output is empty
};

// Resize/Upsample parameters from the layer's inputs (roi, scales, sizes: given when present
// and not empty).
std::optional<resize::Params> node_resize_params(const LayerContext& ctx, std::string& why) {
  return resize::node_params(
      ctx.node, ctx.opset, ctx.input(0).shape, ctx.output(0).shape,
      [&](size_t i) {
        const bool given = ctx.has_input(i) && ctx.inputs[i].size() > 0;
        return resize::NodeInput{given, given && ctx.input(i).is_constant() ? ctx.input(i).constant : nullptr};
      },
      why);
}

// Resolves a Resize/Upsample layer; nullopt (why filled) when it cannot run on Vulkan.
std::optional<ResizeLayer> resize_layer(const LayerContext& ctx, std::string& why) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& out = ctx.output(0);
  if (!common_checks(ctx, x, why)) return std::nullopt;
  std::optional<resize::Params> p = node_resize_params(ctx, why);
  if (!p) return std::nullopt;
  if (p->out_shape != out.shape) {
    why = "the output shape " + shape_to_string(out.shape) + " differs from " + shape_to_string(p->out_shape) +
          ", the one the scales give";
    return std::nullopt;
  }
  if (p->mode != resize::Mode::Nearest && !is_float_dtype(x.dtype)) {
    why = "interpolating " + std::string(dtype_name(x.dtype)) + " data is not supported (nearest mode is)";
    return std::nullopt;
  }
  if (x.size() == 0 && out.size() > 0) {
    why = "cannot resize an empty tensor to a non-empty one";
    return std::nullopt;
  }
  ResizeLayer layer;
  layer.in_shape = x.shape;
  if (out.size() > 0) {
    layer.taps.resize(x.shape.size());
    for (size_t d = 0; d < x.shape.size(); ++d)
      for (int64_t o = 0; o < out.shape[d]; ++o) layer.taps[d].push_back(resize::taps_for(*p, d, o, x.shape[d]));
  }
  layer.params = std::move(*p);
  return layer;
}

// The extrapolation value as the shaders take it: its bits in out's storage
// for the f32 variant, else the float32 bits of its float16 value.
uint32_t extrapolation_bits(const LayerContext& ctx, double value) {
  const LayerTensor& out = ctx.output(0);
  Tensor t(out.dtype, {});
  t.set_from_double(0, value);  // rounded to the output's dtype, as the reference stores it
  switch (out.storage) {
    case StorageType::F32:
      return float_bits(t.cast(DType::Float32).data<float>()[0]);
    case StorageType::F16:
      return float_bits(t.cast(DType::Float16).cast(DType::Float32).data<float>()[0]);
    case StorageType::I32:
      return uint32_t(to_storage(t, StorageType::I32, ctx.node.describe() + " extrapolation_value").data<int32_t>()[0]);
  }
  return 0;
}

std::optional<LayerPlan> plan_resize_scalar(const LayerContext& ctx, std::string& why) {
  std::optional<ResizeLayer> layer = resize_layer(ctx, why);
  if (!layer) return std::nullopt;
  const resize::Params& p = layer->params;
  const bool nearest = p.mode == resize::Mode::Nearest;
  if (nearest && ctx.arith == Arith::F16Acc32) {
    why = "nearest mode moves values without arithmetic: the f16 variant serves it";
    return std::nullopt;
  }
  const size_t rank = layer->in_shape.size();
  if (rank > 8) {
    why = "rank " + std::to_string(rank) + " is above 8";
    return std::nullopt;
  }
  uint32_t taps_per_entry = nearest ? 1 : p.mode == resize::Mode::Linear ? 2 : 4;
  for (const auto& axis : layer->taps)  // antialiased downsampling reads more taps
    for (const AxisTaps& a : axis) taps_per_entry = std::max(taps_per_entry, uint32_t(a.taps.size()));
  const std::vector<int64_t> in_strides = contiguous_strides(layer->in_shape);
  std::vector<int32_t> table;
  std::vector<float> weights;
  for (size_t d = 0; d < rank; ++d) table.push_back(int32_t(p.out_shape[d]));
  int32_t first = 0;
  for (size_t d = 0; d < rank; ++d) {
    table.push_back(first);
    first += int32_t(p.out_shape[d]);
  }
  for (size_t d = 0; d < layer->taps.size(); ++d) {
    for (const AxisTaps& a : layer->taps[d]) {
      table.push_back(a.outside ? 0 : int32_t(a.taps.size()));
      for (uint32_t k = 0; k < taps_per_entry; ++k) {
        const Tap t = a.taps.empty() ? Tap{0, 0.0} : k < a.taps.size() ? a.taps[k] : Tap{a.taps[0].index, 0.0};
        table.push_back(int32_t(t.index * in_strides[d]));
        weights.push_back(float(t.weight));
      }
    }
  }
  LayerPlan plan;
  const BindingRef x = bind_input(ctx, plan, 0);
  const BindingRef tt = add_int_table(plan, std::move(table)), wt = add_float_table(plan, std::move(weights));
  const int64_t n = ctx.output(0).size();
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/resize", {x, BindingRef::output(0), tt, wt},
                                            {u32(n), u32(rank), extrapolation_bits(ctx, p.extrapolation_value)},
                                            uint64_t(n), {{1, taps_per_entry}, {2, nearest ? 1u : 0u}}));
  return plan;
}

// Whether every output coordinate of an axis reads input coordinate o * in / out with one full-weight tap.
bool identity_axis(const ResizeLayer& layer, size_t d) {
  if (layer.params.out_shape[d] != layer.in_shape[d]) return false;
  for (size_t o = 0; o < layer.taps[d].size(); ++o) {
    const AxisTaps& a = layer.taps[d][o];
    if (a.outside || a.taps.size() != 1 || a.taps[0].index != int64_t(o) || a.taps[0].weight != 1.0) return false;
  }
  return true;
}

std::optional<LayerPlan> plan_resize_bilinear(const LayerContext& ctx, std::string& why) {
  std::optional<ResizeLayer> layer = resize_layer(ctx, why);
  if (!layer) return std::nullopt;
  const resize::Params& p = layer->params;
  const size_t rank = layer->in_shape.size();
  if (p.mode != resize::Mode::Linear || rank < 2) {
    why = "serves linear mode on inputs of rank >= 2 only";
    return std::nullopt;
  }
  const int64_t n = ctx.output(0).size();
  for (size_t d = 0; n > 0 && d + 2 < rank; ++d) {
    if (!identity_axis(*layer, d)) {
      why = "axis " + std::to_string(d) + " is resized: only the last two axes may be";
      return std::nullopt;
    }
  }
  for (const auto& axis : layer->taps)
    for (const AxisTaps& a : axis)
      if (a.taps.size() > 2) {
        why = "antialiased downsampling reads more than two taps";
        return std::nullopt;
      }
  const int64_t in_w = layer->in_shape[rank - 1];
  std::vector<int32_t> table;
  std::vector<float> weights;
  for (size_t d = rank - 2; n > 0 && d < rank; ++d) {
    const int64_t stride = d == rank - 2 ? in_w : 1;
    for (const AxisTaps& a : layer->taps[d]) {
      table.push_back(a.outside ? 0 : int32_t(a.taps.size()));
      const Tap t0 = a.taps.empty() ? Tap{0, 0.0} : a.taps[0];
      const Tap t1 = a.taps.size() > 1 ? a.taps[1] : Tap{t0.index, 0.0};
      table.push_back(int32_t(t0.index * stride));
      table.push_back(int32_t(t1.index * stride));
      weights.push_back(float(t0.weight));
      weights.push_back(float(t1.weight));
    }
  }
  LayerPlan plan;
  const BindingRef x = bind_input(ctx, plan, 0);
  const BindingRef tt = add_int_table(plan, std::move(table)), wt = add_float_table(plan, std::move(weights));
  plan.dispatches.push_back(linear_dispatch(
      ctx, "gather/resize_bilinear", {x, BindingRef::output(0), tt, wt},
      {u32(n), u32(std::max<int64_t>(p.out_shape[rank - 2], 1)), u32(std::max<int64_t>(p.out_shape[rank - 1], 1)),
       u32(layer->in_shape[rank - 2] * in_w), extrapolation_bits(ctx, p.extrapolation_value)},
      uint64_t(n)));
  return plan;
}

std::optional<LayerPlan> plan_resize_nearest_int(const LayerContext& ctx, std::string& why) {
  std::optional<ResizeLayer> layer = resize_layer(ctx, why);
  if (!layer) return std::nullopt;
  const resize::Params& p = layer->params;
  const size_t rank = layer->in_shape.size();
  if (p.mode != resize::Mode::Nearest || rank < 1 || ctx.output(0).size() == 0) {
    why = "serves nearest mode on non-empty outputs of rank >= 1 only";
    return std::nullopt;
  }
  const std::optional<std::vector<int64_t>> whole = resize::whole_nearest_factors(p, layer->in_shape, &why);
  if (!whole) return std::nullopt;
  std::vector<int32_t> runs, factors;
  for (size_t d = 0; d < rank; ++d) {
    runs.push_back(int32_t(d + 1 == rank ? layer->in_shape[d] : p.out_shape[d]));
    factors.push_back(int32_t((*whole)[d]));
  }
  std::vector<int32_t> meta = runs;
  meta.insert(meta.end(), factors.begin(), factors.end());
  for (int64_t s : contiguous_strides(layer->in_shape)) meta.push_back(int32_t(s));
  for (int64_t s : contiguous_strides(p.out_shape)) meta.push_back(int32_t(s));
  const int64_t fw = factors.back();
  const int64_t n = ctx.output(0).size() / fw, in_w = layer->in_shape.back();
  LayerPlan plan;
  const BindingRef x = bind_input(ctx, plan, 0);
  const BindingRef m = add_int_table(plan, std::move(meta));
  // The rows form: only the last two axes grow, and either rows of a multiple of 4 elements
  // with fw <= 4 (four elements a vec4 read) or fw a multiple of 4 up to 16 (one element an
  // invocation, each copied into whole vec4s).
  const bool outer_kept =
      rank >= 2 && std::all_of(factors.begin(), factors.end() - 2, [](int32_t f) { return f == 1; });
  const bool quads = outer_kept && in_w % 4 == 0 && fw <= 4, singles = outer_kept && fw % 4 == 0 && fw <= 16;
  if (quads || singles) {
    const uint32_t per = quads ? 4 : 1;
    const uint64_t invocations = uint64_t(num_elements(layer->in_shape)) / per;
    plan.dispatches.push_back(
        linear_dispatch(ctx, "gather/resize_nearest_int", {x, BindingRef::output(0), m},
                        {u32(invocations), u32(rank), u32(fw), u32(in_w)}, invocations,
                        {{1, per}, {2, u32(factors[rank - 2])}, {3, u32(fw)}, small_indices_spec(invocations)}));
    return plan;
  }
  // Several elements of a row per invocation: the row's address is computed once for them.
  const uint32_t per = 4;
  const uint64_t invocations = uint64_t(n / in_w) * uint64_t((in_w + per - 1) / per);
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/resize_nearest_int", {x, BindingRef::output(0), m},
                                            {u32(n), u32(rank), u32(fw), u32(in_w)}, invocations, {{1, per}}));
  return plan;
}

// ---------------------------------------------------------------------------
// Range and ConstantOfShape with runtime inputs: the output shape is static
// (the builder knows every shape), so only the values are computed on the device.

bool static_shape(const LayerTensor& t, std::string& why) {
  if (std::all_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d >= 0; })) return true;
  why = "the output shape " + shape_to_string(t.shape) + " is not known at build time";
  return false;
}

std::optional<LayerPlan> plan_range(const LayerContext& ctx, std::string& why) {
  const LayerTensor& out = ctx.output(0);
  if (!common_checks(ctx, out, why) || !static_shape(out, why)) return std::nullopt;
  for (size_t i = 0; i < 3; ++i)
    VKG_CHECK(ctx.input(i).size() == 1 && ctx.input(i).dtype == out.dtype,
              ctx.node.describe() << ": start, limit and delta must be scalars of the output's type");
  if (out.dtype != DType::Float32 && out.dtype != DType::Int16 && out.dtype != DType::Int32 &&
      out.dtype != DType::Int64) {
    why = std::string("Range of ") + dtype_name(out.dtype) + " is not supported";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef start = bind_input(ctx, plan, 0), delta = bind_input(ctx, plan, 2);
  plan.dispatches.push_back(linear_dispatch(ctx, "gather/range", {start, delta, BindingRef::output(0)},
                                            {u32(out.size())}, uint64_t(out.size()),
                                            {{1, out.storage == StorageType::I32 ? 1u : 0u}}));
  return plan;
}

std::optional<LayerPlan> plan_constant_of_shape(const LayerContext& ctx, std::string& why) {
  const LayerTensor& out = ctx.output(0);
  if (!common_checks(ctx, out, why) || !static_shape(out, why)) return std::nullopt;
  const Tensor value = ctx.node.has_attr("value") ? ctx.node.attr_tensor("value") : Tensor::scalar<float>(0.0f);
  VKG_CHECK(value.size() == 1, ctx.node.describe() << ": value must hold exactly one element");
  uint32_t bits = 0;
  switch (out.storage) {
    case StorageType::F32:
      bits = float_bits(value.cast(DType::Float32).data<float>()[0]);
      break;
    case StorageType::F16:
      bits = float_bits(value.cast(DType::Float16).cast(DType::Float32).data<float>()[0]);
      break;
    case StorageType::I32: {
      const int64_t v = value.to_int64s()[0];
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        why = "value " + std::to_string(v) + " does not fit in int32";
        return std::nullopt;
      }
      bits = uint32_t(int32_t(v));
      break;
    }
  }
  LayerPlan plan;
  plan.dispatches.push_back(
      linear_dispatch(ctx, "gather/fill", {BindingRef::output(0)}, {u32(out.size()), bits}, uint64_t(out.size())));
  return plan;
}

}  // namespace

// GridSample: shaders/gather/grid_sample.comp, one invocation per output element taking
// its taps from the grid point; 1 to 3 spatial axes (4-D and 5-D inputs, and 3-D ones).
std::optional<LayerPlan> plan_grid_sample(const LayerContext& ctx, std::string& why) {
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& grid = ctx.input(1);
  for (const LayerTensor* t : {&x, &grid, &ctx.output(0)}) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader samples float data only";
      return std::nullopt;
    }
    if (t->size() > std::numeric_limits<int32_t>::max()) {
      why = "tensor '" + t->name + "' has more elements than 32-bit indices address";
      return std::nullopt;
    }
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  const resize::GridSampleParams gp = resize::grid_sample_params(ctx.node);
  VKG_CHECK(
      x.shape.size() >= 3 && grid.shape.size() == x.shape.size() && grid.shape.back() == int64_t(x.shape.size()) - 2,
      ctx.node.describe() << ": X and grid must have the same rank >= 3, grid's last dimension the spatial rank");
  const size_t rank = x.shape.size() - 2;
  if (rank > 3) {
    why = std::to_string(rank) + " spatial axes; the shader takes at most 3";
    return std::nullopt;
  }
  const Shape spatial(x.shape.begin() + 2, x.shape.end());
  const std::vector<int64_t> strides = contiguous_strides(spatial);
  std::vector<uint32_t> push = {u32(ctx.output(0).size()), u32(x.shape[1]),
                                u32(num_elements(grid.shape, 1, grid.shape.size() - 1)), u32(num_elements(spatial))};
  for (size_t a = 0; a < 3; ++a) push.push_back(a < rank ? u32(spatial[a]) : 1u);
  for (size_t a = 0; a < 3; ++a) push.push_back(a < rank ? u32(strides[a]) : 0u);
  uint32_t mode = 0;
  switch (gp.mode) {
    case resize::Mode::Nearest:
      mode = 0;
      break;
    case resize::Mode::Linear:
      mode = 1;
      break;
    case resize::Mode::Cubic:
      mode = 2;
      break;
  }
  uint32_t padding = 0;
  switch (gp.padding) {
    case resize::GridPadding::Zeros:
      padding = 0;
      break;
    case resize::GridPadding::Border:
      padding = 1;
      break;
    case resize::GridPadding::Reflection:
      padding = 2;
      break;
  }
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0), gb = bind_input(ctx, plan, 1);
  plan.dispatches.push_back(
      linear_dispatch(ctx, "gather/grid_sample", {xb, gb, BindingRef::output(0)}, push, uint64_t(ctx.output(0).size()),
                      {{1, u32(int64_t(rank))}, {2, mode}, {3, padding}, {4, gp.align_corners ? 1u : 0u}}));
  return plan;
}

// AffineGrid: shaders/gather/affine_grid.comp, one invocation per grid point; the size
// input decides the grid's shape and must be a build-time constant, theta is data.
std::optional<LayerPlan> plan_affine_grid(const LayerContext& ctx, std::string& why) {
  const LayerTensor& theta = ctx.input(0);
  for (const LayerTensor* t : {&theta, &ctx.output(0)}) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader computes float grids only";
      return std::nullopt;
    }
  }
  if (!sizes_fit(ctx, why)) return std::nullopt;
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  if (!ctx.input(1).is_constant()) {
    why = "size (input 1) is not a build-time constant: it decides the grid's shape";
    return std::nullopt;
  }
  const std::vector<int64_t> size = ctx.constant_input(1).to_int64s();
  VKG_CHECK(size.size() == 4 || size.size() == 5,
            ctx.node.describe() << ": size must hold 4 or 5 values, got " << size.size());
  const size_t rank = size.size() - 2;
  VKG_CHECK(theta.shape == Shape({size[0], int64_t(rank), int64_t(rank) + 1}),
            ctx.node.describe() << ": theta must be [" << size[0] << ", " << rank << ", " << rank + 1 << "], got "
                                << shape_to_string(theta.shape));
  const int64_t points = ctx.output(0).size() / int64_t(rank);
  const int64_t per_batch = size[0] > 0 ? points / size[0] : 0;
  LayerPlan plan;
  const BindingRef tb = bind_input(ctx, plan, 0);
  const uint32_t depth = rank == 3 ? u32(size[2]) : 1u;
  plan.dispatches.push_back(linear_dispatch(
      ctx, "gather/affine_grid", {tb, BindingRef::output(0)},
      {u32(points), u32(std::max<int64_t>(per_batch, 1)), depth, u32(size[size.size() - 2]), u32(size.back())},
      uint64_t(std::max<int64_t>(points, 1)),
      {{1, u32(int64_t(rank))}, {2, ctx.node.attr_int("align_corners", 0) != 0 ? 1u : 0u}}));
  return plan;
}

void register_gather_tactics(TacticRegistry& r) {
  constexpr auto F32 = Arith::F32, F16 = Arith::F16, F16Acc32 = Arith::F16Acc32;
  r.add_variants("gather.vec4", {"Gather"}, 0, {F32, F16}, [](auto& c, auto& w) { return plan_gather(c, w, 4); });
  r.add_variants("gather.scalar", {"Gather"}, 10, {F32, F16}, [](auto& c, auto& w) { return plan_gather(c, w, 1); });
  r.add_variants("gather_elements.scalar", {"GatherElements"}, 0, {F32, F16}, plan_gather_elements);
  r.add_variants("gather_nd.scalar", {"GatherND"}, 0, {F32, F16}, plan_gather_nd);
  r.add_variants("scatter_elements.scalar", {"ScatterElements", "Scatter"}, 0, {F32, F16}, plan_scatter_elements);
  r.add_variants("scatter_nd.scalar", {"ScatterND"}, 0, {F32, F16}, plan_scatter_nd);
  r.add_variants("resize.nearest_int", {"Resize", "Upsample"}, 0, {F32, F16}, plan_resize_nearest_int);
  r.add_variants("resize.bilinear", {"Resize", "Upsample"}, 1, {F32, F16, F16Acc32}, plan_resize_bilinear);
  r.add_variants("resize.scalar", {"Resize", "Upsample"}, 10, {F32, F16, F16Acc32}, plan_resize_scalar);
  r.add_variants("grid_sample.scalar", {"GridSample"}, 0, {F32, F16, F16Acc32}, plan_grid_sample);
  r.add_variants("affine_grid.scalar", {"AffineGrid"}, 0, {F32, F16Acc32}, plan_affine_grid);
  r.add_variants("range.scalar", {"Range"}, 0, {F32, F16}, plan_range);
  r.add_variants("constant_of_shape.scalar", {"ConstantOfShape"}, 0, {F32, F16}, plan_constant_of_shape);
}

}  // namespace vkg
