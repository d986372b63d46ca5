// Memory planning of the built engine: the rewrites that remove work and
// memory once every layer has its tactic. Reformat layers fuse into the layers
// around them (or into the upload of a model input), Concat layers vanish where
// their inputs can be written in place as views of the output, and layers that
// copy a contiguous range of their input become views of it. Each is a rewrite
// kind that --disable-rewrite can turn off (rewrites.h); engine.cpp's
// plan_memory then gives the tensors their memory.
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/shader_library.h"

namespace vkg::builder_impl {

namespace {

// Whether every dispatch of `layer` that binds `ref` can hold it in fp32 instead of fp16 (its
// shader, an f16 variant, declares kF32Bindings), and at least one binds it.
bool can_hold_f32(const EngineLayer& layer, BindingRef ref) {
  if (layer.is_branch() || layer.precision != Precision::FP16) return false;
  bool bound = false;
  for (const Dispatch& d : layer.plan.dispatches) {
    if (std::find(d.bindings.begin(), d.bindings.end(), ref) == d.bindings.end()) continue;
    if (!declares_spec_constant(builtin_shader(d.shader), kF32BindingsSpec)) return false;
    bound = true;
  }
  return bound;
}

// Makes the dispatches of `layer` that bind `ref` hold it in fp32. A "_texel" build runs its
// storage-buffer build instead, which reads and writes fp32 views: lavapipe rounds a texel
// converted to fp16 toward zero, where the reformat (and the storage-buffer read) rounds to
// nearest even, and the fused engine must compute what the unfused one computes; and the texel
// builds' eight-wide stores write the storage type only.
void hold_f32(EngineLayer& layer, BindingRef ref) {
  for (Dispatch& d : layer.plan.dispatches) {
    uint32_t bits = 0;
    for (size_t b = 0; b < d.bindings.size(); ++b)
      if (d.bindings[b] == ref) bits |= 1u << b;
    if (bits == 0) continue;
    d.shader = storage_build(d.shader);
    auto it = std::find_if(d.spec.begin(), d.spec.end(), [](const SpecValue& v) { return v.id == kF32BindingsSpec; });
    if (it == d.spec.end()) {
      d.spec.push_back({kF32BindingsSpec, bits});
    } else {
      it->value |= bits;
    }
  }
}

// The ONNX nodes of the engine layers `layers` (a layer without a node list, such as a reformat: its name).
std::vector<std::string> nodes_of_layers(const Engine& engine, const std::vector<size_t>& layers) {
  std::vector<std::string> out;
  for (size_t l : layers) {
    const EngineLayer& layer = engine.layers[l];
    if (layer.nodes.empty())
      out.push_back(layer.name);
    else
      out.insert(out.end(), layer.nodes.begin(), layer.nodes.end());
  }
  return out;
}

// Removes layer `r` and tensor `gone`, whose uses become uses of `kept`.
void drop_reformat(Engine& engine, size_t r, int32_t gone, int32_t kept) {
  engine.layers.erase(engine.layers.begin() + std::ptrdiff_t(r));
  engine.tensors.erase(engine.tensors.begin() + gone);
  auto remap = [&](int32_t& t) {
    if (t == gone) t = kept;
    if (t > gone) --t;
  };
  for (EngineLayer& l : engine.layers) {
    for (int32_t& t : l.inputs) remap(t);
    for (int32_t& t : l.outputs) remap(t);
  }
  for (int32_t& t : engine.inputs) remap(t);
  for (int32_t& t : engine.outputs) remap(t);
}

bool contains(const std::vector<int32_t>& ids, int32_t t) { return std::find(ids.begin(), ids.end(), t) != ids.end(); }

// The positions at which a layer's inputs or outputs `ids` hold `t`.
std::vector<BindingRef> refs(const std::vector<int32_t>& ids, int32_t t, BindingRef (*make)(uint32_t)) {
  std::vector<BindingRef> out;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == t) out.push_back(make(uint32_t(i)));
  return out;
}

// The layers other than `skip` that read `t`, and the one that writes it (layers.size(): none).
struct TensorUses {
  std::vector<size_t> readers;
  size_t producer;
};

// The reformat fusions of one built engine (fuse_reformats), in the order they are tried.
class ReformatFuser {
 public:
  ReformatFuser(Engine& engine, const RewriteFilter& filter, std::vector<AppliedRewrite>& rewrites)
      : engine_(engine), filter_(filter), rewrites_(rewrites), top_level_(engine.layers.size(), false) {
    for (const LayerBlock::Item& item : layer_blocks(engine, "the built engine").items) top_level_[item.layer] = true;
  }

  ReformatFusions run() {
    for (size_t r = 0; r < engine_.layers.size();) {
      const EngineLayer& reformat = engine_.layers[r];
      if (reformat.op != "Reformat" || !top_level_[r] || !fuse(r)) ++r;
    }
    write_outputs_f32();
    return fused_;
  }

 private:
  // Whether a fusion of `kind` for tensor `t` into `layers` may apply; records it (changing `layer`) when so.
  bool apply(RewriteKind kind, const std::string& t, const std::vector<size_t>& layers, const std::string& layer) {
    std::vector<std::string> nodes = nodes_of_layers(engine_, layers);
    if (!filter_.allows(kind, t, nodes)) return false;
    rewrites_.push_back({kind, t, layer, std::move(nodes)});
    return true;
  }
  TensorUses uses_of(int32_t t, size_t skip) const {
    TensorUses u{{}, engine_.layers.size()};
    for (size_t l = 0; l < engine_.layers.size(); ++l) {
      if (l == skip) continue;
      if (contains(engine_.layers[l].inputs, t)) u.readers.push_back(l);
      if (contains(engine_.layers[l].outputs, t)) u.producer = l;
    }
    return u;
  }
  // Whether `layer` can store its output `t` in fp32: every dispatch binding it can.
  static bool can_store_f32(const EngineLayer& layer, int32_t t) {
    const std::vector<BindingRef> uses = refs(layer.outputs, t, &BindingRef::output);
    return std::all_of(uses.begin(), uses.end(), [&](BindingRef u) { return can_hold_f32(layer, u); });
  }
  // Makes `layer` store its output `t` in fp32 (where can_store_f32).
  void store_f32(EngineLayer& layer, int32_t t) {
    for (BindingRef u : refs(layer.outputs, t, &BindingRef::output)) hold_f32(layer, u);
    engine_.tensors[size_t(t)].storage = StorageType::F32;
  }
  // Removes reformat layer `r` and its result `gone`, whose uses become uses of `kept`.
  void drop(size_t r, int32_t gone, int32_t kept) {
    drop_reformat(engine_, r, gone, kept);
    top_level_.erase(top_level_.begin() + std::ptrdiff_t(r));
  }
  // Fuses reformat layer `r` away where one of the fusions applies; false when none does.
  bool fuse(size_t r);
  // fp32 model outputs that an fp16 layer produces and no layer reads are written in fp32.
  void write_outputs_f32();

  Engine& engine_;
  const RewriteFilter& filter_;
  std::vector<AppliedRewrite>& rewrites_;
  std::vector<bool> top_level_;  // which layers stand outside If/Loop bodies, kept in step as reformat layers go
  ReformatFusions fused_;
};

bool ReformatFuser::fuse(size_t r) {
  Engine& engine = engine_;
  const EngineLayer& reformat = engine.layers[r];
  const int32_t src = reformat.inputs.at(0), dst = reformat.outputs.at(0);
  const StorageType from = engine.tensors[size_t(src)].storage, to = engine.tensors[size_t(dst)].storage;
  const TensorUses src_uses = uses_of(src, r);
  const std::vector<size_t> dst_readers = uses_of(dst, r).readers;
  const size_t producer = src_uses.producer;
  const bool src_alone = src_uses.readers.empty() && !contains(engine.outputs, src);
  const std::string name = engine.tensors[size_t(src)].name, reformat_name = reformat.name;
  if (contains(engine.inputs, src) && src_alone && apply(RewriteKind::ReformatOnUpload, name, dst_readers, "")) {
    VKG_VERBOSE("Fused reformat '" << reformat_name << "' into the upload of input '" << name << "'");
    engine.tensors[size_t(src)].storage = to;
    drop(r, dst, src);
    ++fused_.on_upload;
    return true;
  }
  if (from == StorageType::F32 && to == StorageType::F16 && !dst_readers.empty() && !contains(engine.outputs, dst) &&
      std::all_of(dst_readers.begin(), dst_readers.end(),
                  [&](size_t l) {
                    const std::vector<BindingRef> uses = refs(engine.layers[l].inputs, dst, &BindingRef::input);
                    return std::all_of(uses.begin(), uses.end(),
                                       [&](BindingRef u) { return can_hold_f32(engine.layers[l], u); });
                  }) &&
      apply(RewriteKind::ReformatFp32Read, name, dst_readers, engine.layers[dst_readers[0]].name)) {
    for (size_t l : dst_readers) {
      for (BindingRef u : refs(engine.layers[l].inputs, dst, &BindingRef::input)) hold_f32(engine.layers[l], u);
      VKG_VERBOSE("Fused reformat '" << reformat_name << "' into layer '" << engine.layers[l].name << "': it reads '"
                                     << name << "' in fp32");
    }
    drop(r, dst, src);
    ++fused_.into_layers;
    return true;
  }
  if (from == StorageType::F16 && to == StorageType::F32 && src_alone && producer < engine.layers.size() &&
      can_store_f32(engine.layers[producer], src) &&
      apply(RewriteKind::ReformatFp32Write, name, {producer}, engine.layers[producer].name)) {
    store_f32(engine.layers[producer], src);
    VKG_VERBOSE("Fused reformat '" << reformat_name << "' into layer '" << engine.layers[producer].name
                                   << "': it stores '" << name << "' in fp32");
    drop(r, dst, src);
    ++fused_.into_layers;
    return true;
  }
  return false;
}

void ReformatFuser::write_outputs_f32() {
  Engine& engine = engine_;
  for (int32_t t : engine.outputs) {
    const EngineTensor& tensor = engine.tensors[size_t(t)];
    if (tensor.storage != StorageType::F16 || tensor.dtype != DType::Float32) continue;
    const TensorUses uses = uses_of(t, engine.layers.size());
    if (!uses.readers.empty() || uses.producer == engine.layers.size() || !top_level_[uses.producer]) continue;
    EngineLayer& layer = engine.layers[uses.producer];
    if (!can_store_f32(layer, t) || !apply(RewriteKind::ReformatOutputFp32, tensor.name, {uses.producer}, layer.name))
      continue;
    store_f32(layer, t);
    ++fused_.outputs_f32;
    VKG_VERBOSE("Layer '" << layer.name << "' writes output '" << tensor.name
                          << "' in fp32: the host reads it without converting it");
  }
}

}  // namespace

// Reformat layers fused away once the engine is built (TensorRT fuses reformats into
// neighbouring layers and I/O formats the same way); what each fusion computes is what the
// reformat layer computed. Only reformats outside If/Loop bodies go:
// - a model input that only a Reformat reads is uploaded in the reformat's storage (the
//   executor converts what the host gives while staging it, rounding as the shader does);
// - fp32 -> fp16: the fp16 layers that read the result read the fp32 tensor instead, where each
//   dispatch binding it can (kF32Bindings);
// - fp16 -> fp32: the fp16 layer that produced the tensor writes it in fp32, where only the
//   reformat read it and the producer's dispatches can.
// A tensor returned as an output keeps its form, but for one: an fp32 model output that an fp16
// layer produces and no layer reads is written in fp32 by that layer where its dispatches can,
// the fp16 value widened, so that the host reads it as it is instead of converting each element
// on every run (with PP-OCRv4 rec's 1 x 40 x 6625 output converted on the host, its fp16 engine's
// host overhead per run was 2.5 ms on the H200 machine, the fp32 engine's 0.74 ms, for 0.77 ms of
// device time).
// Each fusion is a rewrite kind (rewrites.h) that `filter` may disable, keyed by the tensor
// converted and involving the nodes of the layers that take the conversion over; each one applied
// is added to `rewrites`.
ReformatFusions fuse_reformats(Engine& engine, const RewriteFilter& filter, std::vector<AppliedRewrite>& rewrites) {
  return ReformatFuser(engine, filter, rewrites).run();
}

namespace {

// What the eliminations of copies below need to know of a built engine: which layers run at the top
// level (outside If and Loop bodies), which tensors the user reads (inputs and outputs), which a
// branching or loop layer reads, each tensor's producers, and the byte alignment a view's start
// needs (binding offsets; 32 so that no shader's vector accesses at a view's edge reach past it).
struct ViewRules {
  std::vector<bool> top_level;
  std::set<int32_t> user_read, tested;
  std::vector<int> producers;
  std::vector<int32_t> producer;
  uint64_t alignment = 32;

  ViewRules(const Engine& engine, const DeviceProfile& device)
      : top_level(engine.layers.size(), false),
        user_read(engine.inputs.begin(), engine.inputs.end()),
        producers(engine.tensors.size(), 0),
        producer(engine.tensors.size(), -1),
        alignment(std::max<uint64_t>(
            {32, device.min_storage_buffer_offset_alignment, device.min_texel_buffer_offset_alignment})) {
    for (const LayerBlock::Item& item : layer_blocks(engine, "the built engine").items) top_level[item.layer] = true;
    user_read.insert(engine.outputs.begin(), engine.outputs.end());
    for (size_t li = 0; li < engine.layers.size(); ++li) {
      const EngineLayer& l = engine.layers[li];
      for (int32_t t : l.outputs) {
        if (t < 0) continue;
        ++producers[size_t(t)];
        producer[size_t(t)] = int32_t(li);
      }
      if (l.is_branch())
        for (int32_t t : l.inputs)
          if (t >= 0) tested.insert(t);
    }
  }
  // Whether tensor `t` can become a view of `whole` from byte `offset` on: not read by the user or a
  // branch or loop, not a view already, stored as `whole` is, whole 32-byte runs from an aligned start.
  bool can_view(const Engine& engine, int32_t t, const EngineTensor& whole, uint64_t offset) const {
    const EngineTensor& v = engine.tensors[size_t(t)];
    return !user_read.count(t) && !tested.count(t) && v.view_of < 0 && v.storage == whole.storage && v.bytes() > 0 &&
           v.bytes() % 32 == 0 && offset % alignment == 0;
  }
  // Layer `c` goes: the indices after it move down.
  void erase_layer(std::vector<EngineLayer>& layers, size_t c) {
    layers.erase(layers.begin() + std::ptrdiff_t(c));
    top_level.erase(top_level.begin() + std::ptrdiff_t(c));
    for (int32_t& p : producer)
      if (p > int32_t(c)) --p;
  }
};

}  // namespace

// Concat layers eliminated once the engine is built (TensorRT's concatenation elimination):
// where the output's slices along the axis are contiguous (every dimension before the axis is
// 1), each input becomes a view of its slice (EngineTensor::view_of) that its producer writes in
// place, and the Concat layer goes. Every input must be produced by one layer of its own outside
// If/Loop bodies (not a model input or a constant), be none of the tensors the user reads (engine
// outputs), be stored as the output is, appear once and not be tested by a branch or loop; each
// slice must start where the device can bind it (offset alignments) and hold whole 32-byte runs,
// so that no producer's vector stores reach past it. Returns the names of the Concat nodes gone and
// adds them to `rewrites` (kind concat-elimination, involving the Concat and the nodes of the layers
// that write its inputs; `filter` may disable it).
std::vector<std::string> eliminate_concats(Engine& engine, const DeviceProfile& device, const RewriteFilter& filter,
                                           std::vector<AppliedRewrite>& rewrites) {
  std::vector<std::string> gone;
  ViewRules rules(engine, device);
  std::vector<bool>& top_level = rules.top_level;
  std::vector<int>& producers = rules.producers;
  std::vector<int32_t>& producer = rules.producer;
  for (size_t c = 0; c < engine.layers.size();) {
    const EngineLayer& concat = engine.layers[c];
    const bool candidate = concat.op == "Concat" && top_level[c] && concat.outputs.size() == 1 &&
                           concat.outputs[0] >= 0 && concat.inputs.size() >= 2;
    std::optional<size_t> axis;
    if (candidate) {
      // The axis: where the first input's extent differs from the output's (every input must
      // match the output elsewhere, and the extents sum to the output's).
      const Shape& out = engine.tensors[size_t(concat.outputs[0])].shape;
      const int32_t first = concat.inputs[0];
      if (first >= 0 && engine.tensors[size_t(first)].shape.size() == out.size()) {
        const Shape& in = engine.tensors[size_t(first)].shape;
        for (size_t d = 0; d < out.size() && !axis; ++d)
          if (in[d] != out[d]) axis = d;
      }
    }
    bool ok = axis.has_value();
    const EngineTensor* out = ok ? &engine.tensors[size_t(concat.outputs[0])] : nullptr;
    for (size_t d = 0; ok && d < *axis; ++d) ok = out->shape[d] == 1;
    std::vector<uint64_t> offsets;
    if (ok) {
      std::set<int32_t> seen;
      uint64_t offset = 0;
      int64_t extent = 0;
      for (int32_t t : concat.inputs) {
        const EngineTensor* in = t >= 0 ? &engine.tensors[size_t(t)] : nullptr;
        ok = in != nullptr && seen.insert(t).second && rules.can_view(engine, t, *out, offset) &&
             in->shape.size() == out->shape.size() && producers[size_t(t)] == 1 && producer[size_t(t)] < int32_t(c) &&
             top_level[size_t(producer[size_t(t)])] && !engine.layers[size_t(producer[size_t(t)])].is_branch();
        for (size_t d = 0; ok && d < out->shape.size(); ++d) ok = d == *axis || in->shape[d] == out->shape[d];
        if (!ok) break;
        offsets.push_back(offset);
        offset += in->bytes();
        extent += in->shape[*axis];
      }
      ok = ok && extent == out->shape[*axis] && offset == out->bytes();
    }
    std::vector<size_t> involved{c};
    for (size_t i = 0; ok && i < concat.inputs.size(); ++i)
      involved.push_back(size_t(producer[size_t(concat.inputs[i])]));
    const std::vector<std::string> nodes = ok ? nodes_of_layers(engine, involved) : std::vector<std::string>{};
    ok = ok && filter.allows(RewriteKind::ConcatElimination, concat.name, nodes);
    if (!ok) {
      ++c;
      continue;
    }
    for (size_t i = 0; i < concat.inputs.size(); ++i) {
      EngineTensor& in = engine.tensors[size_t(concat.inputs[i])];
      in.view_of = concat.outputs[0];
      in.offset = offsets[i];
    }
    VKG_VERBOSE("Eliminated concat '" << concat.name << "': its " << concat.inputs.size()
                                      << " inputs are written in place into '" << out->name << "'");
    gone.push_back(concat.name);
    rewrites.push_back({RewriteKind::ConcatElimination, concat.name, "", nodes});
    // Its output has no producer now: a Concat reading it keeps its layer.
    producers[size_t(concat.outputs[0])] = 0;
    producer[size_t(concat.outputs[0])] = -1;
    rules.erase_layer(engine.layers, c);
  }
  return gone;
}

// Layers that copy a contiguous range of their input (LayerPlan::input_range: a Slice of whole
// rows, such as the query, key and value of an attention layer taken from one tensor; a Transpose
// that moves only axes of extent 1) eliminated once the engine is built: the output becomes a
// view of the input from the range's start (EngineTensor::view_of), and the layer goes. The
// output must be none of the tensors the user reads, be produced by this layer alone, at the top
// level, be stored as the input is and not be a view already; the range must start where the
// device can bind it and hold whole 32-byte runs. The input and every reader of the output are
// untouched: the memory plan keeps the input's memory until the last of its views is read.
// Clears input_range in every layer. Returns the names of the layers gone and adds them to
// `rewrites` (kind range-copy-view, involving the copy's nodes and those of the layer that writes
// its input; `filter` may disable it).
std::vector<std::string> eliminate_range_copies(Engine& engine, const DeviceProfile& device,
                                                const RewriteFilter& filter, std::vector<AppliedRewrite>& rewrites) {
  std::vector<std::string> gone;
  ViewRules rules(engine, device);
  for (size_t c = 0; c < engine.layers.size();) {
    EngineLayer& layer = engine.layers[c];
    const int64_t first = std::exchange(layer.plan.input_range, -1);
    const int32_t in = layer.inputs.empty() ? -1 : layer.inputs[0];
    const int32_t out = layer.outputs.size() == 1 ? layer.outputs[0] : -1;
    const bool candidate = first >= 0 && in >= 0 && out >= 0 && rules.top_level[c] && !layer.is_branch() &&
                           rules.producers[size_t(out)] == 1;
    const EngineTensor* src = candidate ? &engine.tensors[size_t(in)] : nullptr;
    const uint64_t offset = candidate ? uint64_t(first) * storage_element_bytes(src->storage) : 0;
    std::vector<size_t> involved{c};
    if (candidate && rules.producer[size_t(in)] >= 0) involved.push_back(size_t(rules.producer[size_t(in)]));
    const std::vector<std::string> nodes = candidate ? nodes_of_layers(engine, involved) : std::vector<std::string>{};
    if (!candidate || !rules.can_view(engine, out, *src, offset) ||
        offset + engine.tensors[size_t(out)].bytes() > src->bytes() ||
        !filter.allows(RewriteKind::RangeCopyView, layer.name, nodes)) {
      ++c;
      continue;
    }
    EngineTensor& view = engine.tensors[size_t(out)];
    view.view_of = in;
    view.offset = offset;
    VKG_VERBOSE("Eliminated layer '" << layer.name << "' (" << layer.op << "): '" << view.name << "' is a view of '"
                                     << src->name << "' from byte " << offset);
    gone.push_back(layer.name);
    rewrites.push_back({RewriteKind::RangeCopyView, layer.name, "", nodes});
    rules.erase_layer(engine.layers, c);
  }
  return gone;
}

}  // namespace vkg::builder_impl
