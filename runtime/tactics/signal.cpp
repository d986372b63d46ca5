// Vulkan tactics of the signal family (see runtime/engine/tactic.h): DFT and STFT, as a
// radix-2 FFT for power-of-two lengths (dft.radix2, stft.radix2) and as a direct sum for
// every length (dft.direct, stft.direct).
// Shaders: shaders/signal/. The shapes these ops produce depend on dft_length, axis,
// frame_step and frame_length, so those inputs must be build-time constants; the data
// and STFT's window are runtime inputs.
//
// The window functions and MelWeightMatrix have no tactic: every input of theirs decides
// the output's shape or is a parameter, so the builder computes them at build time.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>

#include "runtime/core/error.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg {

namespace {

constexpr int64_t kMaxFftLength = 4096;  // fft_radix2.comp: n complex samples in shared memory

// Float tensors in a storage this arithmetic reads, sizes within 32-bit indexing.
bool float_tensors(const LayerContext& ctx, const std::vector<const LayerTensor*>& tensors, std::string& why) {
  for (const LayerTensor* t : tensors) {
    if (!is_float_dtype(t->dtype) || !storage_for(t->dtype, ctx.precision)) {
      why = "tensor '" + t->name + "' is " + dtype_name(t->dtype) + ": the shader transforms float data only";
      return false;
    }
    if (t->size() * 2 > std::numeric_limits<int32_t>::max()) {
      why = "tensor '" + t->name + "' has more elements than 32-bit indices address";
      return false;
    }
  }
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why = "the device lacks fp16 arithmetic or 16-bit storage";
    return false;
  }
  return true;
}

// The value of an optional scalar integer input that must be a build-time constant.
std::optional<int64_t> constant_scalar(const LayerContext& ctx, size_t i, const char* what, int64_t def,
                                       std::string& why) {
  if (!ctx.has_input(i)) return def;
  if (!ctx.inputs[i].is_constant()) {
    why = std::string(what) + " (input " + std::to_string(i) + ", '" + ctx.inputs[i].name +
          "') is not a build-time constant: it decides the output's shape";
    return std::nullopt;
  }
  const Tensor& t = ctx.constant_input(i);
  VKG_CHECK(is_integer(t.dtype()) && t.size() == 1,
            ctx.node.describe() << ": " << what << " must be one integer, got " << t.describe());
  return t.to_int64s()[0];
}

// The layout of a transform (shaders/signal/dft.comp, fft_radix2.comp).
struct DftLayout {
  int64_t outer = 1, frames = 1, bins = 0, inner = 1, length = 0, step = 0, n = 0, terms = 0;
  bool complex_in = false, inverse = false;
  std::optional<size_t> window;  // STFT's window input
};

std::vector<float> twiddle_table(int64_t n) {
  std::vector<float> twiddles(size_t(2 * n));
  for (int64_t m = 0; m < n; ++m) {
    const double angle = 2 * std::numbers::pi * double(m) / double(n);
    twiddles[size_t(2 * m)] = float(std::cos(angle));
    twiddles[size_t(2 * m + 1)] = float(std::sin(angle));
  }
  return twiddles;
}

BindingRef window_binding(const LayerContext& ctx, LayerPlan& plan, const DftLayout& l) {
  if (l.window) return bind_input(ctx, plan, *l.window);
  return add_weight(plan, to_storage(Tensor::scalar<float>(1.0f).reshaped({1}), ctx.output(0).storage,
                                     "the unit window"));
}

LayerPlan direct_plan(const LayerContext& ctx, const DftLayout& l) {
  LayerPlan plan;
  const BindingRef x = bind_input(ctx, plan, 0);
  const BindingRef t = add_weight(plan, Tensor::from_vector<float>({2 * l.n}, twiddle_table(l.n)));
  const BindingRef w = window_binding(ctx, plan, l);
  const int64_t total = l.outer * l.frames * l.bins * l.inner;
  Dispatch d;
  d.shader = ctx.shader("signal/dft");
  d.spec = {{0, kLocalSize}, {1, l.complex_in ? 1u : 0u}, {2, l.inverse ? 1u : 0u}, {3, l.window ? 1u : 0u}};
  d.bindings = {x, t, w, BindingRef::output(0)};
  d.push = {u32(total), u32(l.frames), u32(l.bins),  u32(l.inner),
            u32(l.length), u32(l.step), u32(l.n), u32(l.terms)};
  d.groups = linear_groups(uint64_t(total), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// A radix-2 FFT (shaders/signal/fft_radix2.comp), one workgroup per signal, for
// power-of-two lengths whose samples fit the device's shared memory.
std::optional<LayerPlan> radix2_plan(const LayerContext& ctx, const DftLayout& l, std::string& why) {
  if (l.n < 2 || !std::has_single_bit(uint64_t(l.n))) {
    why = "dft length " + std::to_string(l.n) + " is not a power of two (at least 2)";
    return std::nullopt;
  }
  const uint64_t shared_bytes = uint64_t(l.n) * 8;
  if (l.n > kMaxFftLength || shared_bytes > ctx.device.max_shared_memory_bytes) {
    why = "dft length " + std::to_string(l.n) + " exceeds the shared-memory FFT's " +
          std::to_string(std::min<uint64_t>(kMaxFftLength, ctx.device.max_shared_memory_bytes / 8)) + " samples";
    return std::nullopt;
  }
  LayerPlan plan;
  const BindingRef x = bind_input(ctx, plan, 0);
  const BindingRef t = add_weight(plan, Tensor::from_vector<float>({2 * l.n}, twiddle_table(l.n)));
  const BindingRef w = window_binding(ctx, plan, l);
  const int64_t signals = l.outer * l.frames * l.inner;
  const uint32_t local = uint32_t(std::min<int64_t>(kLocalSize, l.n / 2));
  Dispatch d;
  d.shader = ctx.shader("signal/fft_radix2");
  d.spec = {{0, local},
            {1, l.complex_in ? 1u : 0u},
            {2, l.inverse ? 1u : 0u},
            {3, l.window ? 1u : 0u},
            {4, u32(std::max<int64_t>(l.n, 2))}};
  d.bindings = {x, t, w, BindingRef::output(0)};
  d.push = {u32(signals),  u32(l.frames), u32(l.bins), u32(l.inner),
            u32(l.length), u32(l.step),   u32(l.n),    u32(l.terms),
            u32(std::countr_zero(uint64_t(l.n)))};
  d.groups = linear_groups(uint64_t(signals) * local, local, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// DFT-17 (axis attribute) and DFT-20 (axis input): the transform along one axis.
std::optional<DftLayout> dft_layout(const LayerContext& ctx, std::string& why) {
  const LayerTensor& x = ctx.input(0);
  if (!float_tensors(ctx, {&x, &ctx.output(0)}, why)) return std::nullopt;
  const int64_t rank = int64_t(x.shape.size());
  VKG_CHECK(rank >= 2 && (x.shape.back() == 1 || x.shape.back() == 2),
            ctx.node.describe() << ": the input must have rank >= 2 and a last axis of 1 or 2, got "
                                << shape_to_string(x.shape));
  const std::optional<int64_t> axis_value =
      ctx.opset >= 20 ? constant_scalar(ctx, 2, "axis", -2, why) : ctx.node.attr_int("axis", 1);
  if (!axis_value) return std::nullopt;
  int64_t axis = *axis_value;
  VKG_CHECK(axis >= -rank && axis < rank - 1 && axis != -1,
            ctx.node.describe() << ": axis " << axis << " must name a signal axis of " << shape_to_string(x.shape));
  if (axis < 0) axis += rank;
  DftLayout l;
  l.length = x.shape[size_t(axis)];
  const std::optional<int64_t> n = constant_scalar(ctx, 1, "dft_length", l.length, why);
  if (!n) return std::nullopt;
  VKG_CHECK(*n > 0, ctx.node.describe() << ": dft_length must be positive, got " << *n);
  l.n = l.terms = *n;
  l.bins = ctx.node.attr_int("onesided", 0) != 0 ? l.n / 2 + 1 : l.n;
  l.inverse = ctx.node.attr_int("inverse", 0) != 0;
  l.complex_in = x.shape.back() == 2;
  for (int64_t d = 0; d < axis; ++d) l.outer *= x.shape[size_t(d)];
  for (int64_t d = axis + 1; d < rank - 1; ++d) l.inner *= x.shape[size_t(d)];
  return l;
}

// STFT-17: frames of signal [batch, length, 1 | 2], each times the window, transformed.
std::optional<DftLayout> stft_layout(const LayerContext& ctx, std::string& why) {
  const LayerTensor& x = ctx.input(0);
  std::vector<const LayerTensor*> data = {&x, &ctx.output(0)};
  if (ctx.has_input(2)) data.push_back(&ctx.input(2));
  if (!float_tensors(ctx, data, why)) return std::nullopt;
  VKG_CHECK(x.shape.size() == 3 && (x.shape[2] == 1 || x.shape[2] == 2),
            ctx.node.describe() << ": the signal must be [batch, length, 1 | 2], got " << shape_to_string(x.shape));
  const std::optional<int64_t> step = constant_scalar(ctx, 1, "frame_step", 0, why);
  if (!step) return std::nullopt;
  VKG_CHECK(*step > 0, ctx.node.describe() << ": frame_step must be positive, got " << *step);
  const int64_t window_length = ctx.has_input(2) ? ctx.input(2).size() : -1;
  const std::optional<int64_t> frame_length =
      constant_scalar(ctx, 3, "frame_length", window_length >= 0 ? window_length : x.shape[1], why);
  if (!frame_length) return std::nullopt;
  VKG_CHECK(*frame_length > 0 && *frame_length <= x.shape[1],
            ctx.node.describe() << ": frame_length " << *frame_length << " must be in [1, " << x.shape[1] << "]");
  DftLayout l;
  l.outer = x.shape[0];
  l.length = x.shape[1];
  l.step = *step;
  l.frames = 1 + (x.shape[1] - *frame_length) / *step;
  l.n = *frame_length;
  l.bins = ctx.node.attr_int("onesided", 1) != 0 ? l.n / 2 + 1 : l.n;
  l.terms = window_length >= 0 ? std::min(window_length, l.n) : l.n;
  l.complex_in = x.shape[2] == 2;
  if (ctx.has_input(2)) l.window = 2;
  return l;
}

using LayoutFn = std::optional<DftLayout> (*)(const LayerContext&, std::string&);

auto direct_tactic(LayoutFn layout) {
  return [layout](const LayerContext& ctx, std::string& why) -> std::optional<LayerPlan> {
    const std::optional<DftLayout> l = layout(ctx, why);
    // An invocation sums every term of its bin (wrong past lavapipe's loop iteration limit).
    if (!l || !loops_fit_device(ctx, uint64_t(std::max<int64_t>(l->terms, l->length)), 2, why)) return std::nullopt;
    return direct_plan(ctx, *l);
  };
}

auto radix2_tactic(LayoutFn layout) {
  return [layout](const LayerContext& ctx, std::string& why) -> std::optional<LayerPlan> {
    const std::optional<DftLayout> l = layout(ctx, why);
    if (!l) return std::nullopt;
    return radix2_plan(ctx, *l, why);
  };
}

}  // namespace

void register_signal_tactics(TacticRegistry& r) {
  constexpr auto F32 = Arith::F32, F16Acc32 = Arith::F16Acc32;
  // The FFT first where it serves (power-of-two lengths); the direct sum serves every length.
  r.add_variants("dft.radix2", {"DFT"}, 0, {F32, F16Acc32}, radix2_tactic(dft_layout));
  r.add_variants("dft.direct", {"DFT"}, 1, {F32, F16Acc32}, direct_tactic(dft_layout));
  r.add_variants("stft.radix2", {"STFT"}, 0, {F32, F16Acc32}, radix2_tactic(stft_layout));
  r.add_variants("stft.direct", {"STFT"}, 1, {F32, F16Acc32}, direct_tactic(stft_layout));
}

}  // namespace vkg
