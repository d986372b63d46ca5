// Concat and Split (concat.*, split.*): the tensor along the axis as slabs of
// rows, one dispatch per part or, for up to kMaxParts parts, one dispatch for
// all (concat_multi.comp, split_multi.comp).
#include <algorithm>
#include <numeric>

#include "runtime/core/error.h"
#include "runtime/tactics/movement_common.h"

namespace vkg::movement_tactics {

namespace {

constexpr uint32_t kMaxParts = 8;  // inputs of concat_multi.comp, outputs of split_multi.comp

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

}  // namespace

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

}  // namespace vkg::movement_tactics
