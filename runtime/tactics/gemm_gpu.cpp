// The GPU-class GEMM cores declared in gemm_common.h, shared with the conv
// family: the shared-memory core (gemm/smem.comp, with split-K and its
// reduction), its vec4 form (gemm/smem_vec.comp) and cooperative matrices on
// tensor cores (gemm/coopmat_vec.comp).
#include <algorithm>
#include <string>

#include "runtime/tactics/gemm_planners.h"

namespace vkg {

namespace {

using gemm_tactics::ceil_div;

// Split-K serves products of fewer output tiles than this (a GPU has more
// cores than that to fill) ...
constexpr int64_t kSplitKMaxTiles = 64;
// ... with at least this depth of k per split, and at most kMaxSplits splits.
constexpr int64_t kSplitKDepth = 128;
constexpr int64_t kMaxSplits = 16;

}  // namespace

uint32_t coopmat_subgroup_size(const DeviceProfile& dev) {
  return dev.min_subgroup_size <= 32 && dev.max_subgroup_size >= 32 ? 32 : dev.subgroup_size;
}

bool coopmat_usable(const DeviceProfile& device, Arith arith, std::string& why_not) {
  const bool acc32 = arith == Arith::F16Acc32;
  if (!device.cooperative_matrix_shape(16, 16, 16, acc32)) {
    why_not = std::string("the device offers no 16x16x16 fp16 cooperative matrices with ") + (acc32 ? "fp32" : "fp16") +
              " accumulators (device feature cooperative-matrix)";
    return false;
  }
  if (!device.subgroup_size_control || device.subgroup_size == 0) {
    why_not = "needs subgroup size control to number the subgroups of a workgroup";
    return false;
  }
  if (device.cooperative_matrix_emulated && coopmat_subgroup_size(device) < 8) {
    // common/coopmat.glsl's emulation holds two of a fragment's 16 rows per invocation.
    why_not = "the emulated cooperative matrices need subgroups of 8 or more";
    return false;
  }
  return true;
}

bool coopmat_vec_dispatch(const LayerContext& ctx, const Product& p, const CoopTile& t, Dispatch& d,
                          std::string& why_not) {
  if (!coopmat_usable(ctx.device, ctx.arith, why_not)) return false;
  if (!a_runs(p, 8) || !b_runs(p, 8)) {
    why_not = "needs A and B as runs of eight fp16 values (untransposed, K and N multiples of 8)";
    return false;
  }
  if (!p.a_index.empty()) {
    why_not = "broadcast batch dims (a batch table) are gemm.coopmat*'s";
    return false;
  }
  const DeviceProfile& dev = ctx.device;
  const uint32_t subgroup = coopmat_subgroup_size(dev);
  const uint32_t invocations = t.warps_m * t.warps_n * subgroup;
  const uint64_t shared = t.stages * (uint64_t(t.bm()) * (t.bk() / 8 + 1) + uint64_t(t.bk()) * (t.bn() / 8 + 1)) * 16 +
                          uint64_t(t.warps_m * t.warps_n) * 256 * (ctx.arith == Arith::F16Acc32 ? 4 : 2);
  if (!workgroup_fits(invocations, shared, dev, why_not)) return false;
  const auto groups = gemm_grid_groups(ceil_div(p.N, t.bn()), 1, ceil_div(p.M, t.bm()), p.batches, dev);
  if (!groups) {
    why_not = std::to_string(p.N) + " columns need more workgroups than the device allows";
    return false;
  }
  d.shader = ctx.coopmat_shader("gemm/coopmat_vec");
  d.spec = {{0, invocations}, {1, t.warps_m}, {2, t.warps_n}, {3, t.frags_m},
            {4, t.frags_n},   {5, t.k_steps}, {6, t.stages},  {7, t.group_m}};
  if (t.fixed) {
    const bool whole = p.M % t.bm() == 0 && p.N % t.bn() == 0 && p.K % t.bk() == 0;
    d.spec.insert(d.spec.end(),
                  {{8, whole ? 1u : 0u}, {9, uint32_t(p.K)}, {10, uint32_t(p.a_sm)}, {11, uint32_t(p.b_sk)}});
  }
  d.spec.push_back({12, subgroup});
  d.subgroup_size = subgroup;
  d.groups = *groups;
  return true;
}

bool coopmat_tile_dispatch(const LayerContext& ctx, const std::string& shader_base, int64_t M, int64_t N,
                           int64_t batches, const CoopTile& t, Dispatch& d, std::string& why_not) {
  if (!coopmat_usable(ctx.device, ctx.arith, why_not)) return false;
  const bool acc32 = ctx.arith == Arith::F16Acc32;
  const DeviceProfile& dev = ctx.device;
  const uint32_t subgroup = coopmat_subgroup_size(dev);
  const uint32_t invocations = t.warps_m * t.warps_n * subgroup;
  const uint64_t shared = uint64_t(t.bm() + t.bn()) * t.bk() * 2 + uint64_t(t.bm()) * t.bn() * (acc32 ? 4 : 2);
  if (!workgroup_fits(invocations, shared, dev, why_not)) return false;
  const auto groups = gemm_grid_groups(ceil_div(N, t.bn()), 1, ceil_div(M, t.bm()), batches, dev);
  if (!groups) {
    why_not = std::to_string(N) + " columns need more workgroups than the device allows";
    return false;
  }
  d.shader = ctx.coopmat_shader(shader_base);
  d.spec = {{0, invocations}, {1, t.warps_m}, {2, t.warps_n}, {3, t.k_steps}};
  d.subgroup_size = subgroup;
  d.groups = *groups;
  return true;
}

bool smem_core_dispatches(const LayerContext& ctx, const Product& p, const SmemTile& t, bool split_k, Dispatch d,
                          LayerPlan& plan, std::string& why_not) {
  uint32_t splits = 1;
  if (split_k) {
    const int64_t tiles = ceil_div(p.M, t.bm) * ceil_div(p.N, t.bn) * p.batches;
    if (tiles >= kSplitKMaxTiles) {
      why_not = "the product already spreads over " + std::to_string(tiles) +
                " workgroups; split-K serves fewer than " + std::to_string(kSplitKMaxTiles);
      return false;
    }
    splits = uint32_t(std::min(kMaxSplits, p.K / kSplitKDepth));
    if (splits < 2) {
      why_not = "K = " + std::to_string(p.K) +
                " is too shallow to split (needs K >= " + std::to_string(2 * kSplitKDepth) + ")";
      return false;
    }
  }
  const auto spec = smem_tile_spec(t, a_runs(p, 4), b_runs(p, 4), splits, ctx.arith, ctx.device, why_not);
  if (!spec) return false;
  const auto groups = smem_tile_groups(t, p.M, p.N, p.batches * splits, ctx.device, why_not);
  if (!groups) return false;
  d.shader = ctx.shader("gemm/smem");
  d.spec = *spec;
  d.groups = *groups;
  if (splits == 1) {
    plan.dispatches.push_back(std::move(d));
    return true;
  }
  const uint64_t outputs = uint64_t(p.batches * p.M * p.N);
  const uint64_t bytes = std::max<uint64_t>(16, splits * outputs * 4);
  if (ctx.device.max_storage_buffer_range && bytes > ctx.device.max_storage_buffer_range) {
    why_not = "the partial sums need " + std::to_string(bytes) + " bytes, more than the device's storage buffer range";
    return false;
  }
  const BindingRef partials = BindingRef::scratch(uint32_t(plan.scratch_bytes.size()));
  plan.scratch_bytes.push_back(bytes);
  Dispatch reduce;
  reduce.shader = ctx.shader("gemm/splitk_reduce");
  reduce.spec = {{0, kLocalSize}, {1, splits}};
  reduce.bindings = {partials, d.bindings[1], d.bindings[2], d.bindings[3]};
  reduce.push = d.push;
  reduce.groups = linear_groups(outputs, kLocalSize, ctx.device);
  d.bindings[3] = partials;
  plan.dispatches.push_back(std::move(d));
  plan.dispatches.push_back(std::move(reduce));
  return true;
}

bool smem_vec_dispatch(const LayerContext& ctx, const Product& p, const SmemTile& t, Dispatch& d,
                       std::string& why_not) {
  if (!a_runs(p, 4) || !b_runs(p, 4)) {
    why_not = "needs A and B as vec4 runs (untransposed, K and N multiples of 4)";
    return false;
  }
  const uint64_t shared = 2ull * (t.bm + t.bn) * t.bk * (ctx.arith == Arith::F16 ? 2 : 4);
  if (!workgroup_fits(t.invocations(), shared, ctx.device, why_not)) return false;
  const auto groups = smem_tile_groups(t, p.M, p.N, p.batches, ctx.device, why_not);
  if (!groups) return false;
  d.shader = ctx.shader("gemm/smem_vec");
  d.spec = {{0, t.invocations()}, {1, t.bm}, {2, t.bn}, {3, t.bk}, {4, t.tm}, {5, t.tn}, {6, t.group_m}};
  d.groups = *groups;
  return true;
}

}  // namespace vkg
