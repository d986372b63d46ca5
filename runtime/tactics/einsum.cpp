// Vulkan tactics of Einsum (see runtime/engine/tactic.h), both reading the equation through
// runtime/core/einsum_equation.h:
//   einsum.generic  shaders/einsum/generic.comp: any equation of up to four operands, one
//                   invocation per output element looping over the summed index space;
//   einsum.gemm     two-operand equations of matrix-product form ("bij,bjk->bik",
//                   "bhqd,bhkd->bhqk", "ij,jk->ik") on the shared-memory GEMM shader
//                   gemm/tiled, with the operands' strides and a batch offset table.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/einsum_equation.h"
#include "runtime/core/error.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/gemm_common.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg {
namespace {

constexpr size_t kMaxOperands = 4;  // bindings 0-3 of shaders/einsum/generic.comp
constexpr uint32_t kGemmTile = 8;   // gemm/tiled's tile edge

// The equation of the layer; nullopt (why_not filled) when a tensor cannot be held.
std::optional<EinsumEquation> layer_equation(const LayerContext& ctx, std::string& why_not) {
  std::vector<Shape> shapes;
  for (const LayerTensor& t : ctx.inputs) {
    VKG_CHECK(t.present(), ctx.node.describe() << ": Einsum inputs cannot be omitted");
    shapes.push_back(t.shape);
  }
  for (const LayerTensor* t : {&ctx.inputs[0], &ctx.output(0)}) {
    if (!storage_for(t->dtype, ctx.precision)) {
      why_not = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ", which the Vulkan backend cannot hold";
      return std::nullopt;
    }
  }
  for (const LayerTensor& t : ctx.inputs)
    if (t.size() > std::numeric_limits<int32_t>::max()) {
      why_not = "input '" + t.name + "' has more elements than 32-bit indices address";
      return std::nullopt;
    }
  if (ctx.arith != Arith::F32 && !is_float_dtype(ctx.inputs[0].dtype)) {
    why_not = "the layer has no float tensors to compute in fp16";
    return std::nullopt;
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return std::nullopt;
  }
  return parse_einsum(ctx.node.attr_string("equation", ""), shapes, ctx.node.describe());
}

std::optional<LayerPlan> plan_generic(const LayerContext& ctx, std::string& why_not) {
  const auto e = layer_equation(ctx, why_not);
  if (!e) return std::nullopt;
  const size_t n = e->inputs.size();
  if (n > kMaxOperands) {
    why_not =
        "the equation has " + std::to_string(n) + " operands; the shader binds at most " + std::to_string(kMaxOperands);
    return std::nullopt;
  }
  const int64_t total = num_elements(e->output_shape()), summed = e->summed_count();
  if (summed > std::numeric_limits<int32_t>::max()) {
    why_not = "the summed index space has more than 2^31 elements";
    return std::nullopt;
  }
  std::vector<int32_t> table;
  for (int32_t l : e->output) table.push_back(int32_t(e->sizes[size_t(l)]));
  for (size_t k = 0; k < n; ++k)
    for (int32_t l : e->output) table.push_back(int32_t(e->strides[k][size_t(l)]));
  for (int32_t l : e->summed) table.push_back(int32_t(e->sizes[size_t(l)]));
  for (size_t k = 0; k < n; ++k)
    for (int32_t l : e->summed) table.push_back(int32_t(e->strides[k][size_t(l)]));
  if (table.empty()) table.push_back(0);
  LayerPlan plan;
  Dispatch d;
  for (size_t k = 0; k < kMaxOperands; ++k)
    d.bindings.push_back(k < n ? bind_input(ctx, plan, k) : add_weight(plan, Tensor(DType::Int32, {1})));
  d.bindings.push_back(BindingRef::output(0));
  d.bindings.push_back(add_weight(plan, Tensor::from_vector<int32_t>({int64_t(table.size())}, table)));
  d.shader = ctx.shader("einsum/generic");
  d.spec = {{0, kLocalSize}, {1, u32(n)}, {2, ctx.inputs[0].storage == StorageType::I32 ? 1u : 0u}};
  d.push = {u32(total), u32(e->output.size()), u32(e->summed.size()), u32(summed)};
  d.groups = linear_groups(uint64_t(total), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<LayerPlan> plan_gemm(const LayerContext& ctx, std::string& why_not) {
  const auto e = layer_equation(ctx, why_not);
  if (!e) return std::nullopt;
  if (!is_float_dtype(ctx.inputs[0].dtype)) {
    why_not = "integer data (the GEMM shaders are float)";
    return std::nullopt;
  }
  const auto g = einsum_as_gemm(*e, why_not);
  if (!g) {
    why_not = "not a matrix product: " + why_not;
    return std::nullopt;
  }
  if (g->M == 0 || g->N == 0 || g->K == 0 || g->a_offsets.empty()) {
    why_not = "an empty product";
    return std::nullopt;
  }
  Product p;
  p.a_input = g->a;
  p.b_input = g->b;
  p.M = g->M;
  p.N = g->N;
  p.K = g->K;
  p.batches = int64_t(g->a_offsets.size());
  p.a_sm = g->a_sm;
  p.a_sk = g->a_sk;
  p.b_sk = g->b_sk;
  p.b_sn = g->b_sn;
  LayerPlan plan;
  const BindingRef zero = add_weight(plan, Tensor(DType::Int32, {1}));
  uint32_t flags = 0;
  BindingRef table = zero;
  if (p.batches > 1) {
    std::vector<int32_t> offsets;
    for (size_t i = 0; i < g->a_offsets.size(); ++i) {
      offsets.push_back(int32_t(g->a_offsets[i]));
      offsets.push_back(int32_t(g->b_offsets[i]));
    }
    table = add_weight(plan, Tensor::from_vector<int32_t>({int64_t(offsets.size())}, offsets));
    flags = kGemmFlagBatchTable;
  }
  const uint32_t invocations = kGemmTile * kGemmTile;
  if (ctx.device.max_workgroup_invocations && invocations > ctx.device.max_workgroup_invocations) {
    why_not = "the device cannot run workgroups of " + std::to_string(invocations) + " invocations";
    return std::nullopt;
  }
  Dispatch d;
  d.shader = ctx.shader("gemm/tiled");
  d.spec = {{0, invocations}, {1, kGemmTile}};
  d.bindings = {bind_input(ctx, plan, g->a), bind_input(ctx, plan, g->b), zero, BindingRef::output(0), table};
  d.push = gemm_float_push(p, 0, 0, flags, 1.0f, 0.0f);
  const auto tiles = [](int64_t v) { return uint64_t((v + kGemmTile - 1) / kGemmTile); };
  d.groups = linear_groups(uint64_t(p.batches) * tiles(p.M) * tiles(p.N) * invocations, invocations, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace

void register_einsum_tactics(TacticRegistry& r) {
  using enum Arith;
  r.add_variants("einsum.generic", {"Einsum"}, 1, {F32, F16, F16Acc32}, plan_generic);
  r.add_variants("einsum.gemm", {"Einsum"}, 0, {F32, F16, F16Acc32}, plan_gemm);
}

}  // namespace vkg
