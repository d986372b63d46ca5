// The copies: Identity, inference Dropout (and its all-true mask), Reshape,
// Flatten, Squeeze and Unsqueeze (copy.vec4, copy.scalar on
// shaders/movement/copy.comp), where the graph optimizer did not alias them.
#include <cstring>

#include "runtime/core/error.h"
#include "runtime/tactics/movement_common.h"

namespace vkg::movement_tactics {

namespace {

// Dropout at inference: refuses training mode with a non-zero ratio (that needs random numbers).
bool dropout_is_copy(const LayerContext& ctx, std::string& why_not) {
  if (ctx.opset < 12 || !ctx.has_input(2)) return true;
  const auto training = constant_scalar(ctx, 2, why_not);
  if (!training) return false;
  if (*training == 0.0) return true;
  double ratio = 0.5;
  if (ctx.has_input(1)) {
    const auto r = constant_scalar(ctx, 1, why_not);
    if (!r) return false;
    ratio = *r;
  }
  if (ratio == 0.0) return true;
  why_not = "training mode with a non-zero ratio needs random numbers (inference only)";
  return false;
}

// Dropout's mask output: all true (ones of the input's type before opset 10).
Dispatch mask_dispatch(const LayerContext& ctx, const LayerTensor& mask) {
  uint32_t bits = 1;  // int32 storage: true
  uint32_t half = 0;
  switch (mask.storage) {
    case StorageType::F32: {
      const float one = 1.0f;
      std::memcpy(&bits, &one, sizeof bits);
      break;
    }
    case StorageType::F16:
      bits = 0x3c00;  // float16 1.0
      half = 1;
      break;
    case StorageType::I32:
      break;
  }
  return make_dispatch(ctx, "fill", {{1, half}}, {BindingRef::output(1)}, {uint32_t(mask.size()), bits},
                       uint64_t(mask.size()));
}

}  // namespace

PlanResult plan_copy(const LayerContext& ctx, std::string& why_not, bool vec4) {
  const std::string& op = ctx.node.op_type;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& y = ctx.output(0);
  if (!check_data(ctx, {&x, &y}, why_not)) return std::nullopt;
  if (x.size() != y.size()) {
    why_not = "input and output sizes differ";
    return std::nullopt;
  }
  if (op == "Dropout") {
    if (!dropout_is_copy(ctx, why_not)) return std::nullopt;
  } else {
    // Reshape's shape, Squeeze/Unsqueeze's axes.
    for (size_t i = 1; i < ctx.inputs.size(); ++i)
      if (!require_constant(ctx, i, why_not)) return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef src = bind_input(ctx, plan, 0);
  plan.dispatches.push_back(copy_dispatch(ctx, src, BindingRef::output(0), x.size(), vec4));
  if (op == "Dropout" && ctx.outputs.size() > 1 && ctx.outputs[1].present()) {
    const LayerTensor& mask = ctx.outputs[1];
    if (mask.storage == StorageType::F16 && ctx.arith != Arith::F16) {
      why_not = "a float16 mask needs the f16 variant";
      return std::nullopt;
    }
    plan.dispatches.push_back(mask_dispatch(ctx, mask));
  }
  return plan;
}

}  // namespace vkg::movement_tactics
