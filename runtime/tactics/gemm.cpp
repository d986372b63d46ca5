// Vulkan tactics of the gemm family (see runtime/engine/tactic.h): MatMul,
// Gemm, MatMulInteger and QLinearMatMul.
//
// Every layer is first described as one strided, batched product (Product:
// the push constants of shaders/gemm/common.glsl), then planned with one of
//   gemm.naive         one output per invocation, any layout
//   gemm.tiled<T>x<T>  shared-memory tiles of T x T (spec constant)
//   gemm.reg<R>x<C>    R x C outputs per invocation (C = 4 or 8) in vec4
//                      registers; a constant B is packed at plan time into
//                      vec4 rows
//   gemm.sgreg<R>x<C>  the same, the lanes of a subgroup sharing A's loads
//                      (subgroup broadcasts)
//   gemm.gemv1x4       the 1 x 4 register block, for products with M == 1
//   gemm.smem<BM>x<BN> shared-memory tiles of BM x BN with register blocks
//                      (gemm/smem_tile.glsl): the GPU-class form; _splitk
//                      splits a deep K over workgroups when the output has
//                      few tiles, then sums the splits (gemm/splitk_reduce)
//   gemm.smemv<BM>x<BN> the same as GPU SGEMMs do it (gemm/smem_vec.comp): runs of four
//                      rows and columns per invocation, vec4 shared memory, slices
//                      double-buffered through registers; _k16 with 16-deep slices, _g8
//                      with the tiles rasterized in bands of 8 row tiles (L2 reuse)
//   gemm.coopmat<BM>x<BN> fp16 on tensor cores (cooperative matrices,
//                      gemm/coopmat.comp), .f16 and .f16acc32 only, on devices
//                      with the cooperative-matrix feature
//   gemm.coopmatv<BM>x<BN> the same for aligned products, staged 16 bytes at a
//                      time through registers (gemm/coopmat_vec.comp); _db with
//                      double-buffered shared slices (_db_g8: and bands of 8 row
//                      tiles), _k64 with 64-deep slices, _w4 with four subgroups of 64 x 64,
//                      _fixed with K and the strides compiled in (no bounds checks on whole tiles)
// Integer layers (MatMulInteger, QLinearMatMul, and MatMul/Gemm on int32,
// int64 or uint32 tensors) run the exact int32 shader gemm/integer.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_common.h"

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

std::string block_shader(const LayerContext& ctx, const Product& p, bool wide_a) {
  if (wide_a) return ctx.shader("gemm/block_wide_a");  // its A loads are the storage-buffer way to fewer loads
  const auto extent = [](int64_t batches, int64_t bs, int64_t rows, int64_t rs, int64_t cols) {
    return uint64_t(std::max<int64_t>(batches, 1)) * uint64_t(std::max<int64_t>(bs, rows * rs)) + uint64_t(cols);
  };
  const uint64_t a_extent = extent(p.batches, p.a_bs, p.M, p.a_sm, p.K);
  const uint64_t b_extent = extent(p.b_batches, p.b_bs, p.K, p.b_sk, p.N);
  return ctx.texel_shader("gemm/block", std::max(a_extent, b_extent), /*wide_stores=*/true);
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
  return std::vector<SpecValue>{{0, invocations}, {1, t.bm},         {2, t.bn},          {3, t.bk}, {4, t.tm},
                                {5, t.tn},        {6, vec_a ? 1u : 0u}, {7, vec_b ? 1u : 0u}, {8, splits}};
}

std::optional<std::array<uint32_t, 3>> smem_tile_groups(const SmemTile& t, int64_t M, int64_t N, int64_t z,
                                                        const DeviceProfile& device, std::string& why_not) {
  const auto groups = gemm_grid_groups((N + t.bn - 1) / t.bn, 1, (M + t.bm - 1) / t.bm, z, device);
  if (!groups) why_not = std::to_string(N) + " columns need more workgroups than the device allows";
  return groups;
}

namespace {

constexpr uint32_t kLocalSize = 64;
// Split-K serves products of fewer output tiles than this (a GPU has more
// cores than that to fill) ...
constexpr int64_t kSplitKMaxTiles = 64;
// ... with at least this depth of k per split, and at most kMaxSplits splits.
constexpr int64_t kSplitKDepth = 128;
constexpr int64_t kMaxSplits = 16;

// The integer shader's own flag, beside kGemmFlagHasC and kGemmFlagBatchTable (gemm_common.h).
constexpr uint32_t kFlagRequantize = 4;

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }
int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }

// A and B of MatMul-like ops with numpy semantics (1-D promotion, broadcast
// batch dims); throws Error naming the node on shapes that do not multiply.
Product matmul_product(const LayerContext& ctx, size_t a_input, size_t b_input, bool fold_batches) {
  const Shape& a_in = ctx.input(a_input).shape;
  const Shape& b_in = ctx.input(b_input).shape;
  VKG_CHECK(!a_in.empty() && !b_in.empty(), ctx.node.describe()
                                                << ": inputs must have rank >= 1, got " << shape_to_string(a_in)
                                                << " and " << shape_to_string(b_in));
  Shape a_shape = a_in, b_shape = b_in;
  if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b_shape.size() == 1) b_shape.push_back(1);
  Product p;
  p.a_input = a_input;
  p.b_input = b_input;
  p.M = a_shape[a_shape.size() - 2];
  p.K = a_shape.back();
  p.N = b_shape.back();
  VKG_CHECK(b_shape[b_shape.size() - 2] == p.K,
            ctx.node.describe() << ": cannot multiply " << shape_to_string(a_in) << " by " << shape_to_string(b_in));
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2);
  const Shape b_batch(b_shape.begin(), b_shape.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(a_batch, b_batch);
  } catch (const Error& e) {
    VKG_THROW(ctx.node.describe() << ": batch dims do not broadcast: " << e.what());
  }
  p.batches = num_elements(batch);
  const int64_t a_batches = num_elements(a_batch);
  p.b_batches = num_elements(b_batch);
  p.a_sm = p.K, p.a_sk = 1, p.a_bs = p.M * p.K;
  p.b_sk = p.N, p.b_sn = 1, p.b_bs = p.K * p.N;
  if (fold_batches && p.b_batches == 1 && a_batches == p.batches) {
    // B is shared: the batches of A are just more rows.
    p.M *= p.batches;
    p.batches = 1;
    p.a_bs = p.b_bs = 0;
    return p;
  }
  // A batch shape whose size equals the output's broadcasts without expanding.
  const bool a_simple = a_batches == 1 || a_batches == p.batches;
  const bool b_simple = p.b_batches == 1 || p.b_batches == p.batches;
  if (a_simple && b_simple) {
    if (a_batches == 1) p.a_bs = 0;
    if (p.b_batches == 1) p.b_bs = 0;
    return p;
  }
  const std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
  const std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < p.batches; ++i) {
    int64_t ai = 0, bi = 0;
    for (size_t d = 0; d < batch.size(); ++d) ai += idx[d] * a_strides[d], bi += idx[d] * b_strides[d];
    p.a_index.push_back(ai);
    p.b_index.push_back(bi);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return p;
}

// A and B of Gemm (2-D, transA/transB); throws Error on shapes that do not multiply.
Product gemm_product(const LayerContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  VKG_CHECK(a.size() == 2 && b.size() == 2, ctx.node.describe() << ": A and B must be 2-D, got " << shape_to_string(a)
                                                                << " and " << shape_to_string(b));
  const bool trans_a = ctx.node.attr_int("transA", 0) != 0;
  const bool trans_b = ctx.node.attr_int("transB", 0) != 0;
  Product p;
  p.M = trans_a ? a[1] : a[0];
  p.K = trans_a ? a[0] : a[1];
  p.N = trans_b ? b[0] : b[1];
  VKG_CHECK((trans_b ? b[1] : b[0]) == p.K, ctx.node.describe() << ": cannot multiply A " << shape_to_string(a)
                                                                << " (transA " << trans_a << ") by B "
                                                                << shape_to_string(b) << " (transB " << trans_b << ")");
  p.a_sm = trans_a ? 1 : p.K;
  p.a_sk = trans_a ? p.M : 1;
  p.b_sk = trans_b ? 1 : p.N;
  p.b_sn = trans_b ? p.K : 1;
  return p;
}

// Broadcast strides {row, column} of Gemm's C over [M, N]; throws Error when C does not broadcast.
std::array<int64_t, 2> gemm_c_strides(const LayerContext& ctx, int64_t m, int64_t n) {
  const Shape& c = ctx.input(2).shape;
  VKG_CHECK(c.size() <= 2, ctx.node.describe() << ": C " << shape_to_string(c) << " has rank > 2");
  std::vector<int64_t> s;
  try {
    s = broadcast_strides(c, {m, n});
    VKG_CHECK(broadcast_shapes(c, {m, n}) == Shape({m, n}), "");
  } catch (const Error&) {
    VKG_THROW(ctx.node.describe() << ": C " << shape_to_string(c) << " does not broadcast to the output [" << m << ", "
                                  << n << "]");
  }
  return {s[0], s[1]};
}

bool is_8bit(DType d) { return d == DType::UInt8 || d == DType::Int8; }

// Declines (false, why_not) when a tensor of the layer cannot live on the device.
bool dtypes_supported(const LayerContext& ctx, std::string& why_not) {
  auto check = [&](const LayerTensor& t) {
    if (!t.present() || storage_for(t.dtype, Precision::FP32)) return true;
    why_not = std::string("tensor '") + t.name + "' has type " + dtype_name(t.dtype) +
              ", which the Vulkan backend does not support";
    return false;
  };
  return std::all_of(ctx.inputs.begin(), ctx.inputs.end(), check) &&
         std::all_of(ctx.outputs.begin(), ctx.outputs.end(), check);
}

// Declines when a buffer of the plan exceeds the device's storage buffer range.
bool buffers_fit(const LayerContext& ctx, const LayerPlan& plan, std::string& why_not) {
  const uint64_t range = ctx.device.max_storage_buffer_range;
  if (range == 0) return true;
  auto fits = [&](uint64_t bytes, const std::string& what) {
    if (bytes <= range) return true;
    why_not = what + " needs " + std::to_string(bytes) + " bytes, more than the device's storage buffer range of " +
              std::to_string(range);
    return false;
  };
  for (const LayerTensor& t : ctx.inputs) {
    if (t.present() && !fits(uint64_t(t.size()) * storage_element_bytes(t.storage), "input '" + t.name + "'"))
      return false;
  }
  for (const LayerTensor& t : ctx.outputs) {
    if (t.present() && !fits(uint64_t(t.size()) * storage_element_bytes(t.storage), "output '" + t.name + "'"))
      return false;
  }
  for (const Tensor& w : plan.weights) {
    if (!fits(w.nbytes(), "a packed weight")) return false;
  }
  return true;
}

uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }

// The batch table weight ({A offset, B offset} per batch) or the `zero` weight.
BindingRef batch_table(const Product& p, LayerPlan& plan, BindingRef zero) {
  if (p.a_index.empty()) return zero;
  std::vector<int32_t> table;
  for (size_t i = 0; i < p.a_index.size(); ++i) {
    table.push_back(int32_t(p.a_index[i] * p.a_bs));
    table.push_back(int32_t(p.b_index[i] * p.b_bs));
  }
  return add_weight(plan, Tensor::from_vector<int32_t>({int64_t(table.size())}, table));
}

BindingRef zero_weight(LayerPlan& plan) { return add_weight(plan, Tensor::from_vector<int32_t>({1}, {0})); }

// ---------------------------------------------------------------------------
// Integer layers: the exact int32 shader gemm/integer.

struct IntegerExtras {
  std::optional<size_t> a_zp, b_zp;  // zero point inputs
  int64_t a_zp_sm = 0, b_zp_sn = 0;
  bool requantize = false;
  float multiplier = 1;
  int32_t y_zero_point = 0, y_lo = 0, y_hi = 0;
  std::optional<size_t> c;  // Gemm's C
  int64_t c_sm = 0, c_sn = 0;
};

// Checks a zero point input of an 8-bit operand: one value, or `count` values (1-D).
void check_zero_point(const LayerContext& ctx, size_t zp, size_t operand, int64_t count, const char* name) {
  const LayerTensor& z = ctx.input(zp);
  VKG_CHECK(z.dtype == ctx.input(operand).dtype,
            ctx.node.describe() << ": the zero point of " << name << " has type " << dtype_name(z.dtype) << " but "
                                << name << " has type " << dtype_name(ctx.input(operand).dtype));
  VKG_CHECK(z.size() == 1 || (z.shape.size() == 1 && z.size() == count),
            ctx.node.describe() << ": the zero point of " << name << " has shape " << shape_to_string(z.shape)
                                << ", expected one value or " << count);
}

// A scale input holding one float32 value (float16 or bfloat16 from opset 21), which must
// be a build-time constant.
std::optional<float> constant_scale(const LayerContext& ctx, size_t i, const char* name, std::string& why_not) {
  const LayerTensor& s = ctx.input(i);
  VKG_CHECK(is_floating(s.dtype) && s.dtype != DType::Float64 && s.size() == 1,
            ctx.node.describe() << ": " << name << " must be one float32, float16 or bfloat16 value, got "
                                << dtype_name(s.dtype) << shape_to_string(s.shape));
  if (!s.is_constant()) {
    why_not = std::string(name) + " must be a build-time constant";
    return std::nullopt;
  }
  return float(s.constant->get_as_double(0));
}

LayerPlan integer_plan(const LayerContext& ctx, const Product& p, const IntegerExtras& x) {
  LayerPlan plan;
  const BindingRef zero = zero_weight(plan);
  const BindingRef a = bind_input(ctx, plan, p.a_input);
  const BindingRef b = bind_input(ctx, plan, p.b_input);
  const BindingRef c = x.c ? bind_input(ctx, plan, *x.c) : zero;
  const BindingRef a_zp = x.a_zp ? bind_input(ctx, plan, *x.a_zp) : zero;
  const BindingRef b_zp = x.b_zp ? bind_input(ctx, plan, *x.b_zp) : zero;
  const BindingRef table = batch_table(p, plan, zero);
  uint32_t flags = (x.c ? kGemmFlagHasC : 0) | (x.requantize ? kFlagRequantize : 0);
  Dispatch d;
  d.shader = "gemm/integer.f32";
  d.spec = {{0, kLocalSize}};
  d.bindings = {a, b, c, a_zp, b_zp, BindingRef::output(0), table};
  d.push = gemm_common_push(p, x.c_sm, x.c_sn, flags);
  d.push.insert(d.push.end(), {uint32_t(x.a_zp_sm), uint32_t(x.b_zp_sn), float_bits(x.multiplier),
                               uint32_t(x.y_zero_point), uint32_t(x.y_lo), uint32_t(x.y_hi), 0u});
  d.groups = linear_groups(uint64_t(p.batches * p.M * p.N), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// Det: shaders/gemm/det.comp, one invocation per matrix eliminating on a scratch copy.
std::optional<LayerPlan> plan_det(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = std::string("Det does not take ") + dtype_name(x.dtype) + " inputs";
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() >= 2 && x.shape.back() == x.shape[x.shape.size() - 2],
            ctx.node.describe() << ": the input must be square matrices [*, M, M], got " << shape_to_string(x.shape));
  const int64_t m = x.shape.back();
  const int64_t count = num_elements(Shape(x.shape.begin(), x.shape.end() - 2));
  LayerPlan plan;
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, uint64_t(x.size()) * 4));
  Dispatch d;
  d.shader = ctx.shader("gemm/det");
  d.spec = {{0, 64}};
  d.bindings = {bind_input(ctx, plan, 0), BindingRef::scratch(0), BindingRef::output(0)};
  d.push = {uint32_t(count), uint32_t(m)};
  d.groups = linear_groups(uint64_t(count), 64, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<LayerPlan> plan_matmul_integer(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  for (size_t i : {0, 1}) {
    VKG_CHECK(is_8bit(ctx.input(i).dtype), ctx.node.describe()
                                               << ": input " << i << " has type " << dtype_name(ctx.input(i).dtype)
                                               << ", expected uint8 or int8");
  }
  const Product p = matmul_product(ctx, 0, 1, false);
  IntegerExtras x;
  // A's zero point may be one per row, B's one per column.
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (ctx.has_input(2)) {
    check_zero_point(ctx, 2, 0, a.size() >= 2 ? a[a.size() - 2] : 1, "A");
    x.a_zp = 2;
    x.a_zp_sm = ctx.input(2).size() == 1 ? 0 : 1;
  }
  if (ctx.has_input(3)) {
    check_zero_point(ctx, 3, 1, b.size() >= 2 ? b.back() : 1, "B");
    x.b_zp = 3;
    x.b_zp_sn = ctx.input(3).size() == 1 ? 0 : 1;
  }
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

std::optional<LayerPlan> plan_qlinear_matmul(const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  for (size_t i : {0, 3}) {
    VKG_CHECK(is_8bit(ctx.input(i).dtype), ctx.node.describe()
                                               << ": input " << i << " has type " << dtype_name(ctx.input(i).dtype)
                                               << ", expected uint8 or int8");
  }
  const Product p = matmul_product(ctx, 0, 3, false);
  IntegerExtras x;
  check_zero_point(ctx, 2, 0, 1, "a");
  check_zero_point(ctx, 5, 3, 1, "b");
  x.a_zp = 2;
  x.b_zp = 5;
  const std::optional<float> a_scale = constant_scale(ctx, 1, "a_scale", why_not);
  const std::optional<float> b_scale = constant_scale(ctx, 4, "b_scale", why_not);
  const std::optional<float> y_scale = constant_scale(ctx, 6, "y_scale", why_not);
  if (!a_scale || !b_scale || !y_scale) return std::nullopt;
  const LayerTensor& y_zp = ctx.input(7);
  VKG_CHECK(is_8bit(y_zp.dtype) && y_zp.size() == 1,
            ctx.node.describe() << ": the output zero point must be one uint8 or int8 value, got "
                                << dtype_name(y_zp.dtype) << shape_to_string(y_zp.shape));
  if (!y_zp.is_constant()) {
    why_not = "y_zero_point must be a build-time constant";
    return std::nullopt;
  }
  x.requantize = true;
  x.multiplier = *a_scale * *b_scale / *y_scale;  // in float, as the reference
  x.y_zero_point = int32_t(y_zp.constant->get_as_double(0));
  x.y_lo = y_zp.dtype == DType::UInt8 ? 0 : -128;
  x.y_hi = y_zp.dtype == DType::UInt8 ? 255 : 127;
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

// MatMul and Gemm on int32/int64/uint32 tensors (computed in wrapping int32,
// exact whenever the results fit the int32 device storage).
std::optional<LayerPlan> plan_integer_product(const LayerContext& ctx, std::string& why_not) {
  const bool gemm = ctx.node.op_type == "Gemm";
  const Product p = gemm ? gemm_product(ctx) : matmul_product(ctx, 0, 1, false);
  IntegerExtras x;
  if (gemm) {
    const bool has_c = ctx.has_input(2);
    if (ctx.node.attr_float("alpha", 1.0f) != 1.0f || (has_c && ctx.node.attr_float("beta", 1.0f) != 1.0f)) {
      why_not = "integer Gemm with alpha or beta other than 1 (computed in float64 by ONNX) is not supported";
      return std::nullopt;
    }
    if (has_c) {
      x.c = 2;
      const auto [c_sm, c_sn] = gemm_c_strides(ctx, p.M, p.N);
      x.c_sm = c_sm, x.c_sn = c_sn;
    }
  }
  LayerPlan plan = integer_plan(ctx, p, x);
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

// ---------------------------------------------------------------------------
// Float layers: gemm/naive, gemm/tiled, gemm/reg.

enum class Algorithm { Naive, Tiled, Reg, Block, Smem, CoopMat };

}  // namespace

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
  if (dev.min_subgroup_size > 32 || dev.max_subgroup_size < 32) {
    why_not = "needs subgroups of 32 invocations";
    return false;
  }
  const uint32_t invocations = t.warps_m * t.warps_n * 32;
  const uint64_t shared = t.stages * (uint64_t(t.bm()) * (t.bk() / 8 + 1) + uint64_t(t.bk()) * (t.bn() / 8 + 1)) * 16 +
                          uint64_t(t.warps_m * t.warps_n) * 256 * (ctx.arith == Arith::F16Acc32 ? 4 : 2);
  if (!workgroup_fits(invocations, shared, dev, why_not)) return false;
  const auto groups = gemm_grid_groups(ceil_div(p.N, t.bn()), 1, ceil_div(p.M, t.bm()), p.batches, dev);
  if (!groups) {
    why_not = std::to_string(p.N) + " columns need more workgroups than the device allows";
    return false;
  }
  d.shader = ctx.shader("gemm/coopmat_vec");
  d.spec = {{0, invocations}, {1, t.warps_m}, {2, t.warps_n}, {3, t.frags_m},
            {4, t.frags_n},   {5, t.k_steps}, {6, t.stages},  {7, t.group_m}};
  if (t.fixed) {
    const bool whole = p.M % t.bm() == 0 && p.N % t.bn() == 0 && p.K % t.bk() == 0;
    d.spec.insert(d.spec.end(),
                  {{8, whole ? 1u : 0u}, {9, uint32_t(p.K)}, {10, uint32_t(p.a_sm)}, {11, uint32_t(p.b_sk)}});
  }
  d.subgroup_size = 32;
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

namespace {

struct FloatTactic {
  Algorithm algorithm = Algorithm::Naive;
  uint32_t block = 1;     // tile edge (Tiled) or rows per invocation (Reg, Block)
  uint32_t col_vecs = 1;  // Reg, Block: vec4 column vectors per invocation (Reg: 1 or 2, Block: 1..4)
  bool only_m1 = false;   // the GEMV form: products with M == 1 only
  bool share_a = false;   // Reg: lanes of a subgroup load A once and broadcast it
  bool wide_a = false;    // Block: A read eight floats per load (gemm/block_wide_a, device feature int64)
  SmemTile smem = {};     // Smem: the workgroup tile
  bool split_k = false;   // Smem: split K over workgroups (few output tiles, deep K)
  CoopTile coop = {};     // CoopMat: the workgroup
};

// B of a product in the vec4-row layout gemm/reg needs: [b_batches][K][round_up(N, 4)],
// zero-padded, in the input's storage form.
Tensor pack_b(const LayerContext& ctx, const Product& p) {
  const LayerTensor& in = ctx.input(p.b_input);
  const std::vector<double> src = in.constant->to_doubles();
  const int64_t ldb = round_up(p.N, 4);
  std::vector<float> packed(size_t(std::max<int64_t>(4, p.b_batches * p.K * ldb)), 0.0f);
  const int64_t stored_bs = p.K * p.N;  // B's own batch stride, whatever p.b_bs says
  for (int64_t bb = 0; bb < p.b_batches; ++bb)
    for (int64_t k = 0; k < p.K; ++k)
      for (int64_t n = 0; n < p.N; ++n)
        packed[size_t((bb * p.K + k) * ldb + n)] = float(src[size_t(bb * stored_bs + k * p.b_sk + n * p.b_sn)]);
  const Tensor t = Tensor::from_vector<float>({int64_t(packed.size())}, packed);
  return to_storage(t, in.storage, ctx.node.describe() + " packed B");
}

// gemm.smem*: completes `d` (bindings and push constants set) on the GPU form gemm/smem_vec.comp
// or the core (smem_core_dispatches) and adds it to `plan`.
bool plan_smem(const FloatTactic& tactic, const LayerContext& ctx, const Product& p, Dispatch d, LayerPlan& plan,
               std::string& why_not) {
  if (tactic.smem.quads) {
    if (!smem_vec_dispatch(ctx, p, tactic.smem, d, why_not)) return false;
    plan.dispatches.push_back(std::move(d));
    return true;
  }
  return smem_core_dispatches(ctx, p, tactic.smem, tactic.split_k, std::move(d), plan, why_not);
}

// How often an invocation of `tactic` loops along K, and whether its loop has barriers, for the
// device's loop iteration limit (measured on lavapipe at K = 140,000: the scalar-K forms, naive,
// reg, sgreg and gemv, came out wrong; block (vec4 along K), tiled and smem were right).
bool k_loop_fits(const FloatTactic& tactic, const LayerContext& ctx, int64_t k, std::string& why_not) {
  const uint64_t K = uint64_t(std::max<int64_t>(k, 1));
  switch (tactic.algorithm) {
    case Algorithm::Naive:
    case Algorithm::Reg:
      return loops_fit_device(ctx, K, 2, why_not);
    case Algorithm::Block:
      return loops_fit_device(ctx, K / 4 + 1, 2, why_not);
    case Algorithm::Tiled:
      return loops_fit_device(ctx, K / std::max<uint32_t>(tactic.block, 1) + 1, 8, why_not);
    case Algorithm::Smem:
      return loops_fit_device(ctx, K / std::max<uint32_t>(tactic.smem.bk, 1) + 1, 8, why_not);
    case Algorithm::CoopMat:
      return loops_fit_device(ctx, K / 16 + 1, 8, why_not);
  }
  return true;
}

std::optional<LayerPlan> plan_float(const FloatTactic& tactic, const LayerContext& ctx, std::string& why_not) {
  if (!dtypes_supported(ctx, why_not)) return std::nullopt;
  const bool gemm = ctx.node.op_type == "Gemm";
  const DType dtype = ctx.input(0).dtype;
  VKG_CHECK(ctx.input(1).dtype == dtype, ctx.node.describe() << ": inputs have different types " << dtype_name(dtype)
                                                             << " and " << dtype_name(ctx.input(1).dtype));
  if (!is_float_dtype(dtype)) {
    VKG_CHECK(dtype == DType::Int32 || dtype == DType::Int64 || dtype == DType::UInt32,
              ctx.node.describe() << ": input type " << dtype_name(dtype)
                                  << " is not supported (expects a float type or a 32/64-bit integer type)");
    if (tactic.algorithm == Algorithm::Naive && ctx.arith == Arith::F32) return plan_integer_product(ctx, why_not);
    why_not = std::string("integer ") + ctx.node.op_type + " runs on gemm.naive.f32 only";
    return std::nullopt;
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device has no fp16 arithmetic and storage";
    return std::nullopt;
  }

  Product p = gemm ? gemm_product(ctx) : matmul_product(ctx, 0, 1, true);
  if (tactic.share_a && ctx.device.subgroup_size == 1) {
    why_not = "subgroups of one invocation have nothing to share";
    return std::nullopt;
  }
  if (tactic.only_m1 && p.M != 1) {
    why_not = "GEMV needs M == 1, got M = " + std::to_string(p.M);
    return std::nullopt;
  }
  if (!k_loop_fits(tactic, ctx, p.K, why_not)) return std::nullopt;

  LayerPlan plan;
  const BindingRef zero = zero_weight(plan);
  const BindingRef a = bind_input(ctx, plan, 0);
  BindingRef b;
  const LayerTensor& b_in = ctx.input(1);
  const bool vec4_b = tactic.algorithm == Algorithm::Reg || tactic.algorithm == Algorithm::Block;
  const bool packs_b = vec4_b || tactic.algorithm == Algorithm::Smem;
  if (packs_b && b_in.is_constant()) {
    b = add_weight(plan, pack_b(ctx, p));
    const int64_t ldb = round_up(p.N, 4);
    p.b_sk = ldb;
    p.b_sn = 1;
    if (p.b_bs != 0 || !p.b_index.empty()) p.b_bs = p.K * ldb;
  } else {
    if (vec4_b && (p.b_sn != 1 || p.N % 4 != 0)) {
      why_not = "a runtime B must be untransposed with N % 4 == 0 for vec4 rows (N = " + std::to_string(p.N) +
                "); a constant B is packed";
      return std::nullopt;
    }
    b = bind_input(ctx, plan, 1);
  }

  // Gemm's C: beta folded into a constant C.
  uint32_t flags = 0;
  int64_t c_sm = 0, c_sn = 0;
  float beta = gemm ? ctx.node.attr_float("beta", 1.0f) : 1.0f;
  const float alpha = gemm ? ctx.node.attr_float("alpha", 1.0f) : 1.0f;
  BindingRef c = zero;
  // A MatMul has a C (its bias) only when the builder fused a following Add into it (graph_optimizer.h).
  if (ctx.has_input(2)) {
    const LayerTensor& c_in = ctx.input(2);
    VKG_CHECK(c_in.dtype == dtype, ctx.node.describe() << ": C has type " << dtype_name(c_in.dtype)
                                                       << " but A has type " << dtype_name(dtype));
    const std::array<int64_t, 2> c_strides = gemm_c_strides(ctx, p.M, p.N);
    c_sm = c_strides[0];
    c_sn = c_strides[1];
    flags |= kGemmFlagHasC;
    if (c_in.is_constant()) {
      std::vector<float> scaled;
      for (double v : c_in.constant->to_doubles()) scaled.push_back(beta * float(v));
      if (scaled.empty()) scaled.push_back(0.0f);
      const Tensor t = Tensor::from_vector<float>({int64_t(scaled.size())}, scaled);
      c = add_weight(plan, to_storage(t, c_in.storage, ctx.node.describe() + " C"));
      beta = 1.0f;
    } else {
      c = bind_input(ctx, plan, 2);
    }
  }

  Dispatch d;
  d.bindings = {a, b, c, BindingRef::output(0), batch_table(p, plan, zero)};
  d.push = gemm_float_push(p, c_sm, c_sn, flags, alpha, beta);
  const uint64_t outputs = uint64_t(p.batches * p.M * p.N);
  // Reg and Block: a workgroup owns one row block (uniform A addresses) and up to kLocalSize of its
  // column blocks.
  const int64_t columns = ceil_div(ceil_div(p.N, 4), tactic.col_vecs);
  const uint32_t column_local = column_local_size(columns, kLocalSize, ctx.device);
  switch (tactic.algorithm) {
    case Algorithm::Naive:
      d.shader = ctx.texel_shader("gemm/naive", uint64_t(std::max(ctx.input(0).size(), ctx.input(1).size())));
      d.spec = {{0, kLocalSize}};
      d.groups = linear_groups(outputs, kLocalSize, ctx.device);
      break;
    case Algorithm::Tiled: {
      const uint32_t t = tactic.block;
      const uint32_t invocations = t * t;
      const uint64_t shared = 2ull * invocations * (ctx.arith == Arith::F16 ? 2 : 4);
      if (!workgroup_fits(invocations, shared, ctx.device, why_not)) return std::nullopt;
      d.shader = ctx.shader("gemm/tiled");
      d.spec = {{0, invocations}, {1, t}};
      const uint64_t tiles = uint64_t(p.batches * ceil_div(p.M, t) * ceil_div(p.N, t));
      d.groups = linear_groups(tiles * invocations, invocations, ctx.device);
      break;
    }
    case Algorithm::Smem:
      break;  // plan_smem
    case Algorithm::CoopMat: {
      const CoopTile& t = tactic.coop;
      if (t.vec) {
        if (!coopmat_vec_dispatch(ctx, p, t, d, why_not)) return std::nullopt;
        break;
      }
      if (!coopmat_usable(ctx.device, ctx.arith, why_not)) return std::nullopt;
      const bool acc32 = ctx.arith == Arith::F16Acc32;
      const uint32_t invocations = t.warps_m * t.warps_n * ctx.device.subgroup_size;
      const uint64_t shared = uint64_t(t.bm() + t.bn()) * t.bk() * 2 + uint64_t(t.bm()) * t.bn() * (acc32 ? 4 : 2);
      if (!workgroup_fits(invocations, shared, ctx.device, why_not)) return std::nullopt;
      const auto groups = gemm_grid_groups(ceil_div(p.N, t.bn()), 1, ceil_div(p.M, t.bm()), p.batches, ctx.device);
      if (!groups) {
        why_not = std::to_string(p.N) + " columns need more workgroups than the device allows";
        return std::nullopt;
      }
      d.shader = ctx.shader("gemm/coopmat");
      d.spec = {{0, invocations}, {1, t.warps_m}, {2, t.warps_n}, {3, t.k_steps}};
      d.subgroup_size = ctx.device.subgroup_size;
      d.groups = *groups;
      break;
    }
    case Algorithm::Block: {
      if (!(p.a_sk == 1 && p.a_sm % 4 == 0 && p.a_bs % 4 == 0)) {
        why_not = "needs A as vec4 runs along k (untransposed, with K % 4 == 0)";
        return std::nullopt;
      }
      if (tactic.wide_a && !block_wide_a_fits(p, ctx.device, why_not)) return std::nullopt;
      d.shader = block_shader(ctx, p, tactic.wide_a);
      d.spec = block_spec(d.shader, column_local, tactic.block, tactic.col_vecs, p,
                          block_c_mode((flags & kGemmFlagHasC) != 0, c_sm, c_sn));
      d.push = gemm_float_push(p, c_sm, c_sn, flags, alpha, beta);
      break;
    }
    case Algorithm::Reg: {
      // A as vec4 runs along k: untransposed with K % 4 == 0 (so every row and batch base is aligned).
      const bool a_vec4 = p.a_sk == 1 && p.a_sm % 4 == 0 && p.a_bs % 4 == 0;
      d.shader = ctx.shader("gemm/reg");
      d.spec = {{0, column_local},           {1, tactic.block},    {2, a_vec4 ? 1u : 0u},
                {3, p.N % 4 == 0 ? 1u : 0u}, {4, tactic.col_vecs}, {5, tactic.share_a ? 1u : 0u}};
      if (tactic.share_a && ctx.device.subgroup_size_control) d.subgroup_size = ctx.device.subgroup_size;
      break;
    }
  }
  if (tactic.algorithm == Algorithm::Reg || tactic.algorithm == Algorithm::Block) {
    const auto groups = gemm_grid_groups(columns, column_local, ceil_div(p.M, tactic.block), p.batches, ctx.device);
    if (!groups) {
      why_not = std::to_string(p.N) + " columns need more workgroups than the device allows";
      return std::nullopt;
    }
    d.groups = *groups;
  }
  if (tactic.algorithm == Algorithm::Smem) {
    if (!plan_smem(tactic, ctx, p, d, plan, why_not)) return std::nullopt;
  } else {
    plan.dispatches.push_back(std::move(d));
  }
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

// The f32, f16 and f16acc32 variants of a float GEMM tactic.
void add_float(TacticRegistry& r, const std::string& base, int priority, FloatTactic tactic,
               const TacticRegistry::Traits& traits = {}) {
  r.add_variants(
      base, {"MatMul", "Gemm"}, priority, {Arith::F32, Arith::F16, Arith::F16Acc32},
      [tactic](const LayerContext& ctx, std::string& why_not) { return plan_float(tactic, ctx, why_not); }, traits);
}

// The tensor-core tactics: fp16 inputs, fp16 or fp32 accumulators, on devices with cooperative matrices.
void add_coopmat(TacticRegistry& r, const std::string& base, int priority, CoopTile tile) {
  const FloatTactic tactic{.algorithm = Algorithm::CoopMat, .coop = tile};
  r.add_variants(base, {"MatMul", "Gemm"}, priority, {Arith::F16, Arith::F16Acc32},
                 [tactic](const LayerContext& ctx, std::string& why_not) { return plan_float(tactic, ctx, why_not); },
                 {.device_feature = "cooperative-matrix"});
}

}  // namespace

void register_gemm_tactics(TacticRegistry& r) {
  // Register blocks (rows x columns per invocation). On lavapipe every element
  // load is costly and arithmetic is cheap, so larger blocks (more reuse per
  // load) and A loads shared over a subgroup win, at the price of longer
  // shader compiles.
  // Blocks held in registers (compile-time indexed, unrolled): the GPU-sane form, and on lavapipe the
  // fastest for large products.
  // The same reading A eight floats per load: fewer loads on lavapipe (fp32 only, 64-bit integers).
  {
    const FloatTactic wide{.algorithm = Algorithm::Block, .block = 16, .col_vecs = 4, .wide_a = true};
    r.add_variants("gemm.block16x16_wide_a", {"MatMul", "Gemm"}, 6, {Arith::F32},
                   [wide](const LayerContext& ctx, std::string& why_not) { return plan_float(wide, ctx, why_not); },
                   {.device_feature = "int64"});
  }
  add_float(r, "gemm.block16x16", 6, {.algorithm = Algorithm::Block, .block = 16, .col_vecs = 4});
  add_float(r, "gemm.block8x16", 7, {.algorithm = Algorithm::Block, .block = 8, .col_vecs = 4});
  add_float(r, "gemm.block16x8", 7, {.algorithm = Algorithm::Block, .block = 16, .col_vecs = 2});
  add_float(r, "gemm.block4x8", 13, {.algorithm = Algorithm::Block, .block = 4, .col_vecs = 2});
  add_float(r, "gemm.gemv1x4", 5, {.algorithm = Algorithm::Reg, .block = 1, .col_vecs = 1, .only_m1 = true});
  add_float(r, "gemm.sgreg16x4", 8, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 1, .share_a = true});
  add_float(r, "gemm.sgreg16x8", 9, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 2, .share_a = true});
  add_float(r, "gemm.reg16x8", 10, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 2});
  add_float(r, "gemm.reg16x4", 11, {.algorithm = Algorithm::Reg, .block = 16, .col_vecs = 1});
  add_float(r, "gemm.reg4x4", 12, {.algorithm = Algorithm::Reg, .block = 4, .col_vecs = 1});
  // Shared-memory tiles with register blocks: the GPU-class form (slow on lavapipe, where barriers are costly).
  add_float(r, "gemm.smem64x64", 14, {.algorithm = Algorithm::Smem, .smem = {64, 64, 16, 4, 4}});
  add_float(r, "gemm.smem128x128", 15, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8}});
  add_float(r, "gemm.smem128x64", 16, {.algorithm = Algorithm::Smem, .smem = {128, 64, 16, 8, 4}});
  add_float(r, "gemm.smem32x32", 17, {.algorithm = Algorithm::Smem, .smem = {32, 32, 32, 4, 4}});
  // The same in the form GPU SGEMMs take: vec4 shared memory, double-buffered slices (gemm/smem_vec.comp);
  // among the first candidates on GPUs, where level 3 times six per precision.
  add_float(r, "gemm.smemv128x128", 14, {.algorithm = Algorithm::Smem, .smem = {128, 128, 8, 8, 8, true}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv128x64", 15, {.algorithm = Algorithm::Smem, .smem = {128, 64, 8, 8, 4, true}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv64x64", 16, {.algorithm = Algorithm::Smem, .smem = {64, 64, 16, 4, 4, true}},
            {.gpu_priority = 4});
  // 16-deep slices: the fastest fp32 form on an H200 (4096^3: 80% of cuBLAS, 2026-11-27; _g8 81%,
  // within the runs' spread).
  add_float(r, "gemm.smemv128x128_k16", 16, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8, true}},
            {.gpu_priority = 2});
  add_float(r, "gemm.smemv128x128_k16_g8", 17, {.algorithm = Algorithm::Smem, .smem = {128, 128, 16, 8, 8, true, 8}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smemv128x128_g8", 16, {.algorithm = Algorithm::Smem, .smem = {128, 128, 8, 8, 8, true, 8}},
            {.gpu_priority = 3});
  add_float(r, "gemm.smem32x32_splitk", 18, {.algorithm = Algorithm::Smem, .smem = {32, 32, 32, 4, 4}, .split_k = true});
  add_coopmat(r, "gemm.coopmat64x64", 3, {.warps_m = 2, .warps_n = 2, .k_steps = 2});
  add_coopmat(r, "gemm.coopmat128x64", 4, {.warps_m = 4, .warps_n = 2, .k_steps = 2});
  add_coopmat(r, "gemm.coopmatv128x128", 1,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true});
  add_coopmat(r, "gemm.coopmatv128x256", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true});
  add_coopmat(r, "gemm.coopmatv64x64", 2,
              {.warps_m = 2, .warps_n = 2, .k_steps = 2, .frags_m = 2, .frags_n = 2, .vec = true});
  // The 128 x 128 tile with double-buffered slices, with 64-deep slices (half the barriers), and
  // with four subgroups of 64 x 64 each (more multiply-adds per fragment loaded).
  add_coopmat(r, "gemm.coopmatv128x128_db", 1,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .stages = 2});
  add_coopmat(r, "gemm.coopmatv128x128_k64", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 4, .frags_m = 4, .frags_n = 2, .vec = true});
  add_coopmat(
      r, "gemm.coopmatv128x128_db_g8", 2,
      {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .stages = 2, .group_m = 8});
  add_coopmat(r, "gemm.coopmatv128x128_w4", 2,
              {.warps_m = 2, .warps_n = 2, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true, .stages = 2});
  // The two fastest shapes on an H200 with K and the strides compiled in and, on whole tiles, no
  // bounds checks: 0.613 and 0.631 ms at 4096^3 (0.672 and 0.670 without), 2026-11-27. Four
  // subgroups of 64 x 128 (fragments 4 x 8: 12 loads per 32 multiply-adds) ran 4.3x slower, out of
  // registers (docs/bench.md, fourth GPU run).
  add_coopmat(r, "gemm.coopmatv128x256_fixed", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 4, .vec = true, .fixed = true});
  add_coopmat(r, "gemm.coopmatv128x128_fixed", 2,
              {.warps_m = 2, .warps_n = 4, .k_steps = 2, .frags_m = 4, .frags_n = 2, .vec = true, .fixed = true});
  add_float(r, "gemm.naive", 20, {.algorithm = Algorithm::Naive, .block = 1, .col_vecs = 1});
  add_float(r, "gemm.tiled16x16", 30, {.algorithm = Algorithm::Tiled, .block = 16, .col_vecs = 1});
  add_float(r, "gemm.tiled8x8", 31, {.algorithm = Algorithm::Tiled, .block = 8, .col_vecs = 1});
  r.add_variants("matmul_integer.naive", {"MatMulInteger"}, 20, {Arith::F32}, plan_matmul_integer);
  r.add_variants("qlinear_matmul.naive", {"QLinearMatMul"}, 20, {Arith::F32}, plan_qlinear_matmul);
  r.add_variants("det.elimination", {"Det"}, 20, {Arith::F32}, plan_det);
}

}  // namespace vkg
