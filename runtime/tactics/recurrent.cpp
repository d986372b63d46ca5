// Tactics of the recurrent ops (RNN, GRU, LSTM).
// - recurrent.workgroup32/128 (shaders/recurrent/cell.comp): one workgroup per (direction,
//   batch element) runs the whole sequence with the hidden state in shared memory, hidden units
//   across the workgroup: one dispatch, but few invocations, each looping over every step.
// - recurrent.steps (shaders/recurrent/input_projection.comp, then step.comp once per time
//   step, twice for a GRU with linear_before_reset 0): the input projection of every step in
//   one dispatch, then one invocation per (direction, batch element, hidden unit) per step, as
//   cuDNN splits a recurrence. Each invocation loops over one row of R only, so it also runs
//   where the device caps how long an invocation may loop (DeviceInfo::loop_iteration_limit).
#include <algorithm>
#include <bit>

#include "runtime/core/error.h"
#include "runtime/core/recurrence.h"
#include "runtime/engine/device_profile.h"
#include "runtime/engine/tactic.h"

namespace vkg {

namespace {

constexpr uint32_t kFlagBias = 1, kFlagLengths = 2, kFlagInitialH = 4, kFlagInitialC = 8, kFlagPeepholes = 16,
                   kFlagY = 32, kFlagYH = 64, kFlagYC = 128;

// What both tactics need to know of a recurrent layer.
struct RecurrentLayer : RecurrentLayout {
  std::vector<float> activation_codes;  // [dirs][3 slots][code, alpha, beta]
};

std::optional<RecurrentLayer> describe(const LayerContext& ctx, std::string& why_not) {
  const Node& node = ctx.node;
  const LayerTensor& x = ctx.input(0);
  if (!is_float_dtype(x.dtype)) {
    why_not = "X must be float32 or float16, got " + std::string(dtype_name(x.dtype));
    return std::nullopt;
  }
  RecurrentLayer r;
  static_cast<RecurrentLayout&>(r) = recurrent_layout(node, ctx.opset, x.shape, ctx.input(1).shape);
  for (const auto& per_direction : recurrent_activations(node, r.directions)) {
    for (size_t slot = 0; slot < 3; ++slot) {
      const RecurrentActivation a = slot < per_direction.size() ? per_direction[slot] : RecurrentActivation{};
      r.activation_codes.insert(r.activation_codes.end(), {float(uint32_t(a.fn)), float(a.alpha), float(a.beta)});
    }
  }
  if (r.seq <= 0 || r.batch <= 0 || r.hidden <= 0) {
    why_not = "empty sequence, batch or hidden state";
    return std::nullopt;
  }
  return r;
}

// The node's inputs and outputs bound in the order both shaders share: B, sequence_lens,
// initial_h, initial_c, P, activations, Y, Y_h, Y_c (absent ones bound to a dummy scratch
// buffer). `flags` gets the kFlag bits of those present.
std::vector<BindingRef> state_bindings(const LayerContext& ctx, LayerPlan& plan, const RecurrentLayer& r,
                                       uint32_t& flags) {
  const BindingRef dummy = BindingRef::scratch(0);
  auto optional_input = [&](size_t i, uint32_t flag) {
    if (!ctx.has_input(i)) return dummy;
    flags |= flag;
    return bind_input(ctx, plan, i);
  };
  auto optional_output = [&](size_t i, uint32_t flag) {
    if (i >= ctx.outputs.size() || !ctx.outputs[i].present()) return dummy;
    flags |= flag;
    return BindingRef::output(uint32_t(i));
  };
  const bool lstm = r.cell == RecurrentCell::Lstm;
  std::vector<BindingRef> b = {optional_input(3, kFlagBias), optional_input(4, kFlagLengths),
                               optional_input(5, kFlagInitialH)};
  b.push_back(lstm ? optional_input(6, kFlagInitialC) : dummy);
  b.push_back(lstm ? optional_input(7, kFlagPeepholes) : dummy);
  b.push_back(add_weight(plan, Tensor::from_vector<float>({int64_t(r.activation_codes.size())}, r.activation_codes)));
  b.push_back(optional_output(0, kFlagY));
  b.push_back(optional_output(1, kFlagYH));
  b.push_back(lstm ? optional_output(2, kFlagYC) : dummy);
  return b;
}

// The specialization constants cell.comp and step.comp share; cell.comp also sizes its shared
// arrays by the hidden size (constant 2).
std::vector<SpecValue> cell_spec(const RecurrentLayer& r, uint32_t local_size, bool shared_arrays) {
  std::vector<SpecValue> spec = {
      {0, local_size}, {1, uint32_t(r.cell)}, {3, r.linear_before_reset ? 1u : 0u}, {4, r.input_forget ? 1u : 0u}};
  if (shared_arrays) spec.push_back({2, uint32_t(r.hidden)});
  return spec;
}

std::optional<LayerPlan> plan_workgroup(const LayerContext& ctx, std::string& why_not, uint32_t local_size) {
  const std::optional<RecurrentLayer> found = describe(ctx, why_not);
  if (!found) return std::nullopt;
  const RecurrentLayer& r = *found;
  // Four shared arrays of the hidden size.
  const uint64_t shared = 4 * sizeof(float) * uint64_t(r.hidden);
  if (shared > ctx.device.max_shared_memory_bytes) {
    why_not = "hidden_size " + std::to_string(r.hidden) + " needs " + std::to_string(shared) +
              " bytes of shared memory, more than the device's " + std::to_string(ctx.device.max_shared_memory_bytes);
    return std::nullopt;
  }
  if (local_size > ctx.device.max_workgroup_invocations || local_size > ctx.device.max_workgroup_size[0]) {
    why_not = "workgroups of " + std::to_string(local_size) + " invocations exceed the device's limit";
    return std::nullopt;
  }
  if (uint64_t(r.directions * r.batch) > ctx.device.max_workgroup_count[0]) {
    why_not = "more (direction, batch) pairs than workgroups along x";
    return std::nullopt;
  }
  if (local_size > 32 && r.hidden <= int64_t(local_size) / 2) {
    why_not = "hidden_size " + std::to_string(r.hidden) + " leaves most of a workgroup of " +
              std::to_string(local_size) + " idle";
    return std::nullopt;
  }
  // Each invocation runs every step for its units: G dot products over I and H per unit.
  const uint64_t units = uint64_t(r.hidden + local_size - 1) / local_size;
  const uint64_t per_step =
      units * (uint64_t(r.gates + (r.cell == RecurrentCell::Gru ? 1 : 0)) * uint64_t(r.input + r.hidden) + 3);
  if (!loops_fit_device(ctx, uint64_t(r.seq) * per_step + units, 8, why_not)) return std::nullopt;

  LayerPlan plan;
  plan.scratch_bytes.push_back(16);
  uint32_t flags = 0;
  std::vector<BindingRef> bindings = {bind_input(ctx, plan, 0), bind_input(ctx, plan, 1), bind_input(ctx, plan, 2)};
  for (const BindingRef& b : state_bindings(ctx, plan, r, flags)) bindings.push_back(b);

  Dispatch d;
  d.shader = ctx.shader("recurrent/cell");
  d.spec = cell_spec(r, local_size, true);
  d.bindings = std::move(bindings);
  d.push = {uint32_t(r.seq),
            uint32_t(r.batch),
            uint32_t(r.input),
            uint32_t(r.hidden),
            uint32_t(r.directions),
            r.reverse ? 1u : 0u,
            r.batch_first ? 1u : 0u,
            flags,
            std::bit_cast<uint32_t>(r.clip)};
  d.groups = {uint32_t(r.directions * r.batch), 1, 1};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

std::optional<LayerPlan> plan_steps(const LayerContext& ctx, std::string& why_not) {
  const std::optional<RecurrentLayer> found = describe(ctx, why_not);
  if (!found) return std::nullopt;
  const RecurrentLayer& r = *found;
  constexpr uint32_t kLocal = 64;
  const uint64_t rows = uint64_t(r.gates * r.hidden);
  const uint64_t projections = uint64_t(r.directions * r.seq * r.batch);
  if (kLocal > ctx.device.max_workgroup_invocations || projections > ctx.device.max_workgroup_count[1] ||
      uint64_t(r.directions * r.batch) > ctx.device.max_workgroup_count[1] ||
      (rows + kLocal - 1) / kLocal > ctx.device.max_workgroup_count[0]) {
    why_not = "more steps, batch elements or hidden units than the device's workgroup counts";
    return std::nullopt;
  }
  if (!loops_fit_device(ctx, std::max<uint64_t>(uint64_t(r.input), uint64_t(r.gates) * uint64_t(r.hidden)), 2, why_not))
    return std::nullopt;
  const uint64_t state_bytes = uint64_t(r.directions * r.batch * r.hidden) * sizeof(float);
  const uint64_t xw_bytes = projections * rows * sizeof(float);
  if (xw_bytes > ctx.device.max_storage_buffer_range) {
    why_not = "the input projection of every step (" + std::to_string(xw_bytes) + " bytes) exceeds one buffer";
    return std::nullopt;
  }

  LayerPlan plan;
  // Scratch: 0 the dummy, 1 XW, 2 and 3 the hidden state (swapped each step), 4 C, 5 RH.
  plan.scratch_bytes = {16,
                        xw_bytes,
                        state_bytes,
                        state_bytes,
                        r.cell == RecurrentCell::Lstm ? state_bytes : 16,
                        r.cell == RecurrentCell::Gru ? state_bytes : 16};
  const BindingRef xw = BindingRef::scratch(1);
  const BindingRef x = bind_input(ctx, plan, 0), w = bind_input(ctx, plan, 1), rw = bind_input(ctx, plan, 2);
  uint32_t flags = 0;
  const std::vector<BindingRef> state = state_bindings(ctx, plan, r, flags);

  Dispatch projection;
  projection.shader = ctx.shader("recurrent/input_projection");
  projection.spec = {{0, kLocal}};
  projection.bindings = {x, w, state[0], xw};
  projection.push = {uint32_t(r.seq),
                     uint32_t(r.batch),
                     uint32_t(r.input),
                     uint32_t(rows),
                     uint32_t(r.directions),
                     r.batch_first ? 1u : 0u,
                     (flags & kFlagBias) ? 1u : 0u};
  projection.groups = {uint32_t((rows + kLocal - 1) / kLocal), uint32_t(projections), 1};
  plan.dispatches.push_back(std::move(projection));

  const uint32_t phases = r.cell == RecurrentCell::Gru && !r.linear_before_reset ? 2 : 1;
  for (int64_t s = 0; s < r.seq; ++s) {
    for (uint32_t phase = 0; phase < phases; ++phase) {
      Dispatch d;
      d.shader = ctx.shader("recurrent/step");
      d.spec = cell_spec(r, kLocal, false);
      d.bindings = {xw, rw};
      d.bindings.insert(d.bindings.end(), state.begin(), state.end());
      const bool odd = s % 2 != 0;
      d.bindings.insert(d.bindings.end(), {BindingRef::scratch(odd ? 3 : 2), BindingRef::scratch(odd ? 2 : 3),
                                           BindingRef::scratch(4), BindingRef::scratch(5)});
      d.push = {uint32_t(r.seq),
                uint32_t(r.batch),
                uint32_t(r.hidden),
                uint32_t(r.directions),
                r.reverse ? 1u : 0u,
                r.batch_first ? 1u : 0u,
                flags,
                std::bit_cast<uint32_t>(r.clip),
                uint32_t(s),
                phase};
      d.groups = {uint32_t((r.hidden + kLocal - 1) / kLocal), uint32_t(r.directions * r.batch), 1};
      plan.dispatches.push_back(std::move(d));
    }
  }
  return plan;
}

template <uint32_t kLocalSize>
std::optional<LayerPlan> workgroup_planner(const LayerContext& ctx, std::string& why_not) {
  return plan_workgroup(ctx, why_not, kLocalSize);
}

}  // namespace

void register_recurrent_tactics(TacticRegistry& r) {
  using enum Arith;
  const std::vector<std::string> ops = {"RNN", "GRU", "LSTM"};
  r.add_variants("recurrent.workgroup32", ops, 0, {F32, F16Acc32}, workgroup_planner<32>);
  r.add_variants("recurrent.workgroup128", ops, 1, {F32, F16Acc32}, workgroup_planner<128>);
  r.add_variants("recurrent.steps", ops, 2, {F32, F16Acc32}, plan_steps);
}

}  // namespace vkg
