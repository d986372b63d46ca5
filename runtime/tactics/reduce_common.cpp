// The helpers shared by the reduce kinds (declared in reduce_common.h): row
// geometry, axis masks, the family's checks and the row dispatch.
#include "runtime/tactics/reduce_common.h"

#include <algorithm>

#include "runtime/core/error.h"

namespace vkg::reduce_tactics {

namespace {

constexpr uint32_t kRowLocalSize = 64;  // thread-per-row tactics with many rows

}  // namespace

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

uint32_t workgroup_size(const LayerContext& ctx, uint32_t want) {
  uint32_t limit = 1024;
  if (ctx.device.max_workgroup_invocations > 0) limit = std::min(limit, ctx.device.max_workgroup_invocations);
  if (ctx.device.max_workgroup_size[0] > 0) limit = std::min(limit, ctx.device.max_workgroup_size[0]);
  return std::bit_floor(std::max<uint32_t>(1, std::min(want, limit)));
}

uint32_t cooperative_size(const LayerContext& ctx, uint32_t reduced) {
  return workgroup_size(ctx, std::clamp<uint32_t>(std::bit_ceil(std::max<uint32_t>(1, reduced / 16)), 32, 256));
}

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

}  // namespace vkg::reduce_tactics
