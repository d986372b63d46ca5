// Vulkan tactics of the attention family (see runtime/engine/tactic.h): RotaryEmbedding
// and Attention (opset 23). Shaders: shaders/attention/.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/engine/tactic.h"
#include "runtime/tactics/tactic_util.h"

namespace vkg {
namespace {

constexpr int64_t kMaxHead = 256;  // shaders/attention/row.comp keeps a row of Q and of Y in registers

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

// Q, K or V (3-D [batch, seq, heads * head] or 4-D [batch, heads, seq, head]) by strides.
struct HeadLayout {
  int64_t batch = 0, heads = 0, seq = 0, head = 0;
  int64_t sb = 0, sh = 0, ss = 0;
};

HeadLayout head_layout(const Node& node, const Shape& s, int64_t heads_3d, const char* what) {
  VKG_CHECK(s.size() == 3 || s.size() == 4, node.describe() << ": " << what << " must be 3-D or 4-D");
  if (s.size() == 4) return {s[0], s[1], s[2], s[3], s[1] * s[2] * s[3], s[2] * s[3], s[3]};
  VKG_CHECK(heads_3d > 0 && s[2] % heads_3d == 0,
            node.describe() << ": 3-D " << what << " needs a head count (q_num_heads, kv_num_heads) dividing " << s[2]);
  const int64_t head = s[2] / heads_3d;
  return {s[0], heads_3d, s[1], head, s[1] * s[2], head, s[2]};
}

// The present cache (past + this step's keys or values) written to `out` by attention/kv_cache.
Dispatch kv_cache_dispatch(const LayerContext& ctx, LayerPlan& plan, size_t cur, size_t past, const HeadLayout& c,
                           int64_t past_seq, BindingRef out) {
  const int64_t seq = past_seq + c.seq, total = c.batch * c.heads * seq * c.head;
  Dispatch d;
  // A copy: the variant of the storage (f16acc32 layers store fp16).
  d.shader = ctx.input(cur).storage == StorageType::F16 ? "attention/kv_cache.f16" : "attention/kv_cache.f32";
  d.spec = {{0, kLocalSize}};
  d.bindings = {bind_optional(ctx, plan, past, ctx.input(cur).storage), bind_input(ctx, plan, cur), out};
  d.push = {u32(total), u32(c.heads), u32(seq), u32(past_seq), u32(c.head), u32(c.sb), u32(c.sh), u32(c.ss)};
  d.groups = linear_groups(uint64_t(total), kLocalSize, ctx.device);
  return d;
}

// Q, K and V of an Attention layer, checked to agree.
struct QkvLayouts {
  HeadLayout q, k, v;
};

QkvLayouts qkv_layouts(const LayerContext& ctx) {
  const Node& node = ctx.node;
  const int64_t qh_attr = node.attr_int("q_num_heads", 0), kvh_attr = node.attr_int("kv_num_heads", 0);
  const HeadLayout q = head_layout(node, ctx.input(0).shape, qh_attr, "Q");
  const HeadLayout k = head_layout(node, ctx.input(1).shape, kvh_attr, "K");
  const HeadLayout v = head_layout(node, ctx.input(2).shape, kvh_attr, "V");
  VKG_CHECK(k.batch == q.batch && v.batch == q.batch && k.heads == v.heads && k.seq == v.seq && k.head == q.head &&
                k.heads > 0 && q.heads % k.heads == 0,
            node.describe() << ": Q, K and V do not agree in batch, heads, sequence or head size");
  return {q, k, v};
}

// Where a present cache goes: output `output`, or scratch when that output is not requested.
BindingRef present_cache_binding(const LayerContext& ctx, LayerPlan& plan, size_t output, const HeadLayout& c,
                                 int64_t total) {
  if (output < ctx.outputs.size() && ctx.outputs[output].present()) return BindingRef::output(uint32_t(output));
  const uint64_t elements = uint64_t(c.batch * c.heads * total * c.head);
  plan.scratch_bytes.push_back(std::max<uint64_t>(16, elements * storage_element_bytes(ctx.input(1).storage)));
  return BindingRef::scratch(uint32_t(plan.scratch_bytes.size() - 1));
}

// How row.comp reads attn_mask: kind 0 (none), 1 (added) or 2 (bool), and its strides over
// [batch, heads, q_seq, total] (numpy broadcasting from the right).
struct MaskLayout {
  uint32_t kind = 0;
  std::array<uint32_t, 4> strides{0, 0, 0, 0};
};

MaskLayout mask_layout(const LayerContext& ctx, const HeadLayout& q, int64_t total) {
  const Node& node = ctx.node;
  MaskLayout mask;
  if (ctx.has_input(3)) {
    const LayerTensor& m = ctx.input(3);
    const std::array<int64_t, 4> target = {q.batch, q.heads, q.seq, total};
    VKG_CHECK(m.shape.size() <= 4, node.describe() << ": attn_mask has more than 4 dimensions");
    const std::vector<int64_t> strides = contiguous_strides(m.shape);
    for (size_t a = 0; a < m.shape.size(); ++a) {
      const size_t t = 4 - m.shape.size() + a;
      VKG_CHECK(m.shape[a] == 1 || m.shape[a] == target[t],
                node.describe() << ": attn_mask of shape " << shape_to_string(m.shape)
                                << " does not broadcast to [batch, heads, q_seq, total]");
      mask.strides[t] = m.shape[a] == 1 ? 0u : u32(strides[a]);
    }
    mask.kind = m.dtype == DType::Bool ? 2 : 1;
  }
  return mask;
}

// shaders/attention/row.comp over the present caches pk and pv, one invocation per query row.
Dispatch attention_row_dispatch(const LayerContext& ctx, LayerPlan& plan, const QkvLayouts& qkv, int64_t total,
                                int64_t mode, BindingRef pk, BindingRef pv) {
  const Node& node = ctx.node;
  const HeadLayout& q = qkv.q;
  const HeadLayout& k = qkv.k;
  const HeadLayout& v = qkv.v;
  const MaskLayout mask = mask_layout(ctx, q, total);
  // Y: 3-D [batch, q_seq, heads * v_head] or 4-D [batch, heads, q_seq, v_head].
  const bool three_d = ctx.input(0).shape.size() == 3;
  const int64_t y_sb = q.heads * q.seq * v.head, y_sh = three_d ? v.head : q.seq * v.head,
                y_ss = three_d ? q.heads * v.head : v.head;
  const bool want_qk = ctx.outputs.size() > 3 && ctx.outputs[3].present();
  const float scale = node.has_attr("scale") ? node.attr_float("scale", 0.0f) : 1.0f / std::sqrt(float(q.head));
  Dispatch d;
  d.shader = ctx.shader("attention/row");
  d.spec = {{0, kLocalSize},
            {1, u32(q.head)},
            {2, u32(v.head)},
            {3, u32(q.heads / k.heads)},
            {4, node.attr_int("is_causal", 0) != 0 ? 1u : 0u},
            {5, mask.kind},
            {6, want_qk ? u32(mode) : 4u}};
  d.bindings = {bind_input(ctx, plan, 0),
                pk,
                pv,
                bind_optional(ctx, plan, 3, ctx.has_input(3) ? ctx.input(3).storage : ctx.input(0).storage),
                BindingRef::output(0),
                want_qk ? BindingRef::output(3) : add_weight(plan, Tensor(DType::Int32, {1}))};
  const int64_t rows = q.batch * q.heads * q.seq;
  d.push = {u32(rows),
            u32(q.heads),
            u32(q.seq),
            u32(total),
            u32(k.heads),
            u32(q.sb),
            u32(q.sh),
            u32(q.ss),
            u32(y_sb),
            u32(y_sh),
            u32(y_ss),
            mask.strides[0],
            mask.strides[1],
            mask.strides[2],
            mask.strides[3],
            float_bits(scale),
            float_bits(node.attr_float("softcap", 0.0f))};
  d.groups = linear_groups(uint64_t(rows), kLocalSize, ctx.device);
  return d;
}

// Attention: the present key and value caches (attention/kv_cache, into the outputs or
// scratch), then shaders/attention/row.comp, one invocation per query row.
std::optional<LayerPlan> plan_attention_row(const LayerContext& ctx, std::string& why_not) {
  if (!layer_supported(ctx, why_not)) return std::nullopt;
  const Node& node = ctx.node;
  const QkvLayouts qkv = qkv_layouts(ctx);
  const HeadLayout& q = qkv.q;
  const HeadLayout& k = qkv.k;
  const HeadLayout& v = qkv.v;
  if (node.attr_int("softmax_precision", 1) == 11) {
    why_not = "softmax_precision asks for double, and the shader computes in fp32";
    return std::nullopt;
  }
  if (q.head > kMaxHead || v.head > kMaxHead) {
    why_not = "head sizes " + std::to_string(q.head) + " and " + std::to_string(v.head) + " exceed " +
              std::to_string(kMaxHead) + " (a row of Q and of Y live in registers)";
    return std::nullopt;
  }
  const int64_t past_seq = ctx.has_input(4) ? ctx.input(4).shape.at(2) : 0;
  VKG_CHECK(ctx.has_input(4) == ctx.has_input(5) &&
                (!ctx.has_input(5) || (ctx.input(5).shape.size() == 4 && ctx.input(5).shape[2] == past_seq)),
            node.describe() << ": past_key and past_value must both be given, with the same past length");
  const int64_t total = past_seq + k.seq;
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  VKG_CHECK(mode >= 0 && mode <= 3, node.describe() << ": qk_matmul_output_mode " << mode << " is not 0 to 3");

  LayerPlan plan;
  const BindingRef pk = present_cache_binding(ctx, plan, 1, k, total);
  const BindingRef pv = present_cache_binding(ctx, plan, 2, v, total);
  plan.dispatches.push_back(kv_cache_dispatch(ctx, plan, 1, 4, k, past_seq, pk));
  plan.dispatches.push_back(kv_cache_dispatch(ctx, plan, 2, 5, v, past_seq, pv));
  plan.dispatches.push_back(attention_row_dispatch(ctx, plan, qkv, total, mode, pk, pv));
  return plan;
}

}  // namespace

void register_attention_tactics(TacticRegistry& r) {
  using enum Arith;
  r.add_variants("rope.scalar", {"RotaryEmbedding"}, 0, {F32, F16, F16Acc32}, plan_rotary);
  r.add_variants("attention.row", {"Attention"}, 0, {F32, F16Acc32}, plan_attention_row);
}

}  // namespace vkg
