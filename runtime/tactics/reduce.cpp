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
//
// This file registers them; each kind's planner lives in a reduce_*.cpp of its
// own (reduction, softmax, norm, axis), the helpers they share in
// reduce_common.h.
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/reduce_common.h"

namespace vkg {

namespace reduce_tactics {
namespace {

template <std::optional<LayerPlan> (*Plan)(const LayerContext&, std::string&, Algo), Algo A>
std::optional<LayerPlan> planner(const LayerContext& ctx, std::string& why_not) {
  return Plan(ctx, why_not, A);
}

}  // namespace
}  // namespace reduce_tactics

void register_reduce_tactics(TacticRegistry& r) {
  using namespace reduce_tactics;
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
