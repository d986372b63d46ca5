// The gemm dispatch pieces declared in gemm_common.h, shared with the conv
// family: push constants, grids and workgroup sizes, the gemm/block.comp
// variant and its specialization constants, and the shared-memory tiles.
#include "runtime/tactics/gemm_common.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace vkg {

std::vector<uint32_t> gemm_common_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags) {
  if (!p.a_index.empty()) flags |= kGemmFlagBatchTable;
  const bool table = !p.a_index.empty();
  return {uint32_t(p.M),
          uint32_t(p.N),
          uint32_t(p.K),
          uint32_t(p.batches),
          uint32_t(table ? 0 : p.a_bs),
          uint32_t(p.a_sm),
          uint32_t(p.a_sk),
          uint32_t(table ? 0 : p.b_bs),
          uint32_t(p.b_sk),
          uint32_t(p.b_sn),
          uint32_t(c_sm),
          uint32_t(c_sn),
          flags};
}

std::optional<std::array<uint32_t, 3>> gemm_grid_groups(int64_t columns, uint32_t local, int64_t rows, int64_t batches,
                                                        const DeviceProfile& device) {
  auto limit = [](uint32_t l) { return l ? int64_t(l) : int64_t(65535); };
  const int64_t x = std::max<int64_t>(1, (columns + local - 1) / local);
  if (x > limit(device.max_workgroup_count[0])) return std::nullopt;
  return std::array<uint32_t, 3>{uint32_t(x),
                                 uint32_t(std::clamp<int64_t>(rows, 1, limit(device.max_workgroup_count[1]))),
                                 uint32_t(std::clamp<int64_t>(batches, 1, limit(device.max_workgroup_count[2])))};
}

uint32_t column_local_size(int64_t columns, uint32_t local, const DeviceProfile& device) {
  const int64_t subgroup = std::max<int64_t>(1, device.subgroup_size);
  return uint32_t(std::clamp<int64_t>((columns + subgroup - 1) / subgroup * subgroup, 1, local));
}

std::vector<uint32_t> gemm_float_push(const Product& p, int64_t c_sm, int64_t c_sn, uint32_t flags, float alpha,
                                      float beta) {
  std::vector<uint32_t> push = gemm_common_push(p, c_sm, c_sn, flags);
  push.insert(push.end(), {std::bit_cast<uint32_t>(alpha), std::bit_cast<uint32_t>(beta), 0u});
  return push;
}

namespace {

bool block_wide_a_fits(const Product& p, const DeviceProfile& device, std::string& why_not) {
  if (!device.shader_int64) {
    why_not = "needs 64-bit integers in shaders (device feature int64)";
    return false;
  }
  if (!(p.a_sk == 1 && p.a_sm % 8 == 0 && p.a_bs % 8 == 0 && p.a_index.empty())) {
    why_not = "needs A rows and batches starting at multiples of 8 elements (K % 8 == 0, no batch table)";
    return false;
  }
  return true;
}

bool block_shuffle_a_fits(uint32_t rows, uint32_t local, const DeviceProfile& device, std::string& why_not) {
  if (!device.subgroup_shuffle) {
    why_not = "needs subgroup shuffles (device feature subgroup-shuffle)";
    return false;
  }
  if (device.subgroup_size < 8 || rows % 8 != 0 || local % device.subgroup_size != 0) {
    why_not = "needs subgroups of 8 or more invocations, whole ones in a workgroup, and blocks of a multiple of 8 rows";
    return false;
  }
  return true;
}

}  // namespace

bool set_block_shader(const LayerContext& ctx, const Product& p, uint32_t rows, uint32_t local, bool wide_a,
                      bool shuffle_a, Dispatch& d, std::string& why_not) {
  if (wide_a) {
    if (!block_wide_a_fits(p, ctx.device, why_not)) return false;
    d.shader = ctx.shader("gemm/block_wide_a");  // its A loads are the storage-buffer way to fewer loads
    return true;
  }
  if (shuffle_a) {
    if (!block_shuffle_a_fits(rows, local, ctx.device, why_not)) return false;
    d.subgroup_size = full_subgroup_size(ctx.device);  // every lane of a group of 8 takes part in the shuffles
  }
  const auto extent = [](int64_t batches, int64_t bs, int64_t rows, int64_t rs, int64_t cols) {
    return uint64_t(std::max<int64_t>(batches, 1)) * uint64_t(std::max<int64_t>(bs, rows * rs)) + uint64_t(cols);
  };
  const uint64_t a_extent = extent(p.batches, p.a_bs, p.M, p.a_sm, p.K);
  const uint64_t b_extent = extent(p.b_batches, p.b_bs, p.K, p.b_sk, p.N);
  d.shader = ctx.texel_shader(shuffle_a ? "gemm/block_shuffle_a" : "gemm/block", std::max(a_extent, b_extent),
                              /*wide_stores=*/true);
  return true;
}

std::vector<SpecValue> block_spec(const std::string& shader, uint32_t local, uint32_t rows, uint32_t col_vecs,
                                  const Product& p, uint32_t c_mode, const std::array<uint32_t, 6>& d2s_map) {
  const bool depth_to_space = d2s_map[3] != 0;
  // Taps kx = 0, 1 side by side: two vec4 stores per column vector (map: in d, h, w, kernel d, h, w).
  const bool d2s_pairs = depth_to_space && d2s_map[5] == 2 && d2s_map[2] % 4 == 0 && rows % 2 == 0;
  const bool store8 =
      is_texel_build(shader) && (depth_to_space ? d2s_pairs : col_vecs % 2 == 0 && p.N % 8 == 0 && c_mode != 2);
  std::vector<SpecValue> spec = {{0, local},
                                 {1, rows},
                                 {2, col_vecs},
                                 {3, p.N % 4 == 0 && !depth_to_space ? 1u : 0u},
                                 {4, depth_to_space ? 1u : 0u},
                                 {5, d2s_pairs ? 1u : 0u},
                                 {6, c_mode},
                                 {7, store8 ? 1u : 0u},
                                 {14, p.K % 4 != 0 ? 1u : 0u}};
  if (depth_to_space) {
    for (uint32_t i = 0; i < d2s_map.size(); ++i) spec.push_back({8 + i, d2s_map[i]});
  }
  return spec;
}

bool workgroup_fits(uint32_t invocations, uint64_t shared_bytes, const DeviceProfile& device, std::string& why_not) {
  if ((device.max_workgroup_invocations && invocations > device.max_workgroup_invocations) ||
      (device.max_workgroup_size[0] && invocations > device.max_workgroup_size[0]) ||
      (device.max_shared_memory_bytes && shared_bytes > device.max_shared_memory_bytes)) {
    why_not = "the device cannot run workgroups of " + std::to_string(invocations) + " invocations with " +
              std::to_string(shared_bytes) + " bytes of shared memory";
    return false;
  }
  return true;
}

std::optional<std::vector<SpecValue>> smem_tile_spec(const SmemTile& t, bool vec_a, bool vec_b, uint32_t splits,
                                                     Arith arith, const DeviceProfile& device, std::string& why_not) {
  const uint32_t invocations = t.invocations();
  const uint64_t shared = uint64_t(t.bm + t.bn) * t.bk * (arith == Arith::F16 ? 2 : 4);
  if (!workgroup_fits(invocations, shared, device, why_not)) return std::nullopt;
  return std::vector<SpecValue>{
      {0, invocations},     {1, t.bm},  {2, t.bn}, {3, t.bk}, {4, t.tm}, {5, t.tn}, {6, vec_a ? 1u : 0u},
      {7, vec_b ? 1u : 0u}, {8, splits}};
}

std::optional<std::array<uint32_t, 3>> smem_tile_groups(const SmemTile& t, int64_t M, int64_t N, int64_t z,
                                                        const DeviceProfile& device, std::string& why_not) {
  const auto groups = gemm_grid_groups((N + t.bn - 1) / t.bn, 1, (M + t.bm - 1) / t.bm, z, device);
  if (!groups) why_not = std::to_string(N) + " columns need more workgroups than the device allows";
  return groups;
}

}  // namespace vkg
