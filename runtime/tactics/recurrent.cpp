// Tactics of the recurrent ops (RNN, GRU, LSTM): shaders/recurrent/cell.comp, one
// workgroup per (direction, batch element) running the whole sequence with the hidden
// state in shared memory. The recurrence is sequential by nature; batch elements and
// directions run in parallel, hidden units across the workgroup.
#include <algorithm>
#include <bit>

#include "runtime/core/error.h"
#include "runtime/core/recurrence.h"
#include "runtime/engine/tactic.h"
#include "runtime/vulkan/device_info.h"

namespace vkg {

namespace {

constexpr uint32_t kFlagBias = 1, kFlagLengths = 2, kFlagInitialH = 4, kFlagInitialC = 8, kFlagPeepholes = 16,
                   kFlagY = 32, kFlagYH = 64, kFlagYC = 128;

std::optional<LayerPlan> plan_recurrent(const LayerContext& ctx, std::string& why_not, uint32_t local_size) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  const LayerTensor& w = ctx.input(1);
  if (!is_float_dtype(x.dtype)) {
    why_not = "X must be float32 or float16, got " + std::string(dtype_name(x.dtype));
    return std::nullopt;
  }
  VKG_CHECK(x.shape.size() == 3 && w.shape.size() == 3, node.describe()
                                                            << ": X and W must be 3-D, got " << shape_to_string(x.shape)
                                                            << " and " << shape_to_string(w.shape));
  const uint32_t cell = node.op_type == "RNN" ? 0 : node.op_type == "GRU" ? 1 : 2;
  const int64_t gates = cell == 0 ? 1 : cell == 1 ? 3 : 4;
  const bool batch_first = ctx.opset >= 14 && node.attr_int("layout", 0) != 0;
  const int64_t seq = x.shape[batch_first ? 1 : 0], batch = x.shape[batch_first ? 0 : 1], input = x.shape[2];
  const std::string direction = node.attr_string("direction", "forward");
  VKG_CHECK(direction == "forward" || direction == "reverse" || direction == "bidirectional",
            node.describe() << ": unknown direction '" << direction << "'");
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  const int64_t hidden = node.attr_int("hidden_size", w.shape[1] / gates);
  VKG_CHECK(w.shape[0] == directions && w.shape[1] == gates * hidden && w.shape[2] == input,
            node.describe() << ": W has shape " << shape_to_string(w.shape) << ", expected [" << directions << ", "
                            << gates * hidden << ", " << input << "]");
  const auto activations = recurrent_activations(node, directions);
  const float clip = node.attr_float("clip", 0.0f);
  VKG_CHECK(clip >= 0, node.describe() << ": clip must not be negative");

  // Four shared arrays of the hidden size.
  const uint64_t shared = 4 * sizeof(float) * uint64_t(hidden);
  if (shared > ctx.device.max_shared_memory_bytes) {
    why_not = "hidden_size " + std::to_string(hidden) + " needs " + std::to_string(shared) +
              " bytes of shared memory, more than the device's " + std::to_string(ctx.device.max_shared_memory_bytes);
    return std::nullopt;
  }
  if (local_size > ctx.device.max_workgroup_invocations || local_size > ctx.device.max_workgroup_size[0]) {
    why_not = "workgroups of " + std::to_string(local_size) + " invocations exceed the device's limit";
    return std::nullopt;
  }
  if (uint64_t(directions * batch) > ctx.device.max_workgroup_count[0]) {
    why_not = "more (direction, batch) pairs than workgroups along x";
    return std::nullopt;
  }
  if (local_size > 32 && hidden <= int64_t(local_size) / 2) {
    why_not = "hidden_size " + std::to_string(hidden) + " leaves most of a workgroup of " + std::to_string(local_size) +
              " idle";
    return std::nullopt;
  }

  LayerPlan plan;
  plan.scratch_bytes.push_back(16);
  const BindingRef dummy = BindingRef::scratch(0);
  auto optional_input = [&](size_t i, uint32_t flag, uint32_t& flags) {
    if (!ctx.has_input(i)) return dummy;
    flags |= flag;
    return bind_input(ctx, plan, i);
  };
  auto optional_output = [&](size_t i, uint32_t flag, uint32_t& flags) {
    if (i >= ctx.outputs.size() || !ctx.outputs[i].present()) return dummy;
    flags |= flag;
    return BindingRef::output(uint32_t(i));
  };
  uint32_t flags = 0;
  std::vector<BindingRef> bindings = {bind_input(ctx, plan, 0),
                                      bind_input(ctx, plan, 1),
                                      bind_input(ctx, plan, 2),
                                      optional_input(3, kFlagBias, flags),
                                      optional_input(4, kFlagLengths, flags),
                                      optional_input(5, kFlagInitialH, flags)};
  bindings.push_back(cell == 2 ? optional_input(6, kFlagInitialC, flags) : dummy);
  bindings.push_back(cell == 2 ? optional_input(7, kFlagPeepholes, flags) : dummy);
  std::vector<float> codes;
  for (const auto& per_direction : activations) {
    for (size_t slot = 0; slot < 3; ++slot) {
      const RecurrentActivation a = slot < per_direction.size() ? per_direction[slot] : RecurrentActivation{};
      codes.insert(codes.end(), {float(uint32_t(a.fn)), float(a.alpha), float(a.beta)});
    }
  }
  bindings.push_back(add_weight(plan, Tensor::from_vector<float>({int64_t(codes.size())}, codes)));
  bindings.push_back(optional_output(0, kFlagY, flags));
  bindings.push_back(optional_output(1, kFlagYH, flags));
  bindings.push_back(cell == 2 ? optional_output(2, kFlagYC, flags) : dummy);

  Dispatch d;
  d.shader = ctx.shader("recurrent/cell");
  d.spec = {{0, local_size},
            {1, cell},
            {2, uint32_t(std::max<int64_t>(hidden, 1))},
            {3, cell == 1 && node.attr_int("linear_before_reset", 0) != 0 ? 1u : 0u},
            {4, cell == 2 && node.attr_int("input_forget", 0) != 0 ? 1u : 0u}};
  d.bindings = std::move(bindings);
  d.push = {uint32_t(seq),
            uint32_t(batch),
            uint32_t(input),
            uint32_t(hidden),
            uint32_t(directions),
            direction == "reverse" ? 1u : 0u,
            batch_first ? 1u : 0u,
            flags,
            std::bit_cast<uint32_t>(clip)};
  d.groups = {uint32_t(directions * batch), 1, 1};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

template <uint32_t kLocalSize> std::optional<LayerPlan> planner(const LayerContext& ctx, std::string& why_not) {
  return plan_recurrent(ctx, why_not, kLocalSize);
}

}  // namespace

void register_recurrent_tactics(TacticRegistry& r) {
  using enum Arith;
  const std::vector<std::string> ops = {"RNN", "GRU", "LSTM"};
  r.add_variants("recurrent.workgroup32", ops, 0, {F32, F16Acc32}, planner<32>);
  r.add_variants("recurrent.workgroup128", ops, 1, {F32, F16Acc32}, planner<128>);
}

}  // namespace vkg
