// Vulkan tactics of the elementwise family (see runtime/engine/tactic.h):
// one-input ops, two-input ops with numpy broadcasting (and the variadic
// Sum/Mean/Max/Min as a chain of them), Where, Cast/CastLike and
// BatchNormalization at inference. Each kind has a scalar tactic (one element
// per invocation, any broadcast) and a vec4 one (four contiguous output
// elements per invocation), both from one shader in shaders/elementwise/ whose
// op is a specialization constant.
//
// This file registers them; each kind's planner lives in an elementwise_*.cpp of
// its own (unary, binary, where, cast, batchnorm), the helpers they share in
// elementwise_common.h.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/tactic.h"
#include "runtime/tactics/elementwise_common.h"

namespace vkg {

namespace elementwise_tactics {
namespace {

// A planner of `blocking` for the registry.
template <std::optional<LayerPlan> (*Plan)(const LayerContext&, std::string&, Blocking)>
std::function<std::optional<LayerPlan>(const LayerContext&, std::string&)> with(Blocking blocking) {
  return [blocking](const LayerContext& ctx, std::string& why_not) { return Plan(ctx, why_not, blocking); };
}

}  // namespace
}  // namespace elementwise_tactics

void register_elementwise_tactics(TacticRegistry& r) {
  using namespace elementwise_tactics;
  const auto all = {Arith::F32, Arith::F16, Arith::F16Acc32};
  const auto moves = {Arith::F32, Arith::F16};  // data movement and conversion
  const std::vector<std::string> cast_ops = {"Cast", "CastLike"};
  // vec4 first: faster where it serves; the scalar tactics serve every layer.
  r.add_variants("unary.vec4", unary_op_names(), 10, all, with<plan_unary>(Blocking::Vec4));
  r.add_variants("unary.scalar", unary_op_names(), 20, all, with<plan_unary>(Blocking::Scalar));
  r.add_variants("binary.vec4", binary_op_names(), 10, all, with<plan_binary>(Blocking::Vec4));
  r.add_variants("binary.scalar", binary_op_names(), 20, all, with<plan_binary>(Blocking::Scalar));
  r.add_variants("where.vec4", {"Where"}, 10, moves, with<plan_where>(Blocking::Vec4));
  r.add_variants("where.scalar", {"Where"}, 20, moves, with<plan_where>(Blocking::Scalar));
  r.add_variants("cast.vec4", cast_ops, 10, moves, with<plan_cast>(Blocking::Vec4));
  r.add_variants("cast.scalar", cast_ops, 20, moves, with<plan_cast>(Blocking::Scalar));
  r.add_variants("batchnorm.vec4", {"BatchNormalization"}, 10, all, with<plan_batchnorm>(Blocking::Vec4));
  r.add_variants("batchnorm.scalar", {"BatchNormalization"}, 20, all, with<plan_batchnorm>(Blocking::Scalar));
  r.add_variants("quantize.scalar", {"QuantizeLinear", "DequantizeLinear"}, 20, {Arith::F32}, plan_quantize);
  r.add_variants("dynamic_quantize.two_pass", {"DynamicQuantizeLinear"}, 20, {Arith::F32}, plan_dynamic_quantize);
}

}  // namespace vkg
