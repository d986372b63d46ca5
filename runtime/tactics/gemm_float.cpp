// The float gemm layers (MatMul, Gemm): gemm.naive, gemm.tiled, the register
// blocks (gemm.reg, gemm.sgreg, gemm.gemv, gemm.block), the shared-memory tiles
// (gemm.smem, gemm.smemv) and cooperative matrices (gemm.coopmat, gemm.coopmatv),
// all one planner over a FloatTactic: B packed or bound, C folded, then the
// algorithm's shader and grid.
#include <algorithm>
#include <array>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/tactics/gemm_planners.h"

namespace vkg::gemm_tactics {

namespace {

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

// B bound for `tactic`: a constant B packed into vec4 rows where the tactic reads them (the
// strides of `p` then describe the packed B), else the input as it is; nullopt (why_not filled)
// where a runtime B cannot be read as vec4 rows.
std::optional<BindingRef> bind_b(const FloatTactic& tactic, const LayerContext& ctx, Product& p, LayerPlan& plan,
                                 std::string& why_not) {
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
  return b;
}

// The C of a layer: Gemm's, or a MatMul's bias, which it has only when the builder fused a
// following Add into it (graph_optimizer.h); `zero` where there is none. Beta is folded into a
// constant C (and is then 1).
struct GemmC {
  BindingRef c;
  uint32_t flags = 0;
  int64_t c_sm = 0, c_sn = 0;
  float beta = 1.0f;
};

GemmC bind_c(const LayerContext& ctx, const Product& p, LayerPlan& plan, BindingRef zero) {
  const bool gemm = ctx.node.op_type == "Gemm";
  const DType dtype = ctx.input(0).dtype;
  uint32_t flags = 0;
  int64_t c_sm = 0, c_sn = 0;
  float beta = gemm ? ctx.node.attr_float("beta", 1.0f) : 1.0f;
  BindingRef c = zero;
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
  return GemmC{c, flags, c_sm, c_sn, beta};
}

// The shader, specialization constants and grid of `d` (bindings and push constants set) for
// `tactic`'s algorithm; gemm.smem* is completed by plan_smem. False (why_not filled) where the
// algorithm cannot serve the product.
bool algorithm_dispatch(const FloatTactic& tactic, const LayerContext& ctx, const Product& p, const GemmC& gc,
                        float alpha, Dispatch& d, std::string& why_not) {
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
      if (!workgroup_fits(invocations, shared, ctx.device, why_not)) return false;
      d.shader = ctx.shader("gemm/tiled");
      d.spec = {{0, invocations}, {1, t}};
      const uint64_t tiles = uint64_t(p.batches * ceil_div(p.M, t) * ceil_div(p.N, t));
      d.groups = linear_groups(tiles * invocations, invocations, ctx.device);
      break;
    }
    case Algorithm::Smem:
      break;  // plan_smem
    case Algorithm::CoopMat:
      if (tactic.coop.vec ? !coopmat_vec_dispatch(ctx, p, tactic.coop, d, why_not)
                          : !coopmat_tile_dispatch(ctx, "gemm/coopmat", p.M, p.N, p.batches, tactic.coop, d, why_not))
        return false;
      break;
    case Algorithm::Block: {
      if (!(p.a_sk == 1 && p.a_sm % 4 == 0 && p.a_bs % 4 == 0)) {
        why_not = "needs A as vec4 runs along k (untransposed, with K % 4 == 0)";
        return false;
      }
      if (!set_block_shader(ctx, p, tactic.block, column_local, tactic.wide_a, tactic.share_a, d, why_not))
        return false;
      d.spec = block_spec(d.shader, column_local, tactic.block, tactic.col_vecs, p,
                          block_c_mode((gc.flags & kGemmFlagHasC) != 0, gc.c_sm, gc.c_sn));
      d.push = gemm_float_push(p, gc.c_sm, gc.c_sn, gc.flags, alpha, gc.beta);
      break;
    }
    case Algorithm::Reg: {
      // A as vec4 runs along k: untransposed with K % 4 == 0 (so every row and batch base is aligned).
      const bool a_vec4 = p.a_sk == 1 && p.a_sm % 4 == 0 && p.a_bs % 4 == 0;
      d.shader = ctx.shader("gemm/reg");
      d.spec = {{0, column_local},           {1, tactic.block},    {2, a_vec4 ? 1u : 0u},
                {3, p.N % 4 == 0 ? 1u : 0u}, {4, tactic.col_vecs}, {5, tactic.share_a ? 1u : 0u}};
      if (tactic.share_a) d.subgroup_size = full_subgroup_size(ctx.device);
      break;
    }
  }
  if (tactic.algorithm == Algorithm::Reg || tactic.algorithm == Algorithm::Block) {
    const auto groups = gemm_grid_groups(columns, column_local, ceil_div(p.M, tactic.block), p.batches, ctx.device);
    if (!groups) {
      why_not = std::to_string(p.N) + " columns need more workgroups than the device allows";
      return false;
    }
    d.groups = *groups;
  }
  return true;
}

}  // namespace

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
  const std::optional<BindingRef> b = bind_b(tactic, ctx, p, plan, why_not);
  if (!b) return std::nullopt;
  // Gemm's C: beta folded into a constant C.
  const float alpha = gemm ? ctx.node.attr_float("alpha", 1.0f) : 1.0f;
  const GemmC gc = bind_c(ctx, p, plan, zero);

  Dispatch d;
  d.bindings = {a, *b, gc.c, BindingRef::output(0), batch_table(p, plan, zero)};
  d.push = gemm_float_push(p, gc.c_sm, gc.c_sn, gc.flags, alpha, gc.beta);
  if (!algorithm_dispatch(tactic, ctx, p, gc, alpha, d, why_not)) return std::nullopt;
  if (tactic.algorithm == Algorithm::Smem) {
    if (!plan_smem(tactic, ctx, p, d, plan, why_not)) return std::nullopt;
  } else {
    plan.dispatches.push_back(std::move(d));
  }
  if (!buffers_fit(ctx, plan, why_not)) return std::nullopt;
  return plan;
}

}  // namespace vkg::gemm_tactics
