// Vulkan tactics of the attention family (see runtime/engine/tactic.h): RotaryEmbedding
// and Attention (opset 23). Shaders: shaders/attention/.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/engine/tactic.h"

namespace vkg {
namespace {

constexpr uint32_t kLocalSize = 64;

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// Whether every tensor of the layer has a device storage and fits 32-bit indices, and
// fp16 variants have float data and a device for them.
bool layer_supported(const LayerContext& ctx, std::string& why_not) {
  auto check = [&](const LayerTensor& t) {
    if (!t.present()) return true;
    if (!storage_for(t.dtype, ctx.precision)) {
      why_not = "tensor '" + t.name + "' is " + dtype_name(t.dtype) + ", which the Vulkan backend cannot hold";
      return false;
    }
    if (t.size() > std::numeric_limits<int32_t>::max()) {
      why_not = "tensor '" + t.name + "' has more elements than 32-bit indices address";
      return false;
    }
    const uint64_t range = ctx.device.max_storage_buffer_range;
    if (range != 0 && uint64_t(t.size()) * storage_element_bytes(t.storage) > range) {
      why_not = "tensor '" + t.name + "' is larger than the device's storage buffer range";
      return false;
    }
    return true;
  };
  for (const LayerTensor& t : ctx.inputs)
    if (!check(t)) return false;
  for (const LayerTensor& t : ctx.outputs)
    if (!check(t)) return false;
  if (ctx.arith != Arith::F32 && !ctx.device.fp16()) {
    why_not = "the device lacks fp16 arithmetic or 16-bit storage";
    return false;
  }
  return true;
}

// The binding of optional input i: the input, or a one-element zero weight of storage `s`
// when it is absent (every binding needs a buffer).
BindingRef bind_optional(const LayerContext& ctx, LayerPlan& plan, size_t i, StorageType s) {
  if (ctx.has_input(i)) return bind_input(ctx, plan, i);
  switch (s) {
    case StorageType::F32:
      return add_weight(plan, Tensor(DType::Float32, {1}));
    case StorageType::F16:
      return add_weight(plan, Tensor(DType::Float16, {1}));
    case StorageType::I32:
      return add_weight(plan, Tensor(DType::Int32, {1}));
  }
  VKG_THROW("unknown storage type");
}

// RotaryEmbedding: shaders/attention/rotary_embedding.comp, one invocation per element.
std::optional<LayerPlan> plan_rotary(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const Shape& x = ctx.input(0).shape;
  const Shape& cache = ctx.input(1).shape;
  VKG_CHECK(x.size() == 3 || x.size() == 4, node.describe() << ": X must be 3-D or 4-D");
  const bool four_d = x.size() == 4;
  const int64_t heads = four_d ? x[1] : node.attr_int("num_heads", 0);
  VKG_CHECK(heads > 0 && (four_d || x[2] % heads == 0),
            node.describe() << ": a 3-D X needs num_heads > 0 dividing its hidden size");
  const int64_t seq = four_d ? x[2] : x[1];
  const int64_t head_size = four_d ? x[3] : x[2] / heads;
  int64_t rot = node.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head_size;
  VKG_CHECK(rot > 0 && rot <= head_size && rot % 2 == 0 && !cache.empty() && cache.back() >= rot / 2,
            node.describe() << ": rotary_embedding_dim " << rot << " must be even, at most the head size " << head_size
                            << " and at most twice the caches' last dimension");
  LayerPlan plan;
  const StorageType is = StorageType::I32;
  std::vector<BindingRef> bindings = {bind_input(ctx, plan, 0), bind_input(ctx, plan, 1), bind_input(ctx, plan, 2),
                                      bind_optional(ctx, plan, 3, is), BindingRef::output(0)};
  Dispatch d;
  d.shader = ctx.shader("attention/rotary_embedding");
  d.spec = {{0, kLocalSize},
            {1, four_d ? 1u : 0u},
            {2, node.attr_int("interleaved", 0) != 0 ? 1u : 0u},
            {3, ctx.has_input(3) ? 1u : 0u}};
  d.bindings = std::move(bindings);
  d.push = {u32(num_elements(x)),
            u32(heads),
            u32(seq),
            u32(head_size),
            u32(rot / 2),
            u32(cache.back()),
            u32(ctx.has_input(3) ? ctx.input(1).shape[0] : 0)};
  d.groups = linear_groups(uint64_t(num_elements(x)), kLocalSize, ctx.device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace

void register_attention_tactics(TacticRegistry& r) {
  using enum Arith;
  r.add_variants("rope.scalar", {"RotaryEmbedding"}, 0, {F32, F16, F16Acc32}, plan_rotary);
}

}  // namespace vkg
