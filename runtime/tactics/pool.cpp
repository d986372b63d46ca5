// Vulkan tactics of the pool family (see runtime/engine/tactic.h): windowed
// pooling (MaxPool, AveragePool, LpPool), global pooling (GlobalMaxPool,
// GlobalAveragePool, GlobalLpPool) and MaxUnpool. Window geometry (pads,
// auto_pad, ceil_mode, dilations) and MaxUnpool's shape come from
// runtime/core/window_geometry.h, as the reference's do, so both backends agree
// on every attribute path.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/core/roi_align_params.h"
#include "runtime/core/window_geometry.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg {

namespace {

constexpr uint32_t kWindowGroupSize = 32;  // pool/window_workgroup.comp (at most 64)
constexpr int64_t kMinWorkgroupTaps = 16;  // pool.workgroup's smallest window
constexpr uint32_t kGlobalGroupSize = 64;  // pool/global_workgroup.comp (at most 64)
constexpr size_t kMaxSpatialRank = 3;      // the shaders' spatial dims
constexpr int64_t kMaxSegment = 64;        // pool/window_w4.comp's input row segment
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

enum class PoolMode : uint32_t { Max = 0, Average = 1, Lp = 2 };  // the shaders' kMode

// A pooling layer resolved to the shaders' terms: 3 spatial dims (fewer are
// given leading dims of size 1), every attribute as a number.
struct PoolLayer {
  PoolMode mode = PoolMode::Max;
  int64_t p = 2;              // Lp norm order
  bool integer = false;       // X and Y are int32 on the device (max only)
  bool indices = false;       // MaxPool's Indices output is wanted
  bool column_major = false;  // storage_order 1
  bool count_include_pad = false;
  uint32_t empty_bits = 0;  // max: the value of a window that lies entirely in the padding
  int64_t planes = 0;       // N * C
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, strides{1, 1, 1}, dilations{1, 1, 1},
      pads_begin{0, 0, 0}, pads_end{0, 0, 0};

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t total() const { return planes * out_size(); }
};

bool is_global_op(const std::string& op) {
  return op == "GlobalMaxPool" || op == "GlobalAveragePool" || op == "GlobalLpPool";
}

PoolMode pool_mode(const std::string& op) {
  if (op == "MaxPool" || op == "GlobalMaxPool") return PoolMode::Max;
  if (op == "AveragePool" || op == "GlobalAveragePool") return PoolMode::Average;
  return PoolMode::Lp;
}

// LpPool's p as the reference reads it: a float in LpPool-1, an int later.
int64_t lp_norm_order(const Node& node) {
  int64_t p = 2;
  if (node.has_attr("p")) {
    const Attribute& a = node.attrs.at("p");
    p = a.kind == Attribute::Kind::Float ? int64_t(a.f) : node.attr_int("p");
  }
  VKG_CHECK(p >= 1, node.describe() << ": p must be >= 1, got " << p);
  return p;
}

// Whether some output position of `g` has a window with no tap inside the input.
bool has_empty_window(const WindowGeometry& g) {
  for (size_t d = 0; d < g.rank(); ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      bool any = false;
      for (int64_t k = 0; k < g.kernel[d] && !any; ++k) {
        const int64_t pos = g.tap(d, o, k);
        any = pos >= 0 && pos < g.in[d];
      }
      if (!any) return true;
    }
  }
  return false;
}

// What an empty max window holds on the device: the lowest value of X's dtype
// (what the reference starts its maximum from); nullopt when the device cannot
// hold it.
std::optional<uint32_t> empty_max_bits(DType dtype, StorageType storage) {
  switch (storage) {
    case StorageType::F32:
      return std::bit_cast<uint32_t>(std::numeric_limits<float>::lowest());
    case StorageType::F16:
      return std::nullopt;  // -FLT_MAX has no fp16 form
    case StorageType::I32:
      break;
  }
  switch (dtype) {
    case DType::Int8:
      return uint32_t(int32_t(std::numeric_limits<int8_t>::lowest()));
    case DType::Int16:
      return uint32_t(int32_t(std::numeric_limits<int16_t>::lowest()));
    case DType::Int32:
      return uint32_t(std::numeric_limits<int32_t>::lowest());
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
      return 0u;
    case DType::Int64:
    case DType::UInt64:
    case DType::Bool:
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
      return std::nullopt;
  }
  return std::nullopt;
}

// Checks the storage of X against the tactic's arithmetic; the reason when it does not fit.
std::optional<std::string> storage_mismatch(const LayerContext& ctx, StorageType x) {
  switch (ctx.arith) {
    case Arith::F32:
      if (x == StorageType::F16) return "fp16 storage needs an fp16 variant";
      return std::nullopt;
    case Arith::F16:
    case Arith::F16Acc32:
      if (x != StorageType::F16) return "the layer has no float tensors: fp16 variants do not apply";
      return std::nullopt;
  }
  return std::nullopt;
}

// Whether X's spatial rank, dtype and storage suit the pooling shaders and the tactic's arithmetic.
bool pool_input_supported(const LayerContext& ctx, size_t spatial_rank, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  if (spatial_rank > kMaxSpatialRank) {
    why_not = "more than 3 spatial dims";
    return false;
  }
  if (x.dtype == DType::Float64) {
    why_not = "float64 is not supported on Vulkan";
    return false;
  }
  if (auto reason = storage_mismatch(ctx, x.storage)) {
    why_not = *reason;
    return false;
  }
  return true;
}

// Copies the window of `g` (spatial_rank dims) into the last dims of `l`.
void place_window(const WindowGeometry& g, size_t spatial_rank, PoolLayer& l) {
  const size_t lead = kMaxSpatialRank - spatial_rank;
  for (size_t d = 0; d < spatial_rank; ++d) {
    l.in[lead + d] = g.in[d];
    l.out[lead + d] = g.out[d];
    l.kernel[lead + d] = g.kernel[d];
    l.strides[lead + d] = g.strides[d];
    l.dilations[lead + d] = g.dilations[d];
    l.pads_begin[lead + d] = g.pads_begin[d];
    l.pads_end[lead + d] = g.pads_end[d];
  }
}

// Sets what a max window lying entirely in the padding holds; false with `why_not` when
// the device cannot hold that value.
bool set_empty_max(const LayerTensor& x, const WindowGeometry& g, PoolLayer& l, std::string& why_not) {
  if (l.mode == PoolMode::Max && has_empty_window(g)) {
    const std::optional<uint32_t> bits = empty_max_bits(x.dtype, x.storage);
    if (!bits) {
      why_not = "a window lies entirely in the padding and the lowest " + std::string(dtype_name(x.dtype)) +
                " has no " + storage_type_name(x.storage) + " form on the device";
      return false;
    }
    l.empty_bits = *bits;
  }
  return true;
}

// Every offset and index the shaders form is an int32.
bool fits_int32_offsets(const LayerTensor& x, const PoolLayer& l, std::string& why_not) {
  for (const auto* dims : {&l.kernel, &l.strides, &l.dilations, &l.pads_begin, &l.pads_end}) {
    for (int64_t v : *dims) {
      if (v > kInt32Max / 4) {
        why_not = "a window attribute is too large for int32 offsets";
        return false;
      }
    }
  }
  if (x.size() > kInt32Max || l.total() > kInt32Max) {
    why_not = "more than 2^31 - 1 elements";
    return false;
  }
  return true;
}

// Resolves a pooling layer (windowed or global) for the pooling shaders;
// nullopt with `why_not` when they cannot serve it.
std::optional<PoolLayer> resolve_pool(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(x.shape.size() >= 3,
            node.describe() << ": input must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x.shape));
  const Shape spatial(x.shape.begin() + 2, x.shape.end());
  if (!pool_input_supported(ctx, spatial.size(), why_not)) return std::nullopt;

  PoolLayer l;
  l.mode = pool_mode(node.op_type);
  l.integer = x.storage == StorageType::I32;
  if (l.integer && (l.mode != PoolMode::Max || is_global_op(node.op_type) || x.dtype == DType::Bool)) {
    why_not = "only MaxPool takes integer inputs";
    return std::nullopt;
  }
  if (l.mode == PoolMode::Max && ctx.arith == Arith::F16Acc32) {
    why_not = "max pooling accumulates nothing: the f16 variant serves it";
    return std::nullopt;
  }
  if (l.mode == PoolMode::Lp) l.p = lp_norm_order(node);
  l.planes = x.shape[0] * x.shape[1];

  WindowGeometry g;
  if (is_global_op(node.op_type)) {
    g = global_window(spatial);
  } else {
    g = resolve_pool_window(node, spatial);
  }
  place_window(g, spatial.size(), l);

  if (!set_empty_max(x, g, l, why_not)) return std::nullopt;
  if (l.mode == PoolMode::Average) l.count_include_pad = node.attr_int("count_include_pad", 0) != 0;
  if (node.op_type == "MaxPool") {
    const int64_t storage_order = node.attr_int("storage_order", 0);
    VKG_CHECK(storage_order == 0 || storage_order == 1, node.describe()
                                                            << ": storage_order must be 0 or 1, got " << storage_order);
    l.column_major = storage_order == 1;
    l.indices = ctx.outputs.size() > 1 && ctx.outputs[1].present();
  }
  if (!fits_int32_offsets(x, l, why_not)) return std::nullopt;
  return l;
}

// pool/window*.comp push constants (pool/pool_common.glsl).
std::vector<uint32_t> window_push(const PoolLayer& l) {
  std::vector<uint32_t> push{uint32_t(l.total()), l.empty_bits};
  for (const auto* dims : {&l.in, &l.out, &l.kernel, &l.strides, &l.dilations, &l.pads_begin, &l.pads_end}) {
    for (int64_t v : *dims) push.push_back(uint32_t(int32_t(v)));
  }
  return push;
}

// Specialization constants 1-6 of pool/window*.comp.
std::vector<SpecValue> window_spec(uint32_t local_size, const PoolLayer& l) {
  return {{0, local_size},
          {1, uint32_t(l.mode)},
          {2, uint32_t(l.p)},
          {3, l.integer ? 1u : 0u},
          {4, l.indices ? 1u : 0u},
          {5, l.column_major ? 1u : 0u},
          {6, l.count_include_pad ? 1u : 0u}};
}

// X, Y and Indices (Y again when the layer has no Indices output).
std::vector<BindingRef> window_bindings(const LayerContext& ctx, LayerPlan& plan, const PoolLayer& l) {
  return {bind_input(ctx, plan, 0), BindingRef::output(0), l.indices ? BindingRef::output(1) : BindingRef::output(0)};
}

// The windowed forms loop over the window per output (pool.direct.w4 over four outputs' spans):
// an average over a 300 x 300 window came out wrong on lavapipe (its loop iteration limit).
bool window_fits(const LayerContext& ctx, const PoolLayer& l, std::string& why_not) {
  return loops_fit_device(ctx, uint64_t(l.kernel[0] * l.kernel[1] * l.kernel[2]) * 4, 2, why_not);
}

std::optional<PoolLayer> resolve_windowed(const LayerContext& ctx, std::string& why_not) {
  if (is_global_op(ctx.node.op_type)) {
    why_not = "global pooling is served by the global_pool tactics";
    return std::nullopt;
  }
  return resolve_pool(ctx, why_not);
}

// pool.direct: one invocation per output.
std::optional<LayerPlan> plan_direct(const LayerContext& ctx, std::string& why_not) {
  const std::optional<PoolLayer> l = resolve_windowed(ctx, why_not);
  if (!l || !window_fits(ctx, *l, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d;
  d.shader = ctx.shader("pool/window");
  d.spec = window_spec(kLocalSize, *l);
  d.bindings = window_bindings(ctx, plan, *l);
  d.push = window_push(*l);
  d.groups = linear_groups(uint64_t(l->total()), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// pool.direct.w4: one invocation per 4 outputs along the innermost dim.
std::optional<LayerPlan> plan_direct_w4(const LayerContext& ctx, std::string& why_not) {
  const std::optional<PoolLayer> l = resolve_windowed(ctx, why_not);
  if (!l || !window_fits(ctx, *l, why_not)) return std::nullopt;
  const int64_t segment = 3 * l->strides[2] + (l->kernel[2] - 1) * l->dilations[2] + 1;
  if (segment > kMaxSegment) {
    why_not = "the innermost window span of 4 outputs (" + std::to_string(segment) + " inputs) exceeds " +
              std::to_string(kMaxSegment);
    return std::nullopt;
  }
  const int64_t quads = (l->out[2] + 3) / 4;
  LayerPlan plan;
  Dispatch d;
  d.shader = ctx.shader("pool/window_w4");
  d.spec = window_spec(kLocalSize, *l);
  d.spec.push_back({7, uint32_t(l->kernel[2])});
  d.spec.push_back({8, uint32_t(l->strides[2])});
  d.spec.push_back({9, uint32_t(l->dilations[2])});
  d.spec.push_back({10, l->out[2] % 4 == 0 ? 1u : 0u});
  d.bindings = window_bindings(ctx, plan, *l);
  d.push = window_push(*l);
  d.groups = linear_groups(uint64_t(l->total() / l->out[2] * quads), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// pool.workgroup: one workgroup per output, the window's taps split among its
// invocations. Only for windows of at least kMinWorkgroupTaps taps: below that
// most invocations would idle.
std::optional<LayerPlan> plan_window_workgroup(const LayerContext& ctx, std::string& why_not) {
  const std::optional<PoolLayer> l = resolve_windowed(ctx, why_not);
  if (!l) return std::nullopt;
  const int64_t taps = l->kernel[0] * l->kernel[1] * l->kernel[2];
  if (taps < kMinWorkgroupTaps) {
    why_not = "a window of " + std::to_string(taps) + " taps is too small for a workgroup per output (needs " +
              std::to_string(kMinWorkgroupTaps) + ")";
    return std::nullopt;
  }
  LayerPlan plan;
  Dispatch d;
  d.shader = ctx.shader("pool/window_workgroup");
  d.spec = window_spec(kWindowGroupSize, *l);
  d.bindings = window_bindings(ctx, plan, *l);
  d.push = window_push(*l);
  d.groups = linear_groups(uint64_t(l->total()) * kWindowGroupSize, kWindowGroupSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<PoolLayer> resolve_global(const LayerContext& ctx, std::string& why_not) {
  if (!is_global_op(ctx.node.op_type)) {
    why_not = "only global pooling";
    return std::nullopt;
  }
  if (squeeze_gate(ctx.node)) {
    why_not = "the layer holds a squeeze-and-excitation gate (global_pool.gate serves it)";
    return std::nullopt;
  }
  return resolve_pool(ctx, why_not);
}

// Dispatch of pool/global_*.comp with `local_size` invocations per workgroup
// and `invocations` in all.
std::optional<LayerPlan> plan_global(const LayerContext& ctx, std::string& why_not, const std::string& shader,
                                     uint32_t local_size, bool workgroup_per_plane) {
  const std::optional<PoolLayer> l = resolve_global(ctx, why_not);
  if (!l) return std::nullopt;
  const int64_t plane_size = l->in_size();
  if (plane_size < 1) {
    why_not = "the planes are empty";  // the reference rejects an empty window as well
    return std::nullopt;
  }
  // A plane per invocation (vec4 reads where aligned), or a share of one with barriers.
  const uint64_t share =
      workgroup_per_plane ? uint64_t(plane_size + local_size - 1) / local_size + 16 : uint64_t(plane_size);
  if (!loops_fit_device(ctx, share, workgroup_per_plane ? 8 : 2, why_not)) return std::nullopt;
  LayerPlan plan;
  Dispatch d;
  // The row form (an invocation per plane) reads through texel buffers where the device has them.
  d.shader = workgroup_per_plane ? ctx.shader(shader) : ctx.texel_shader(shader, uint64_t(ctx.input(0).size()));
  d.spec = {{0, local_size}, {1, uint32_t(l->mode)}, {2, uint32_t(l->p)}, {3, plane_size % 4 == 0 ? 1u : 0u}};
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::output(0)};
  d.push = {uint32_t(l->planes), uint32_t(plane_size)};
  const uint64_t invocations = uint64_t(l->planes) * (workgroup_per_plane ? local_size : 1);
  d.groups = linear_groups(invocations, local_size, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

constexpr uint32_t kGateGroupSize = 64;                            // pool/squeeze_gate.comp
constexpr int64_t kGateMaxChannels = 2048, kGateMaxHidden = 1024;  // its shared arrays

// The sizes of a squeeze-and-excitation gate: n images of c channels of `plane` elements each,
// hidden_channels after the first pointwise Conv (W1) and out_channels after the second (W2).
struct GateShape {
  int64_t n = 0, c = 0, plane = 0, hidden_channels = 0, out_channels = 0;
};

// The gate's sizes, checked against its weights; nullopt with `why_not` when the gate shaders
// cannot serve them.
std::optional<GateShape> gate_shape(const LayerContext& ctx, std::string& why_not) {
  const LayerTensor& x = ctx.input(0);
  VKG_CHECK(ctx.inputs.size() == 5 && x.shape.size() >= 3,
            ctx.node.describe() << ": a squeeze-and-excitation gate takes X (rank 3 or more), W1, B1, W2 and B2");
  const int64_t n = x.shape[0], c = x.shape[1], plane = num_elements(Shape(x.shape.begin() + 2, x.shape.end()));
  const Shape& w1 = ctx.input(1).shape;
  const Shape& w2 = ctx.input(3).shape;
  VKG_CHECK(w1.size() >= 2 && w2.size() >= 2 && w1[1] == c && w2[1] == w1[0] && ctx.input(2).size() == w1[0] &&
                ctx.input(4).size() == w2[0] && ctx.output(0).size() == n * w2[0],
            ctx.node.describe() << ": gate weights " << shape_to_string(w1) << " and " << shape_to_string(w2)
                                << " do not chain from " << c << " channels");
  for (size_t i = 1; i < 5; ++i) {
    if (!ctx.input(i).is_constant()) {
      why_not = "needs constant gate weights";
      return std::nullopt;
    }
  }
  if (plane < 1 || c > kGateMaxChannels || w1[0] > kGateMaxHidden) {
    why_not = "serves non-empty planes, at most " + std::to_string(kGateMaxChannels) + " channels and at most " +
              std::to_string(kGateMaxHidden) + " hidden ones";
    return std::nullopt;
  }
  return GateShape{n, c, plane, w1[0], w2[0]};
}

// The split forms' first dispatch: the planes' means into scratch 0 by pool/global_row, or
// pool/global_workgroup with `workgroups`.
Dispatch gate_means_dispatch(const LayerContext& ctx, LayerPlan& plan, bool workgroups, StorageType want,
                             const GateShape& s) {
  const int64_t n = s.n, c = s.c, plane = s.plane;
  // The means, in whole vec4s (the gate may read them as texels).
  plan.scratch_bytes.push_back(uint64_t((n * c + 3) / 4 * 4) * storage_element_bytes(want));
  const uint32_t local_size = workgroups ? kGlobalGroupSize : kLocalSize;
  Dispatch pool;
  pool.shader = workgroups ? ctx.shader("pool/global_workgroup")
                           : ctx.texel_shader("pool/global_row", uint64_t(ctx.input(0).size()));
  pool.spec = {{0, local_size}, {1, uint32_t(PoolMode::Average)}, {2, 2}, {3, plane % 4 == 0 ? 1u : 0u}};
  pool.bindings = {bind_input(ctx, plan, 0), BindingRef::scratch(0)};
  pool.push = {uint32_t(n * c), uint32_t(plane)};
  pool.groups = linear_groups(uint64_t(n * c) * (workgroups ? local_size : 1), local_size, ctx.device);
  return pool;
}

// global_pool.gate_fc's gate on the means in scratch 0: each pointwise Conv by pool/gate_fc,
// the first one's outputs in scratch 1.
void append_gate_fc(const LayerContext& ctx, LayerPlan& plan, const FusedActivation& hidden, StorageType want,
                    const GateShape& s) {
  const int64_t n = s.n, c = s.c;
  // The first Conv's outputs, in whole vec4s, then the second Conv.
  plan.scratch_bytes.push_back(uint64_t((n * s.hidden_channels + 3) / 4 * 4) * storage_element_bytes(want));
  const int64_t largest = std::max({n * c, n * s.hidden_channels, ctx.input(1).size(), ctx.input(3).size()});
  const std::string shader = ctx.texel_shader("pool/gate_fc", uint64_t(largest));
  const auto fc = [&](BindingRef v, size_t w, BindingRef y, int64_t k, int64_t rows) {
    Dispatch d;
    d.shader = shader;
    d.spec = {{0, kLocalSize}, {1, k % 4 == 0 ? 1u : 0u}};
    d.bindings = {v, bind_input(ctx, plan, w), bind_input(ctx, plan, w + 1), y};
    d.push = {uint32_t(n), uint32_t(k), uint32_t(rows)};
    d.groups = linear_groups(uint64_t(n * rows), kLocalSize, ctx.device);
    return d;
  };
  Dispatch first = fc(BindingRef::scratch(0), 1, BindingRef::scratch(1), c, s.hidden_channels);
  const std::vector<SpecValue> epilogue = epilogue_spec(hidden);
  first.spec.insert(first.spec.end(), epilogue.begin(), epilogue.end());
  plan.dispatches.push_back(std::move(first));
  plan.dispatches.push_back(fc(BindingRef::scratch(1), 3, BindingRef::output(0), s.hidden_channels, s.out_channels));
}

// pool/squeeze_gate.comp, one workgroup per image: on X itself, or with `split` on the means
// in scratch 0 (planes of gate_plane elements).
Dispatch squeeze_gate_dispatch(const LayerContext& ctx, LayerPlan& plan, const FusedActivation& hidden,
                               const GateShape& s, bool split, int64_t gate_plane) {
  const int64_t n = s.n, c = s.c;
  Dispatch d;
  const int64_t read = std::max({split ? n * c : ctx.input(0).size(), ctx.input(1).size(), ctx.input(3).size()});
  d.shader = ctx.texel_shader("pool/squeeze_gate", uint64_t(read));
  d.spec = {{0, kGateGroupSize},
            {1, gate_plane % 4 == 0 ? 1u : 0u},
            {2, uint32_t(hidden.kind)},
            {3, std::bit_cast<uint32_t>(hidden.alpha)},
            {4, std::bit_cast<uint32_t>(hidden.beta)},
            {5, std::bit_cast<uint32_t>(hidden.post_scale)},
            {6, std::bit_cast<uint32_t>(hidden.post_shift)},
            {7, c % 4 == 0 && s.hidden_channels % 4 == 0 ? 1u : 0u}};
  d.bindings.push_back(split ? BindingRef::scratch(0) : bind_input(ctx, plan, 0));
  for (size_t i = 1; i < 5; ++i) d.bindings.push_back(bind_input(ctx, plan, i));
  d.bindings.push_back(BindingRef::output(0));
  d.push = {uint32_t(n), uint32_t(c), uint32_t(gate_plane), uint32_t(s.hidden_channels), uint32_t(s.out_channels)};
  d.groups = linear_groups(uint64_t(n) * kGateGroupSize, kGateGroupSize, ctx.device);
  return d;
}

// global_pool.gate: a GlobalAveragePool that absorbed a squeeze-and-excitation gate
// (graph_optimizer.h, squeeze_gate) on pool/squeeze_gate.comp, one workgroup per image.
// global_pool.gate_split: the planes averaged first by pool/global_row (an invocation per plane,
// as many workgroups as they fill) into scratch, then the gate on the means (planes of 1): two
// dispatches, where one workgroup per image would average large planes on one core of lavapipe
// or one multiprocessor of a GPU.
// global_pool.gate_wg: the same averaging each plane with a workgroup (pool/global_workgroup), the
// GPU form: an invocation summing a plane of 6400 serially took a third of a millisecond on an
// H200, a fifth of PP-OCRv4 det there.
// global_pool.gate_fc: the means as gate_split's, then each pointwise Conv as its own dispatch
// (pool/gate_fc), an invocation per output: lavapipe runs pool/squeeze_gate's one workgroup per
// image on one core and loads its shared vectors one invocation at a time (PP-OCRv4 det's gate
// over 384 channels of 10x10: 0.54 -> 0.14 ms).
enum class GateForm { Fused, SplitRows, SplitWorkgroups, SplitFC };

std::optional<LayerPlan> plan_squeeze_gate(const LayerContext& ctx, std::string& why_not, GateForm form) {
  const bool split = form != GateForm::Fused;
  const std::optional<FusedActivation> hidden = squeeze_gate(ctx.node);
  if (!hidden) {
    why_not = "serves squeeze-and-excitation gates only (a GlobalAveragePool fused with two pointwise Convs)";
    return std::nullopt;
  }
  const std::optional<StorageType> want = float_storage(ctx, why_not);
  if (!want) return std::nullopt;
  const std::optional<GateShape> s = gate_shape(ctx, why_not);
  if (!s) return std::nullopt;
  LayerPlan plan;
  int64_t gate_plane = s->plane;
  if (split) {
    plan.dispatches.push_back(gate_means_dispatch(ctx, plan, form == GateForm::SplitWorkgroups, *want, *s));
    gate_plane = 1;
  }
  if (form == GateForm::SplitFC) {
    append_gate_fc(ctx, plan, *hidden, *want, *s);
    return plan;
  }
  plan.dispatches.push_back(squeeze_gate_dispatch(ctx, plan, *hidden, *s, split, gate_plane));
  return plan;
}

// unpool.scatter: MaxUnpool as claim (-1), atomicMax of the X element per output
// position, then gather (pool/unpool.comp).
std::optional<LayerPlan> plan_unpool(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& ind = ctx.input(1);
  VKG_CHECK(x.shape.size() >= 3,
            node.describe() << ": input must have rank >= 3 (N x C x D1 ...), got " << shape_to_string(x.shape));
  const size_t r = x.shape.size() - 2;
  VKG_CHECK(ind.shape == x.shape, node.describe() << ": indices " << shape_to_string(ind.shape)
                                                  << " must have the shape of X " << shape_to_string(x.shape));
  if (r > kMaxSpatialRank) {
    why_not = "more than 3 spatial dims";
    return std::nullopt;
  }
  switch (ctx.arith) {
    case Arith::F32:
      if (x.storage == StorageType::F16) {
        why_not = "fp16 storage needs the f16 variant";
        return std::nullopt;
      }
      break;
    case Arith::F16:
      if (x.storage != StorageType::F16) {
        why_not = "X is not a float tensor: fp16 variants do not apply";
        return std::nullopt;
      }
      break;
    case Arith::F16Acc32:
      why_not = "MaxUnpool moves data: no f16acc32 variant";
      return std::nullopt;
  }
  if (x.dtype == DType::Float64) {
    why_not = "float64 is not supported on Vulkan";
    return std::nullopt;
  }

  const Shape inferred = unpooled_shape(node, x.shape);
  Shape out_shape = inferred;
  if (ctx.has_input(2)) {
    if (!ctx.input(2).is_constant()) {
      why_not = "output_shape must be a build-time constant";
      return std::nullopt;
    }
    out_shape = ctx.constant_input(2).to_int64s();
    VKG_CHECK(out_shape.size() == inferred.size() && out_shape[0] == x.shape[0] && out_shape[1] == x.shape[1],
              node.describe() << ": output_shape " << shape_to_string(out_shape) << " does not fit the input "
                              << shape_to_string(x.shape));
  }
  if (num_elements(inferred) > kInt32Max || num_elements(out_shape) > kInt32Max || x.size() > kInt32Max) {
    why_not = "more than 2^31 - 1 elements";
    return std::nullopt;
  }

  // Both shapes as N, C, D0, D1, D2 (leading spatial dims of size 1).
  std::vector<uint32_t> push{uint32_t(x.size()), uint32_t(num_elements(out_shape))};
  for (const Shape* s : std::initializer_list<const Shape*>{&inferred, &out_shape}) {
    push.push_back(uint32_t((*s)[0]));
    push.push_back(uint32_t((*s)[1]));
    for (size_t i = r; i < kMaxSpatialRank; ++i) push.push_back(1);
    for (size_t i = 0; i < r; ++i) push.push_back(uint32_t((*s)[2 + i]));
  }

  LayerPlan plan;
  plan.scratch_bytes.push_back(std::max<uint64_t>(4, 4 * uint64_t(num_elements(out_shape))));
  const std::vector<BindingRef> bindings{bind_input(ctx, plan, 0), bind_input(ctx, plan, 1), BindingRef::output(0),
                                         BindingRef::scratch(0)};
  const uint64_t steps[3] = {uint64_t(num_elements(out_shape)), uint64_t(x.size()), uint64_t(num_elements(out_shape))};
  for (uint32_t step = 0; step < 3; ++step) {
    Dispatch d;
    d.shader = ctx.shader("pool/unpool");
    d.spec = {{0, kLocalSize}, {1, step}};
    d.bindings = bindings;
    d.push = push;
    d.groups = linear_groups(steps[step], kLocalSize, ctx.device);
    plan.dispatches.push_back(std::move(d));
  }
  return plan;
}

// RoiAlign: shaders/pool/roi_align.comp, one invocation per output element; the ROIs and
// their batch indices are runtime data, so each invocation works out its bin's sampling
// grid from them.
std::optional<LayerPlan> plan_roi_align(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& rois = ctx.input(1);
  VKG_CHECK(x.shape.size() == 4 && rois.shape.size() == 2 && rois.shape[1] == 4,
            node.describe() << ": X must be [N, C, H, W] and rois [R, 4], got " << shape_to_string(x.shape) << " and "
                            << shape_to_string(rois.shape));
  for (const LayerTensor* t : {&x, &rois, &ctx.output(0)}) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why_not = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader samples float data only";
      return std::nullopt;
    }
    if (t->size() > kInt32Max) {
      why_not = "tensor '" + t->name + "' has more elements than 32-bit indices address";
      return std::nullopt;
    }
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  if (x.size() == 0) {
    why_not = "X is empty: there is nothing to sample";
    return std::nullopt;
  }
  const RoiAlignParams params = roi_align_params(node, ctx.opset);
  const int64_t out_h = params.output_height, out_w = params.output_width;
  const int64_t sampling_ratio = params.sampling_ratio;
  const float scale = params.spatial_scale;
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, sizeof scale_bits);
  LayerPlan plan;
  const BindingRef xb = bind_input(ctx, plan, 0), rb = bind_input(ctx, plan, 1), bb = bind_input(ctx, plan, 2);
  const int64_t total = ctx.output(0).size();
  Dispatch d;
  d.shader = ctx.shader("pool/roi_align");
  d.spec = {{0, kLocalSize}, {1, params.max ? 1u : 0u}, {2, params.half_pixel ? 1u : 0u}};
  d.bindings = {xb, rb, bb, BindingRef::output(0)};
  d.push = {uint32_t(total), uint32_t(x.shape[1]),     uint32_t(x.shape[2]), uint32_t(x.shape[3]), uint32_t(out_h),
            uint32_t(out_w), uint32_t(sampling_ratio), scale_bits,           uint32_t(x.shape[0])};
  d.groups = linear_groups(uint64_t(std::max<int64_t>(total, 1)), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace

void register_pool_tactics(TacticRegistry& r) {
  const std::vector<std::string> windowed{"MaxPool", "AveragePool", "LpPool"};
  const std::vector<std::string> global{"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"};
  const auto all = {Arith::F32, Arith::F16, Arith::F16Acc32};
  // On lavapipe pool.direct.w4 ran 2-20x faster than pool.direct; it declines
  // only windows too wide for its register segment, which pool.direct serves.
  r.add_variants("pool.direct.w4", windowed, 0, all, plan_direct_w4);
  r.add_variants("pool.direct", windowed, 10, all, plan_direct);
  r.add_variants("pool.workgroup", windowed, 20, all, plan_window_workgroup);
  r.add_variants("global_pool.row", global, 0, all, [](const LayerContext& ctx, std::string& why_not) {
    return plan_global(ctx, why_not, "pool/global_row", kLocalSize, false);
  });
  r.add_variants("global_pool.workgroup", global, 10, all, [](const LayerContext& ctx, std::string& why_not) {
    return plan_global(ctx, why_not, "pool/global_workgroup", kGlobalGroupSize, true);
  });
  for (const auto& [base, form, priority, gpu_priority] :
       {std::tuple{"global_pool.gate", GateForm::Fused, 5, -1},
        std::tuple{"global_pool.gate_split", GateForm::SplitRows, 6, -1},
        std::tuple{"global_pool.gate_wg", GateForm::SplitWorkgroups, 7, 0},
        std::tuple{"global_pool.gate_fc", GateForm::SplitFC, 8, -1}}) {
    r.add_variants(
        base, {"GlobalAveragePool"}, priority, {Arith::F32, Arith::F16Acc32},
        [form = form](const LayerContext& ctx, std::string& why_not) { return plan_squeeze_gate(ctx, why_not, form); },
        {.gpu_priority = gpu_priority});
  }
  r.add_variants("unpool.scatter", {"MaxUnpool"}, 0, {Arith::F32, Arith::F16}, plan_unpool);
  r.add_variants("roi_align.direct", {"RoiAlign"}, 0, {Arith::F32, Arith::F16Acc32}, plan_roi_align);
}

}  // namespace vkg
