#include "runtime/engine/builder.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <deque>
#include <iomanip>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/core/version.h"
#include "runtime/engine/cpu_cost_model.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/shader_library.h"
#include "runtime/engine/tactic_validation.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {

std::vector<Tensor> PlanTimer::run(const LayerPlan&, const std::vector<Tensor>&, const std::vector<Buffer>&, bool) {
  VKG_THROW("this device timer cannot run plans on data (needed by --validate-tactics)");
}

void PlanTimer::compile(const std::vector<const LayerPlan*>&) {}

const char* fp16_policy_name(Fp16Policy p) {
  switch (p) {
    case Fp16Policy::Auto: return "auto";
    case Fp16Policy::Fastest: return "fastest";
    case Fp16Policy::All: return "all";
  }
  return "?";
}

std::optional<Fp16Policy> parse_fp16_policy(const std::string& text) {
  for (Fp16Policy p : {Fp16Policy::Auto, Fp16Policy::Fastest, Fp16Policy::All})
    if (text == fp16_policy_name(p)) return p;
  return std::nullopt;
}

const char* precision_constraints_name(PrecisionConstraints c) {
  switch (c) {
    case PrecisionConstraints::None:
      return "none";
    case PrecisionConstraints::Prefer:
      return "prefer";
    case PrecisionConstraints::Obey:
      return "obey";
  }
  return "?";
}

bool is_layer_pattern(const std::string& key) { return key.find_first_of("*?") != std::string::npos; }

bool layer_precision_matches(const std::string& key, const std::string& node) {
  return key == node || (is_layer_pattern(key) && glob_match(key, node));
}

std::optional<PrecisionConstraints> parse_precision_constraints(const std::string& text) {
  if (text == "none") return PrecisionConstraints::None;
  if (text == "prefer") return PrecisionConstraints::Prefer;
  if (text == "obey") return PrecisionConstraints::Obey;
  return std::nullopt;
}

DeviceIdentity device_identity(const DeviceProfile& device) {
  DeviceIdentity id;
  id.device_name = device.name;
  id.vendor_id = device.vendor_id;
  id.device_id = device.device_id;
  id.driver_version = device.driver_info.empty() ? std::to_string(device.driver_version) : device.driver_info;
  id.pipeline_cache_uuid = device.uuid;
  id.vkgraphy_version = VKGRAPHY_VERSION;
  for (const std::string& f : device.switched_off) id.switched_off += (id.switched_off.empty() ? "" : ",") + f;
  return id;
}

namespace {

void collect_unsupported(const Graph& graph, const TacticRegistry& registry,
                         std::map<std::string, std::vector<std::string>>& missing) {
  for (const Node& n : graph.nodes) {
    if (n.op_type == "Constant" || n.op_type == "Shape" || n.op_type == "Size") continue;  // folded
    if (n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop")) {  // the builder adds their subgraphs' layers
      for (const Graph* branch : n.subgraphs()) collect_unsupported(*branch, registry, missing);
      continue;
    }
    if (!n.domain.empty() || registry.for_op(n.op_type).empty()) {
      missing[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type].push_back(n.name);
    }
  }
}

// Every node name in `graph` and its subgraphs.
}  // namespace

std::vector<std::string> unsupported_vulkan_ops(const Graph& graph, const TacticRegistry& registry) {
  std::map<std::string, std::vector<std::string>> missing;
  collect_unsupported(graph, registry, missing);
  std::vector<std::string> out;
  for (const auto& [op, names] : missing) {
    std::string line = op + " (";
    for (size_t i = 0; i < names.size() && i < 3; ++i) line += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > 3) line += ", ... " + std::to_string(names.size()) + " in all";
    out.push_back(line + ")");
  }
  return out;
}

namespace {

constexpr uint32_t kReformatLocalSize = 64;

struct Candidate {
  const Tactic* tactic;
  Precision precision;
  LayerPlan plan;
  std::vector<LayerTensor>* inputs;  // the context it was planned in (per precision)
};

// Whether a candidate's shaders synchronize the invocations of a workgroup (shared-memory tiles).
bool synchronizes_workgroup(const Candidate& c) {
  return std::any_of(c.plan.dispatches.begin(), c.plan.dispatches.end(),
                     [](const Dispatch& d) { return vkg::synchronizes_workgroup(builtin_shader(d.shader)); });
}

// Drops the candidates the cost model of CPU devices rules out (cpu_cost_model.h), where one it
// keeps is left, before any is compiled. Returns how many were dropped.
size_t prune_for_cpu(std::vector<Candidate>& cands) {
  std::vector<bool> out(cands.size());
  for (size_t i = 0; i < cands.size(); ++i)
    out[i] = synchronizes_workgroup(cands[i]) || dominated_on_cpu(cands[i].tactic->name);
  if (std::all_of(out.begin(), out.end(), [](bool b) { return b; })) return 0;
  std::vector<Candidate> kept;
  for (size_t i = 0; i < cands.size(); ++i)
    if (!out[i]) kept.push_back(std::move(cands[i]));
  const size_t dropped = cands.size() - kept.size();
  cands = std::move(kept);
  return dropped;
}

// Drops the fp16 candidates whose arithmetic is not `wanted` where one of that arithmetic is
// left (BuilderConfig::layer_arith, Fp16Policy::All); nothing without a wish.
void keep_arith(std::vector<Candidate>& cands, std::optional<Arith> wanted) {
  if (!wanted) return;
  auto other = [&](const Candidate& c) { return c.precision == Precision::FP16 && c.tactic->arith != *wanted; };
  const bool any = std::any_of(cands.begin(), cands.end(), [&](const Candidate& c) {
    return c.precision == Precision::FP16 && c.tactic->arith == *wanted;
  });
  if (any) cands.erase(std::remove_if(cands.begin(), cands.end(), other), cands.end());
}

std::string format_ns(double ns) {
  std::ostringstream s;
  s << std::fixed;
  if (ns >= 1e6)
    s << std::setprecision(3) << ns / 1e6 << " ms";
  else
    s << std::setprecision(1) << ns / 1e3 << " us";
  return s.str();
}

std::string format_error(double e) {
  std::ostringstream s;
  s << std::setprecision(3) << e;
  return s.str();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// How many candidates (in heuristic order) and samples each optimization level times.
size_t candidates_for_level(int level) {
  switch (level) {
    case 0:
      return 1;
    case 1:
      return 2;
    case 2:
      return 3;
    case 3:
      return 6;
    case 4:
      return 10;
    default:
      return SIZE_MAX;
  }
}
int samples_for_level(int level) { return level <= 1 ? 3 : level <= 3 ? 5 : 9; }

bool tactic_allowed(const BuilderConfig& config, const std::string& name) {
  if (!config.tactics_allow.empty() && std::none_of(config.tactics_allow.begin(), config.tactics_allow.end(),
                                                    [&](const std::string& g) { return glob_match(g, name); }))
    return false;
  return std::none_of(config.tactics_deny.begin(), config.tactics_deny.end(),
                      [&](const std::string& g) { return glob_match(g, name); });
}

// A conversion between storage forms of one tensor (also used to copy a
// constant into an engine output): shaders/engine/reformat.comp.
LayerPlan reformat_plan(StorageType from, StorageType to, uint64_t n, const DeviceProfile& device,
                        std::optional<Tensor> constant) {
  LayerPlan plan;
  Dispatch d;
  const bool half = from == StorageType::F16 || to == StorageType::F16;
  d.shader = half ? "engine/reformat.f16" : "engine/reformat.f32";
  d.spec = {{0, kReformatLocalSize}, {1, uint32_t(from)}, {2, uint32_t(to)}};
  d.bindings = {constant ? add_weight(plan, std::move(*constant)) : BindingRef::input(0), BindingRef::output(0)};
  d.push = {uint32_t(n)};
  d.groups = linear_groups(n, kReformatLocalSize, device);
  plan.dispatches.push_back(std::move(d));
  return plan;
}

struct ReformatFusions {
  size_t on_upload = 0, into_layers = 0;
  size_t outputs_f32 = 0;  // fp32 model outputs an fp16 layer writes in fp32 (no conversion on the host)
};

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
  ReformatFusions fused;
  // Whether a fusion of `kind` for tensor `t` into `layers` may apply; records it (changing `layer`) when so.
  auto apply = [&](RewriteKind kind, const std::string& t, const std::vector<size_t>& layers, const std::string& layer) {
    std::vector<std::string> nodes = nodes_of_layers(engine, layers);
    if (!filter.allows(kind, t, nodes)) return false;
    rewrites.push_back({kind, t, layer, std::move(nodes)});
    return true;
  };
  auto contains = [](const std::vector<int32_t>& ids, int32_t t) {
    return std::find(ids.begin(), ids.end(), t) != ids.end();
  };
  // The positions at which a layer's inputs or outputs `ids` hold `t`.
  auto refs = [](const std::vector<int32_t>& ids, int32_t t, BindingRef (*make)(uint32_t)) {
    std::vector<BindingRef> out;
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == t) out.push_back(make(uint32_t(i)));
    return out;
  };
  // The layers other than `skip` that read `t`, and the one that writes it (layers.size(): none).
  struct TensorUses {
    std::vector<size_t> readers;
    size_t producer;
  };
  auto uses_of = [&](int32_t t, size_t skip) {
    TensorUses u{{}, engine.layers.size()};
    for (size_t l = 0; l < engine.layers.size(); ++l) {
      if (l == skip) continue;
      if (contains(engine.layers[l].inputs, t)) u.readers.push_back(l);
      if (contains(engine.layers[l].outputs, t)) u.producer = l;
    }
    return u;
  };
  // Whether `layer` can store its output `t` in fp32: every dispatch binding it can.
  auto can_store_f32 = [&](const EngineLayer& layer, int32_t t) {
    const std::vector<BindingRef> uses = refs(layer.outputs, t, &BindingRef::output);
    return std::all_of(uses.begin(), uses.end(), [&](BindingRef u) { return can_hold_f32(layer, u); });
  };
  // Makes `layer` store its output `t` in fp32 (where can_store_f32).
  auto store_f32 = [&](EngineLayer& layer, int32_t t) {
    for (BindingRef u : refs(layer.outputs, t, &BindingRef::output)) hold_f32(layer, u);
    engine.tensors[size_t(t)].storage = StorageType::F32;
  };
  // Which layers stand outside If/Loop bodies, kept in step as reformat layers go.
  std::vector<bool> top_level(engine.layers.size(), false);
  for (const LayerBlock::Item& item : layer_blocks(engine, "the built engine").items) top_level[item.layer] = true;
  for (size_t r = 0; r < engine.layers.size();) {
    const EngineLayer& reformat = engine.layers[r];
    if (reformat.op != "Reformat" || !top_level[r]) {
      ++r;
      continue;
    }
    // Removes the reformat and its result `gone`, whose uses become uses of `kept`.
    auto drop = [&](int32_t gone, int32_t kept) {
      drop_reformat(engine, r, gone, kept);
      top_level.erase(top_level.begin() + std::ptrdiff_t(r));
    };
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
      drop(dst, src);
      ++fused.on_upload;
      continue;
    }
    if (from == StorageType::F32 && to == StorageType::F16 && !dst_readers.empty() && !contains(engine.outputs, dst) &&
        std::all_of(dst_readers.begin(), dst_readers.end(), [&](size_t l) {
          const std::vector<BindingRef> uses = refs(engine.layers[l].inputs, dst, &BindingRef::input);
          return std::all_of(uses.begin(), uses.end(), [&](BindingRef u) { return can_hold_f32(engine.layers[l], u); });
        }) &&
        apply(RewriteKind::ReformatFp32Read, name, dst_readers, engine.layers[dst_readers[0]].name)) {
      for (size_t l : dst_readers) {
        for (BindingRef u : refs(engine.layers[l].inputs, dst, &BindingRef::input)) hold_f32(engine.layers[l], u);
        VKG_VERBOSE("Fused reformat '" << reformat_name << "' into layer '" << engine.layers[l].name << "': it reads '"
                                       << name << "' in fp32");
      }
      drop(dst, src);
      ++fused.into_layers;
      continue;
    }
    if (from == StorageType::F16 && to == StorageType::F32 && src_alone && producer < engine.layers.size() &&
        can_store_f32(engine.layers[producer], src) &&
        apply(RewriteKind::ReformatFp32Write, name, {producer}, engine.layers[producer].name)) {
      store_f32(engine.layers[producer], src);
      VKG_VERBOSE("Fused reformat '" << reformat_name << "' into layer '" << engine.layers[producer].name
                                     << "': it stores '" << name << "' in fp32");
      drop(dst, src);
      ++fused.into_layers;
      continue;
    }
    ++r;
  }
  for (int32_t t : engine.outputs) {
    const EngineTensor& tensor = engine.tensors[size_t(t)];
    if (tensor.storage != StorageType::F16 || tensor.dtype != DType::Float32) continue;
    const TensorUses uses = uses_of(t, engine.layers.size());
    if (!uses.readers.empty() || uses.producer == engine.layers.size() || !top_level[uses.producer]) continue;
    EngineLayer& layer = engine.layers[uses.producer];
    if (!can_store_f32(layer, t) || !apply(RewriteKind::ReformatOutputFp32, tensor.name, {uses.producer}, layer.name))
      continue;
    store_f32(layer, t);
    ++fused.outputs_f32;
    VKG_VERBOSE("Layer '" << layer.name << "' writes output '" << tensor.name
                          << "' in fp32: the host reads it without converting it");
  }
  return fused;
}

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
    for (size_t i = 0; ok && i < concat.inputs.size(); ++i) involved.push_back(size_t(producer[size_t(concat.inputs[i])]));
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

// Sets a fused activation on the dispatch of `plan` that writes the layer's
// output last; false (`why_not` filled) when that dispatch's shader applies none.
bool apply_activation(const FusedActivation& activation, LayerPlan& plan, std::string& why_not) {
  for (auto d = plan.dispatches.rbegin(); d != plan.dispatches.rend(); ++d) {
    if (std::find(d->bindings.begin(), d->bindings.end(), BindingRef::output(0)) == d->bindings.end()) continue;
    if (!declares_spec_constant(builtin_shader(d->shader), 20)) break;
    const std::vector<SpecValue> epilogue = epilogue_spec(activation);
    d->spec.insert(d->spec.end(), epilogue.begin(), epilogue.end());
    return true;
  }
  why_not = "its shader cannot apply the fused activation";
  return false;
}

// While it lives, a plan's epilogue scale and shift after the activation (specialization
// constants 23, 24: values that change the result, not the work) hold fixed values, so that
// layers differing only in them time the same pipelines; the plan gets its own back after
// (in place: a copy of the plan would copy its weights for every timing). The values have no
// special form: lavapipe compiled conv.direct_tile2x8 with a scale of 0.5 10% faster than with
// 0.7 or 1.5 (a 1x1 Conv 192->192 at 20x20 with HardSwish, 0.96 against 1.02-1.06 ms), so timing
// with 0.5 made the builder prefer that tactic on PP-OCRv4 det, where the real scales run slower.
class FixedEpilogueConstants {
 public:
  explicit FixedEpilogueConstants(LayerPlan& plan) {
    for (Dispatch& d : plan.dispatches)
      for (SpecValue& v : d.spec)
        if (v.id == 23 || v.id == 24) {
          saved_.emplace_back(&v, v.value);
          v.value = std::bit_cast<uint32_t>(v.id == 23 ? 0.7071f : 0.1234f);
        }
  }
  ~FixedEpilogueConstants() {
    for (const auto& [v, value] : saved_) v->value = value;
  }
  FixedEpilogueConstants(const FixedEpilogueConstants&) = delete;
  FixedEpilogueConstants& operator=(const FixedEpilogueConstants&) = delete;

 private:
  std::vector<std::pair<SpecValue*, uint32_t>> saved_;
};

class Builder {
 public:
  Builder(const Graph& graph, const BuilderConfig& config, const DeviceProfile& device, const DeviceIdentity& identity,
          PlanTimer* timer, const TacticRegistry& registry)
      : graph_(graph), config_(config), device_(device), identity_(identity), timer_(timer), registry_(registry) {}

  BuildResult build();

 private:
  const Tensor* constant(const std::string& name) const {
    auto f = folded_.find(name);
    if (f != folded_.end()) return &f->second;
    for (auto g = scopes_.rbegin(); g != scopes_.rend(); ++g) {
      auto i = (*g)->initializers.find(name);
      if (i != (*g)->initializers.end()) return &i->second;
    }
    return nullptr;
  }
  // The declared type and shape of `name` in the innermost graph that knows it.
  const ValueInfo* find_info(const std::string& name) const {
    for (auto g = scopes_.rbegin(); g != scopes_.rend(); ++g)
      if (const ValueInfo* vi = (*g)->find_value_info(name)) return vi;
    return nullptr;
  }
  // `graph`'s nodes with unique layer names: unnamed ones become "<prefix><Op>_<index>".
  std::vector<const Node*> named_nodes(const Graph& graph, const std::string& prefix);
  // Folds what it can of `nodes`, then optimizes and adds the rest as layers;
  // `keep` are the tensors read after them (never fused or aliased away).
  void add_block(const std::vector<const Node*>& nodes, std::vector<std::string> keep);
  void add_layers(const std::vector<const Node*>& remaining, std::vector<std::string> keep);
  void add_if(const Node& node, size_t index, size_t total);
  void add_loop(const Node& node, size_t index, size_t total);
  // A copy of the tensor `from` (an input of `layer`, or a weight when from_weight) into output `out`.
  void add_copy(EngineLayer& layer, StorageType storage, uint64_t elements, BindingRef from, uint32_t out);
  bool try_fold(const Node& node);
  ValueInfo info_of(const std::string& name, const Node& node) const;
  int32_t add_tensor(const std::string& name, DType dtype, const Shape& shape, StorageType storage);
  int32_t tensor_in(const std::string& name, StorageType storage);
  void add_layer(const Node& node, const std::vector<std::string>& held, size_t index, size_t total);
  std::string resolve(const std::string& name) const {
    auto it = aliases_.find(name);
    return it == aliases_.end() ? name : it->second;
  }
  // The rewrites this build may apply (--no-fusion, --disable-rewrite).
  RewriteFilter rewrite_filter() const { return {config_.fusion, config_.disabled_rewrites}; }
  // The pin of a layer holding nodes `held`; *by_pattern tells whether a pattern gave it.
  std::optional<Precision> pin_for(const std::vector<std::string>& held, bool* by_pattern = nullptr) const;
  // The arithmetic an fp16 layer holding `held` should take: its nodes' --load-layer-precisions
  // entry, else fp16 arithmetic when every layer is fp16 (Fp16Policy::All); nullopt: any.
  std::optional<Arith> arith_for(const std::vector<std::string>& held) const;
  std::vector<Candidate> candidates(const Node& node, const std::vector<Precision>& precisions,
                                    std::map<Precision, std::vector<LayerTensor>>& inputs,
                                    std::map<Precision, std::vector<LayerTensor>>& outputs,
                                    std::vector<std::string>& declined, bool ignore_filters,
                                    const std::string& only_tactic);
  std::vector<Precision> precisions_for(const Node& node, const std::vector<std::string>& held, bool float_layer);
  void add_constant_output(const std::string& name);
  void progress(size_t index, size_t total, const Node& node);
  double reformats_before(const Candidate& c);
  // --validate-tactics: runs the candidates in order on the layer's inputs as
  // the reference computed them, until `quota` of each precision have passed
  // (the rest stay, unvalidated, behind them), moves the rejected ones out of
  // `cands` into `rejected`, and records each validated candidate's error in
  // `errors` (by tactic name). Does nothing when the reference did not compute
  // the layer's tensors.
  void validate(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                std::map<Precision, std::vector<LayerTensor>>& outputs, size_t quota,
                std::vector<CandidateTiming>& rejected, std::map<std::string, double>& errors);
  double reformat_time(StorageType from, StorageType to, uint64_t elements);

  const Graph& graph_;
  const BuilderConfig& config_;
  const DeviceProfile& device_;
  const DeviceIdentity& identity_;
  PlanTimer* timer_;
  const TacticRegistry& registry_;

  BuildResult result_;
  std::deque<Node> nodes_;            // the graph's nodes and its If branches', each with a unique name
  std::set<std::string> names_;       // node names taken
  std::vector<std::string> unreplayed_;  // layers a loaded replay does not name (chosen by timing)
  std::vector<const Graph*> scopes_;  // the model's graph, then the branches being added
  std::deque<Graph> synthetic_;       // types of the tensors of nodes the builder adds (loop counters)
  std::map<std::string, Tensor> folded_;
  std::map<std::string, std::string> aliases_;  // removed no-ops: tensor -> the tensor whose buffer it shares
  // Engine tensor of each (tensor name, storage) pair; the first entry per name is the producer's.
  std::map<std::pair<std::string, StorageType>, int32_t> tensors_;
  std::map<std::string, StorageType> produced_storage_;
  std::map<std::pair<std::string, std::string>, CandidateTiming> timed_;          // (signature key, tactic)
  std::map<std::tuple<StorageType, StorageType, uint64_t>, double> reformat_ns_;  // measured once per size
  std::mt19937_64 rng_;
  bool progress_line_ = false;
  bool fp16_everywhere_ = false;  // --fp16 with Fp16Policy::All (or Auto on a device with slow fp16)
};

bool Builder::try_fold(const Node& node) {
  if (!node.subgraphs().empty()) return false;  // Ifs left by the import have a computed condition
  if (node.op_type == "Shape" || node.op_type == "Size") {
    const ValueInfo vi = info_of(node.inputs.at(0), node);
    const Shape shape = vi.concrete_shape();
    if (node.op_type == "Size") {
      folded_[node.outputs.at(0)] = Tensor::scalar<int64_t>(num_elements(shape));
      return true;
    }
    const int64_t rank = int64_t(shape.size());
    int64_t start = node.attr_int("start", 0), end = node.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    folded_[node.outputs.at(0)] =
        Tensor::from_vector<int64_t>({end - start}, std::vector<int64_t>(shape.begin() + start, shape.begin() + end));
    return true;
  }
  std::vector<const Tensor*> inputs;
  for (const std::string& in : node.inputs) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const Tensor* t = constant(in);
    if (t == nullptr) return false;
    inputs.push_back(t);
  }
  std::vector<Tensor> outs = run_reference_node(node, graph_.opset, inputs);
  for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i) {
    if (!node.outputs[i].empty()) folded_[node.outputs[i]] = std::move(outs[i]);
  }
  return true;
}

ValueInfo Builder::info_of(const std::string& name, const Node& node) const {
  if (const Tensor* t = constant(name)) {
    ValueInfo v;
    v.name = name;
    v.dtype = t->dtype();
    std::vector<Dim> dims;
    for (int64_t d : t->shape()) dims.push_back(Dim{d, ""});
    v.shape = dims;
    return v;
  }
  const ValueInfo* vi = find_info(name);
  VKG_CHECK(vi == nullptr || vi->dtype || !vi->static_shape(),
            node.describe() << ": tensor '" << name << "' has type/shape " << vi->describe()
                            << ": its data type is unknown or not one vkgraphy holds (numeric tensors only)");
  VKG_CHECK(vi != nullptr && vi->dtype && vi->static_shape(),
            node.describe() << ": tensor '" << name << "' has "
                            << (vi == nullptr ? std::string("no known type or shape") : "type/shape " + vi->describe())
                            << "; the Vulkan builder needs static shapes (use --input-shapes)");
  return *vi;
}

int32_t Builder::add_tensor(const std::string& name, DType dtype, const Shape& shape, StorageType storage) {
  EngineTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  t.storage = storage;
  result_.engine.tensors.push_back(std::move(t));
  const int32_t id = int32_t(result_.engine.tensors.size() - 1);
  tensors_[{name, storage}] = id;
  produced_storage_.emplace(name, storage);
  return id;
}

// The engine tensor holding `name` in `storage`, inserting a reformat layer when
// it exists only in another storage form.
int32_t Builder::tensor_in(const std::string& alias, StorageType storage) {
  const std::string name = resolve(alias);
  auto it = tensors_.find({name, storage});
  if (it != tensors_.end()) return it->second;
  auto produced = produced_storage_.find(name);
  VKG_CHECK(produced != produced_storage_.end(), "tensor '" << name << "' is used before it is produced");
  const int32_t src = tensors_.at({name, produced->second});
  const EngineTensor source = result_.engine.tensors[size_t(src)];
  VKG_CHECK(source.storage != StorageType::I32 && storage != StorageType::I32,
            "tensor '" << name << "' cannot be converted between integer and float storage");
  EngineTensor t = source;
  t.name = name + ":" + storage_type_name(storage);
  t.storage = storage;
  t.slot = -1;
  result_.engine.tensors.push_back(t);
  const int32_t id = int32_t(result_.engine.tensors.size() - 1);
  tensors_[{name, storage}] = id;

  EngineLayer layer;
  layer.name = name + " reformat " + storage_type_name(source.storage) + "->" + storage_type_name(storage);
  layer.op = "Reformat";
  layer.tactic = std::string("reformat.") + storage_type_name(source.storage) + "_to_" + storage_type_name(storage);
  layer.precision = Precision::FP32;
  layer.inputs = {src};
  layer.outputs = {id};
  layer.plan = reformat_plan(source.storage, storage, uint64_t(num_elements(source.shape)), device_, std::nullopt);
  result_.engine.layers.push_back(std::move(layer));
  ++result_.stats.reformats;
  return id;
}

void Builder::add_constant_output(const std::string& name) {
  const Tensor* value = constant(name);
  const std::optional<StorageType> storage = storage_for(value->dtype(), Precision::FP32);
  VKG_CHECK(storage.has_value(), "output '" << name << "' is " << dtype_name(value->dtype())
                                            << ", which the Vulkan backend does not support");
  const int32_t id = add_tensor(name, value->dtype(), value->shape(), *storage);
  EngineLayer layer;
  layer.name = name + " constant";
  layer.op = "Constant";
  layer.tactic = "constant.copy";
  layer.outputs = {id};
  layer.plan = reformat_plan(*storage, *storage, uint64_t(value->size()), device_,
                             to_storage(*value, *storage, "constant '" + name + "'"));
  result_.engine.layers.push_back(std::move(layer));
}

std::optional<Precision> Builder::pin_for(const std::vector<std::string>& held, bool* by_pattern) const {
  // A fused layer takes its nodes' pins; when they disagree, fp32 (the safe side).
  // Pins by name win over pins by pattern ('*', '?'), which apply only where no name does.
  auto merge = [](std::optional<Precision>& pin, Precision p) { pin = pin && *pin != p ? Precision::FP32 : p; };
  std::optional<Precision> pin;
  for (const std::string& n : held) {
    auto it = config_.layer_precisions.find(n);
    if (it != config_.layer_precisions.end()) merge(pin, it->second);
  }
  if (by_pattern) *by_pattern = false;
  if (pin) return pin;
  for (const auto& [pattern, p] : config_.layer_precisions) {
    if (!is_layer_pattern(pattern)) continue;
    for (const std::string& n : held)
      if (glob_match(pattern, n)) {
        merge(pin, p);
        if (by_pattern) *by_pattern = true;
        break;
      }
  }
  return pin;
}

std::optional<Arith> Builder::arith_for(const std::vector<std::string>& held) const {
  for (const std::string& n : held)
    if (auto it = config_.layer_arith.find(n); it != config_.layer_arith.end()) return it->second;
  if (fp16_everywhere_) return Arith::F16;
  return std::nullopt;
}

std::vector<Precision> Builder::precisions_for(const Node& node, const std::vector<std::string>& held,
                                               bool float_layer) {
  const bool fp16_ok = device_.fp16();
  std::vector<Precision> out;
  if (config_.fp16 && fp16_ok && float_layer) out.push_back(Precision::FP16);
  out.push_back(Precision::FP32);
  bool by_pattern = false;
  const std::optional<Precision> pin = pin_for(held, &by_pattern);
  if (!pin || config_.constraints == PrecisionConstraints::None) {
    // Data movement rounds nothing itself: it runs in the precision its input
    // already has, so that no reformat pair is inserted around it.
    if (out.size() > 1 && moves_data_only(node.op_type)) {
      for (const std::string& in : node.inputs) {
        if (in.empty() || constant(in) != nullptr) continue;
        auto produced = produced_storage_.find(resolve(in));
        if (produced == produced_storage_.end() || produced->second == StorageType::I32) continue;
        return {produced->second == StorageType::F16 ? Precision::FP16 : Precision::FP32};
      }
    }
    if (out.size() > 1 && fp16_everywhere_) return {Precision::FP16};  // add_layer falls back when none serves
    return out;
  }
  const Precision p = *pin;
  std::string problem;
  if (p == Precision::FP16 && !float_layer) problem = "it has no floating-point tensors";
  if (p == Precision::FP16 && !fp16_ok) problem = "device '" + device_.name + "' has no fp16 support";
  if (!problem.empty() && by_pattern) {
    // A pattern pins the layers that can take its precision; the others keep their choice.
    VKG_VERBOSE(node.describe() << " matches a --layer-precisions pattern for " << precision_name(p) << " but "
                                << problem << "; not pinned");
    return out;
  }
  if (!problem.empty()) {
    VKG_CHECK(config_.constraints != PrecisionConstraints::Obey,
              node.describe() << " is pinned to " << precision_name(p) << " (obey) but " << problem);
    VKG_WARNING(node.describe() << " is pinned to " << precision_name(p) << " but " << problem << "; ignoring the pin");
    return out;
  }
  // Obey: only the pinned precision. Prefer: the pinned one; add_layer falls back when no tactic has it.
  return {p};
}

std::vector<Candidate> Builder::candidates(const Node& node, const std::vector<Precision>& precisions,
                                           std::map<Precision, std::vector<LayerTensor>>& inputs,
                                           std::map<Precision, std::vector<LayerTensor>>& outputs,
                                           std::vector<std::string>& declined, bool ignore_filters,
                                           const std::string& only_tactic) {
  std::vector<Candidate> out;
  const std::optional<FusedActivation> activation = fused_activation(node);
  // The heuristic order on this device (Tactic::priority_on): what optimization levels cut to.
  std::vector<const Tactic*> tactics = registry_.for_op(node.op_type);
  std::stable_sort(tactics.begin(), tactics.end(),
                   [&](const Tactic* a, const Tactic* b) { return a->priority_on(device_) < b->priority_on(device_); });
  for (Precision p : precisions) {
    LayerContext ctx{node, graph_.opset, p, Arith::F32, inputs[p], outputs[p], device_};
    for (const Tactic* t : tactics) {
      if (t->precision() != p) continue;
      if (!only_tactic.empty() && t->name != only_tactic) continue;
      if (!ignore_filters && !tactic_allowed(config_, t->name)) continue;
      ctx.arith = t->arith;
      std::string why;
      std::optional<LayerPlan> plan = t->plan(ctx, why);
      if (plan && activation && !apply_activation(*activation, *plan, why)) plan.reset();
      if (!plan) {
        declined.push_back(t->name + ": " + (why.empty() ? "cannot serve this layer" : why));
        continue;
      }
      out.push_back(Candidate{t, p, std::move(*plan), &inputs[p]});
    }
  }
  return out;
}

double Builder::reformat_time(StorageType from, StorageType to, uint64_t elements) {
  const auto key = std::make_tuple(from, to, elements);
  auto it = reformat_ns_.find(key);
  if (it != reformat_ns_.end()) return it->second;
  // Timing-cache entries like a layer's: keyed by the conversion and its size.
  const std::string tactic = std::string("reformat.") + storage_type_name(from) + "_to_" + storage_type_name(to);
  const std::string signature = tactic + ":" + std::to_string(elements);
  if (config_.timing_cache) {
    if (const std::optional<TimingEntry> hit = config_.timing_cache->lookup(identity_, signature, tactic))
      return reformat_ns_[key] = hit->median_ns;
  }
  double ns = 0;
  try {
    const LayerPlan plan = reformat_plan(from, to, elements, device_, std::nullopt);
    const std::vector<double> samples =
        timer_->time(plan, {{from, elements}}, {{to, elements}}, config_.warmup_runs, 5);
    ns = median(samples);
    if (config_.timing_cache) {
      config_.timing_cache->record(TimingEntry{identity_, signature,
                                               "Reformat of " + std::to_string(elements) + " elements", tactic,
                                               Precision::FP32, ns, uint64_t(samples.size())});
    }
  } catch (const Error& e) {
    VKG_VERBOSE("timing a reformat of " << elements << " elements failed: " << e.what());
  }
  return reformat_ns_[key] = ns;
}

// The measured cost of the reformats a candidate needs before it runs: its
// float inputs that exist only in the other storage so far (TensorRT times
// reformats too, and picks formats for the whole network, not each layer alone).
double Builder::reformats_before(const Candidate& c) {
  if (timer_ == nullptr) return 0;
  double total = 0;
  std::set<std::string> seen;
  for (const LayerTensor& t : *c.inputs) {
    if (!t.present() || t.is_constant() || t.storage == StorageType::I32) continue;
    const std::string name = resolve(t.name);
    if (!seen.insert(name).second || tensors_.count({name, t.storage})) continue;
    auto produced = produced_storage_.find(name);
    if (produced == produced_storage_.end() || produced->second == t.storage) continue;
    total += reformat_time(produced->second, t.storage, uint64_t(t.size()));
  }
  return total;
}

void Builder::progress(size_t index, size_t total, const Node& node) {
  if (!config_.progress) return;
  std::cerr << "\r\033[K[builder] layer " << index + 1 << "/" << total << ": " << node.name << " (" << node.op_type
            << ")" << std::flush;
  progress_line_ = true;
}

void Builder::validate(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                       std::map<Precision, std::vector<LayerTensor>>& outputs, size_t quota,
                       std::vector<CandidateTiming>& rejected, std::map<std::string, double>& errors) {
  const TensorMap& values = *config_.validation_values;
  auto known = [&](const LayerTensor& t) { return !t.present() || t.is_constant() || values.count(t.name) > 0; };
  for (const Candidate& c : cands) {
    if (!std::all_of(c.inputs->begin(), c.inputs->end(), known) ||
        !std::all_of(outputs[c.precision].begin(), outputs[c.precision].end(), known)) {
      VKG_VERBOSE("Layer '" << node.name << "': not validated (the reference run did not compute its tensors)");
      return;
    }
  }
  VKG_CHECK(timer_ != nullptr,
            "--validate-tactics needs a device that can run plans (timestamps on its compute queue)");
  auto matches = [](const std::vector<std::string>& globs, const std::string& text) {
    return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, text); });
  };
  const bool faulty_layer =
      matches(config_.faulty_layers, node.name) ||
      std::any_of(held.begin(), held.end(), [&](const std::string& n) { return matches(config_.faulty_layers, n); });
  ++result_.stats.layers_validated;
  std::vector<Candidate> kept;
  std::map<Precision, size_t> passed;
  for (Candidate& c : cands) {
    if (passed[c.precision] >= quota) {
      kept.push_back(std::move(c));
      continue;
    }
    std::vector<Tensor> ins;
    std::vector<PlanTimer::Buffer> outs;
    for (const LayerTensor& t : *c.inputs) {
      ins.push_back(t.present() && !t.is_constant()
                        ? to_storage(values.at(t.name), t.storage, "input '" + t.name + "' of " + node.describe())
                        : Tensor{});
    }
    for (const LayerTensor& t : outputs[c.precision]) outs.push_back({t.storage, t.present() ? uint64_t(t.size()) : 0});
    const bool fault = faulty_layer || matches(config_.faulty_tactics, c.tactic->name);
    double error = 0;  // the worst output's error (the first over its tolerance, if any)
    double tolerance = validation_tolerance(c.precision, DType::Float32);
    std::string worst;
    bool over = false;
    std::optional<std::string> failed;
    try {
      const std::vector<Tensor> got = timer_->run(c.plan, ins, outs, fault);
      for (size_t i = 0; i < got.size() && i < outputs[c.precision].size() && !over; ++i) {
        const LayerTensor& t = outputs[c.precision][i];
        if (!t.present()) continue;
        const double e = validation_error(from_storage(got[i].reshaped(t.shape), t.dtype), values.at(t.name));
        const double limit = validation_tolerance(c.precision, t.dtype);
        over = e > limit;
        if (over || e >= error) {
          error = e;
          tolerance = limit;
          worst = t.name;
        }
      }
    } catch (const Error& e) {
      failed = e.what();
    }
    ++result_.stats.candidates_validated;
    if (!failed) errors[c.tactic->name] = error;
    if (!failed && !over) {
      ++passed[c.precision];
      kept.push_back(std::move(c));
      continue;
    }
    std::ostringstream why;
    if (failed)
      why << "validation run failed: " << *failed;
    else
      why << "rejected by validation: output '" << worst << "' error " << format_error(error) << " > "
          << format_error(tolerance) << " (" << precision_name(c.precision) << ")";
    VKG_WARNING("Layer '" << node.name << "': tactic " << c.tactic->name << " " << why.str());
    CandidateTiming r;
    r.tactic = c.tactic->name;
    r.precision = c.precision;
    r.error = why.str();
    r.rejected = !failed;
    if (!failed) r.validation_error = error;
    rejected.push_back(std::move(r));
    ++result_.stats.candidates_rejected;
  }
  cands = std::move(kept);
}

void Builder::add_layer(const Node& node, const std::vector<std::string>& held, size_t index, size_t total) {
  progress(index, total, node);
  // Inputs and outputs as the tactics see them, per precision.
  std::vector<ValueInfo> in_infos, out_infos;
  bool float_layer = false;
  for (const std::string& name : node.inputs) {
    in_infos.push_back(name.empty() ? ValueInfo{} : info_of(name, node));
    if (!name.empty() && is_float_dtype(*in_infos.back().dtype)) float_layer = true;
  }
  for (const std::string& name : node.outputs) {
    out_infos.push_back(name.empty() ? ValueInfo{} : info_of(name, node));
    if (!name.empty() && is_float_dtype(*out_infos.back().dtype)) float_layer = true;
  }
  const std::vector<Precision> precisions = precisions_for(node, held, float_layer);
  std::map<Precision, std::vector<LayerTensor>> inputs, outputs;
  for (Precision p : {Precision::FP32, Precision::FP16}) {
    auto make = [&](const std::string& name, const ValueInfo& vi) {
      LayerTensor t;
      if (name.empty()) return t;
      t.name = name;
      t.dtype = *vi.dtype;
      t.shape = vi.concrete_shape();
      const std::optional<StorageType> s = storage_for(t.dtype, p);
      VKG_CHECK(s.has_value(), node.describe() << ": tensor '" << name << "' is " << dtype_name(t.dtype)
                                               << ", which the Vulkan backend does not support");
      t.storage = *s;
      t.constant = constant(name);
      return t;
    };
    for (size_t i = 0; i < node.inputs.size(); ++i) inputs[p].push_back(make(node.inputs[i], in_infos[i]));
    for (size_t i = 0; i < node.outputs.size(); ++i) outputs[p].push_back(make(node.outputs[i], out_infos[i]));
  }

  const TacticChoice* replayed = config_.replay ? config_.replay->find(node.name, held, node.op_type) : nullptr;
  std::vector<std::string> declined;
  std::vector<Candidate> cands;
  TacticChoice choice;
  choice.name = node.name;
  choice.nodes = held;
  choice.op = node.op_type;
  size_t chosen = 0;

  if (replayed != nullptr) {
    const Tactic* t = registry_.find(replayed->tactic);
    VKG_CHECK(t != nullptr, "tactic replay: layer '" << node.name << "' names tactic '" << replayed->tactic
                                                     << "', which this vkgraphy does not have");
    VKG_CHECK(std::find(t->ops.begin(), t->ops.end(), node.op_type) != t->ops.end(),
              "tactic replay: tactic '" << replayed->tactic << "' cannot serve layer '" << node.name << "': it runs "
                                        << t->ops.front() << ", not " << node.op_type);
    VKG_CHECK(t->precision() == replayed->precision, "tactic replay: layer '"
                                                         << node.name << "' asks for tactic '" << t->name << "' in "
                                                         << precision_name(replayed->precision)
                                                         << ", but that tactic is " << precision_name(t->precision()));
    VKG_CHECK(replayed->precision == Precision::FP32 || (float_layer && device_.fp16()),
              "tactic replay: layer '" << node.name << "' asks for fp16, which "
                                       << (float_layer ? "device '" + device_.name + "' does not support"
                                                       : std::string("a layer without float tensors cannot take")));
    cands = candidates(node, {replayed->precision}, inputs, outputs, declined, true, t->name);
    VKG_CHECK(!cands.empty(), "tactic replay: tactic '" << t->name << "' cannot serve layer '" << node.name
                                                        << "': " << (declined.empty() ? "" : declined.front()));
    choice.candidates = replayed->candidates;
  } else {
    if (config_.replay != nullptr) {
      VKG_VERBOSE("tactic replay does not name layer '" << node.name << "'; choosing its tactic by timing");
      unreplayed_.push_back(node.name);
    }
    cands = candidates(node, precisions, inputs, outputs, declined, false, "");
    bool by_pattern = false;
    const std::optional<Precision> pin = pin_for(held, &by_pattern);
    if (cands.empty() && !pin && moves_data_only(node.op_type) && config_.fp16 && device_.fp16() && float_layer) {
      // No allowed tactic moves the data in its input's precision: let the other compete.
      cands = candidates(node, {Precision::FP16, Precision::FP32}, inputs, outputs, declined, false, "");
    }
    if (cands.empty() && !pin && fp16_everywhere_ && float_layer) {
      VKG_VERBOSE(node.describe() << ": no fp16 tactic serves it; fp32");
      cands = candidates(node, {Precision::FP32}, inputs, outputs, declined, false, "");
    }
    if (cands.empty() && pin && (config_.constraints == PrecisionConstraints::Prefer || by_pattern)) {
      if (by_pattern)
        VKG_VERBOSE(node.describe() << ": no tactic in the precision a --layer-precisions pattern gives; not pinned");
      else
        VKG_WARNING(node.describe() << ": no tactic in the preferred precision; trying the others");
      std::vector<Precision> all = {Precision::FP32};
      if (config_.fp16 && device_.fp16() && float_layer) all.insert(all.begin(), Precision::FP16);
      cands = candidates(node, all, inputs, outputs, declined, false, "");
    }
    keep_arith(cands, arith_for(held));
    // Only where candidates are timed: level 0 and random choices keep every candidate.
    if (config_.prune_for_device && device_.type == DeviceType::Cpu && config_.optimization_level > 0 &&
        !config_.random_seed)
      result_.stats.candidates_pruned += prune_for_cpu(cands);
    if (cands.empty()) {
      std::ostringstream msg;
      msg << "no tactic can serve " << node.describe();
      if (pin && config_.constraints == PrecisionConstraints::Obey) msg << " in " << precision_name(*pin) << " (obey)";
      if (!config_.tactics_allow.empty() || !config_.tactics_deny.empty()) msg << " with the allowed tactics";
      for (const std::string& d : declined) msg << "\n  " << d;
      VKG_THROW(msg.str());
    }
  }
  std::vector<CandidateTiming> rejected;
  std::map<std::string, double> validation_errors;
  if (replayed == nullptr && config_.validation_values != nullptr) {
    // As many passing candidates per precision as the selection below can use:
    // every one for a random choice, the first for level 0, the level's budget otherwise.
    const size_t quota = config_.random_seed               ? SIZE_MAX
                         : config_.optimization_level == 0 ? 1
                                                           : candidates_for_level(config_.optimization_level);
    validate(node, held, cands, outputs, quota, rejected, validation_errors);
    if (cands.empty()) {
      std::ostringstream msg;
      msg << "--validate-tactics: every candidate tactic of " << node.describe() << " was rejected";
      for (const CandidateTiming& r : rejected) msg << "\n  " << r.tactic << ": " << *r.error;
      VKG_THROW(msg.str());
    }
  }

  // Signatures per precision: timing is shared between layers with equal signatures.
  auto signature_of = [&](Precision p) { return make_layer_signature(node, in_infos, out_infos, p); };
  if (config_.timing_cache) {
    for (const CandidateTiming& r : rejected) {
      if (!r.rejected) continue;
      const LayerSignature sig = signature_of(r.precision);
      TimingEntry entry{identity_, sig.key(), sig.canonical_text(), r.tactic, r.precision};
      entry.validation_error = r.validation_error;
      entry.rejected = true;
      config_.timing_cache->record(entry);
    }
  }
  auto validation_error_of = [&](const std::string& tactic) -> std::optional<double> {
    auto it = validation_errors.find(tactic);
    return it == validation_errors.end() ? std::nullopt : std::optional<double>(it->second);
  };

  const size_t level_limit = candidates_for_level(config_.optimization_level);
  if (replayed != nullptr) {
    chosen = 0;
  } else if (config_.random_seed.has_value()) {
    chosen = std::uniform_int_distribution<size_t>(0, cands.size() - 1)(rng_);
  } else if (config_.optimization_level == 0 || cands.size() == 1) {
    chosen = 0;
  } else {
    // The level's budget of candidates applies per precision, so that with
    // --fp16 the fp32 tactics compete too (candidates come precision by precision).
    std::map<Precision, size_t> taken;
    std::vector<Candidate> budgeted;
    for (Candidate& c : cands)
      if (taken[c.precision]++ < level_limit) budgeted.push_back(std::move(c));
    cands = std::move(budgeted);
    const size_t n = cands.size();
    const int samples =
        config_.timing_samples > 0 ? config_.timing_samples : samples_for_level(config_.optimization_level);
    bool timed_here = false, reused_here = false, cached_here = false;
    std::vector<CandidateTiming> timings(n);
    std::vector<size_t> to_time;       // candidates neither reused nor in the timing cache
    std::vector<bool> measured(n);     // the same, by candidate
    std::vector<double> reformats(n);  // each candidate's reformats_before
    for (size_t i = 0; i < n; ++i) {
      const Candidate& c = cands[i];
      const std::string key = signature_of(c.precision).key();
      CandidateTiming& timing = timings[i];
      timing.tactic = c.tactic->name;
      timing.precision = c.precision;
      auto reuse = timed_.find({key, c.tactic->name});
      if (reuse != timed_.end()) {
        timing = reuse->second;
        ++result_.stats.signature_reuses;
        reused_here = true;
      } else if (std::optional<TimingEntry> hit = config_.timing_cache
                                                      ? config_.timing_cache->lookup(identity_, key, c.tactic->name)
                                                      : std::nullopt) {
        timing.median_ns = hit->median_ns;
        ++result_.stats.cache_hits;
        cached_here = true;
      } else {
        if (config_.timing_cache) ++result_.stats.cache_misses;
        VKG_CHECK(!(config_.timing_cache && config_.error_on_timing_cache_miss),
                  "timing cache miss for layer '" << node.name << "', tactic '" << c.tactic->name
                                                  << "' (--error-on-timing-cache-miss)");
        VKG_CHECK(timer_ != nullptr, "the builder has no device timer");
        to_time.push_back(i);
        measured[i] = true;
      }
      reformats[i] = reformats_before(c);
    }
    // The samples of the candidates are taken in up to three passes over them, in turns and
    // in alternating order, so that a burst of the device's (or a virtual machine's) noise
    // lands on a minority of one candidate's samples instead of on all of them: one such
    // burst made a build pick a tactic 1.5x slower than the fastest (PP-OCRv4 det on lavapipe).
    // A candidate whose fastest sample costs more than twice the best median so far (reformats
    // included) cannot win and is not timed again, but only on the evidence of two passes: after
    // the first, whose samples are taken back to back and one burst can cover, it takes four times
    // (a det build kept a direct convolution 1.9x slower than the Winograd tactic that the next
    // build chose; a burst over that tactic's first samples is the likely cause).
    // Each candidate's inputs and outputs as the timer takes them.
    std::vector<std::vector<PlanTimer::Buffer>> ins(n), outs(n);
    for (size_t i : to_time) {
      for (const LayerTensor& t : *cands[i].inputs)
        ins[i].push_back({t.storage, t.present() && !t.is_constant() ? uint64_t(t.size()) : 0});
      for (const LayerTensor& t : outputs[cands[i].precision])
        outs[i].push_back({t.storage, t.present() ? uint64_t(t.size()) : 0});
    }
    if (!to_time.empty()) {
      std::vector<std::unique_ptr<FixedEpilogueConstants>> fixed;  // as timed: the pipelines timing uses
      std::vector<const LayerPlan*> batch;
      for (size_t i : to_time) {
        fixed.push_back(std::make_unique<FixedEpilogueConstants>(cands[i].plan));
        batch.push_back(&cands[i].plan);
      }
      timer_->compile(batch);
    }
    const int passes = to_time.size() > 1 ? std::min(samples, 3) : 1;
    for (int pass = 0; pass < passes; ++pass) {
      const int share = samples / passes + (pass < samples % passes ? 1 : 0);
      double best_so_far = INFINITY;
      if (pass > 0) {
        for (size_t i : to_time)
          if (!timings[i].error) best_so_far = std::min(best_so_far, median(timings[i].samples_ns) + reformats[i]);
      }
      for (size_t j = 0; j < to_time.size(); ++j) {
        const size_t i = to_time[pass % 2 == 0 ? j : to_time.size() - 1 - j];
        Candidate& c = cands[i];
        CandidateTiming& timing = timings[i];
        if (timing.error) continue;
        const double prune_factor = pass == 1 ? 4 : 2;
        if (pass > 0 && *std::min_element(timing.samples_ns.begin(), timing.samples_ns.end()) + reformats[i] >
                            prune_factor * best_so_far)
          continue;
        try {
          const FixedEpilogueConstants fixed(c.plan);
          for (double ns : timer_->time(c.plan, ins[i], outs[i], pass == 0 ? config_.warmup_runs : 1, share))
            timing.samples_ns.push_back(ns);
        } catch (const Error& e) {
          timing.error = e.what();
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      Candidate& c = cands[i];
      const LayerSignature sig = signature_of(c.precision);
      const std::string key = sig.key();
      CandidateTiming timing = std::move(timings[i]);
      if (measured[i]) {
        if (!timing.error) {
          timing.median_ns = median(timing.samples_ns);
          // A deterministic build records what a later one reads back from the timing cache: the median alone.
          if (config_.deterministic) timing.samples_ns.clear();
        }
        ++result_.stats.candidates_timed;
        timed_here = true;
        if (config_.timing_cache && !timing.error) {
          TimingEntry entry{identity_,
                            key,
                            sig.canonical_text(),
                            c.tactic->name,
                            c.precision,
                            timing.median_ns,
                            uint64_t(timing.samples_ns.size())};
          entry.validation_error = validation_error_of(c.tactic->name);
          config_.timing_cache->record(entry);
        }
      }
      timed_[{key, c.tactic->name}] = timing;
      timing.validation_error = validation_error_of(c.tactic->name);
      timing.reformat_ns = reformats[i];
      choice.candidates.push_back(timing);
    }
    if (timed_here)
      ++result_.stats.layers_timed;
    else if (reused_here)
      ++result_.stats.layers_reused;
    else if (cached_here)
      ++result_.stats.layers_cached;
    // The fastest by median plus the reformats it needs; with --deterministic,
    // the first in heuristic order among near-ties. fp16 rounds, so it must be
    // faster beyond the near-tie margin: when an fp32 candidate is within the
    // margin of the fastest, only fp32 candidates are eligible (a measured
    // difference inside the timing noise buys no speed).
    double best = INFINITY;
    for (const CandidateTiming& t : choice.candidates)
      if (!t.error) best = std::min(best, t.cost_ns());
    VKG_CHECK(std::isfinite(best), "every candidate tactic of " << node.describe() << " failed: "
                                                                << choice.candidates.front().error.value_or(""));
    const double near = best * (1 + config_.tie_margin);
    const bool fp32_near = std::any_of(
        choice.candidates.begin(), choice.candidates.end(),
        [&](const CandidateTiming& t) { return !t.error && t.precision == Precision::FP32 && t.cost_ns() <= near; });
    auto eligible = [&](const CandidateTiming& t) {
      return !t.error && (!fp32_near || t.precision == Precision::FP32);
    };
    double best_eligible = INFINITY;
    for (const CandidateTiming& t : choice.candidates)
      if (eligible(t)) best_eligible = std::min(best_eligible, t.cost_ns());
    for (size_t i = 0; i < choice.candidates.size(); ++i) {
      const CandidateTiming& t = choice.candidates[i];
      if (!eligible(t)) continue;
      if (config_.deterministic ? t.cost_ns() <= near : t.cost_ns() == best_eligible) {
        chosen = i;
        break;
      }
    }
  }

  for (const Candidate& v : cands) {  // validated candidates that were not timed
    const std::optional<double> error = validation_error_of(v.tactic->name);
    if (!error || std::any_of(choice.candidates.begin(), choice.candidates.end(),
                              [&](const CandidateTiming& t) { return t.tactic == v.tactic->name; }))
      continue;
    CandidateTiming t;
    t.tactic = v.tactic->name;
    t.precision = v.precision;
    t.validation_error = error;
    t.untimed = true;
    choice.candidates.push_back(std::move(t));
  }
  for (CandidateTiming& r : rejected) choice.candidates.push_back(std::move(r));

  Candidate& c = cands[chosen];
  const LayerSignature sig = signature_of(c.precision);
  choice.signature = sig.key();
  choice.tactic = c.tactic->name;
  choice.precision = c.precision;

  if (Logger::get().enabled(Severity::Verbose, __FILE__)) {
    std::ostringstream table;
    table << "Layer '" << node.name << "' (" << node.op_type << "): " << c.tactic->name;
    std::vector<const CandidateTiming*> sorted;
    for (const CandidateTiming& t : choice.candidates) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](const CandidateTiming* a, const CandidateTiming* b) {
      return !a->error && (b->error || a->cost_ns() < b->cost_ns());
    });
    for (const CandidateTiming* t : sorted) {
      table << "\n    " << std::left << std::setw(36) << t->tactic << " "
            << (t->error ? "failed: " + *t->error : format_ns(t->median_ns))
            << (!t->error && t->reformat_ns > 0 ? " + " + format_ns(t->reformat_ns) + " reformat" : "")
            << (!t->error && t->validation_error ? " (validation error " + format_error(*t->validation_error) + ")"
                                                 : "")
            << (t->tactic == c.tactic->name ? "  <- chosen" : "");
    }
    if (choice.candidates.empty()) table << " (not timed)";
    for (const std::string& d : declined) table << "\n    " << d;
    VKG_VERBOSE(table.str());
  }

  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = held;
  layer.op = node.op_type;
  layer.tactic = c.tactic->name;
  layer.precision = c.precision;
  layer.signature = sig.key();
  for (const LayerTensor& t : *c.inputs) {
    layer.inputs.push_back(t.present() && !t.is_constant() ? tensor_in(t.name, t.storage) : -1);
  }
  for (const LayerTensor& t : outputs[c.precision]) {
    layer.outputs.push_back(t.present() ? add_tensor(t.name, t.dtype, t.shape, t.storage) : -1);
  }
  layer.plan = std::move(c.plan);
  result_.engine.layers.push_back(std::move(layer));
  result_.replay.layers.push_back(std::move(choice));
  ++result_.stats.layers;
}

std::vector<const Node*> Builder::named_nodes(const Graph& graph, const std::string& prefix) {
  std::vector<const Node*> out;
  const std::vector<std::string> names = layer_names(graph, prefix, names_);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node n = graph.nodes[i];
    n.name = names[i];
    nodes_.push_back(std::move(n));
    out.push_back(&nodes_.back());
  }
  return out;
}

void Builder::add_block(const std::vector<const Node*>& nodes, std::vector<std::string> keep) {
  std::vector<const Node*> remaining;
  for (const Node* node : nodes) {
    if (try_fold(*node)) {
      ++result_.stats.folded;
      continue;
    }
    remaining.push_back(node);
  }
  add_layers(remaining, std::move(keep));
}

void Builder::add_layers(const std::vector<const Node*>& remaining, std::vector<std::string> keep) {
  // An If's branches read tensors of this graph by name: keep those too.
  for (const Node* n : remaining)
    for (const std::string& read : Graph::outer_scope_reads(*n)) keep.push_back(read);
  GraphOptimizerOptions options;
  options.rewrites = rewrite_filter();
  options.opset = graph_.opset;
  options.keep_tensors.insert(keep.begin(), keep.end());
  options.shape_of = [&](const std::string& name) -> std::optional<Shape> {
    if (const Tensor* c = constant(name)) return c->shape();
    const ValueInfo* vi = find_info(name);
    if (vi == nullptr || !vi->static_shape()) return std::nullopt;
    return vi->concrete_shape();
  };
  options.is_float = [&](const std::string& name) {
    if (const Tensor* c = constant(name)) return is_float_dtype(c->dtype());
    const ValueInfo* vi = find_info(name);
    return vi != nullptr && vi->dtype && is_float_dtype(*vi->dtype);
  };
  OptimizedGraph optimized = optimize_graph(
      remaining, [&](const std::string& name) { return constant(name); }, options);
  for (auto& [name, target] : optimized.aliases) aliases_[name] = target;
  for (auto& [name, value] : optimized.constants) folded_[name] = std::move(value);
  result_.rewrites.insert(result_.rewrites.end(), optimized.rewrites.begin(), optimized.rewrites.end());
  result_.stats.removed += optimized.removed.size();
  for (const std::string& removed : optimized.removed) {
    VKG_VERBOSE("Removed no-op node '" << removed << "': its output shares its input's buffer");
    if (config_.layer_precisions.count(removed))
      VKG_WARNING("--layer-precisions pins node '" << removed
                                                   << "', which was removed as a no-op (it computes nothing)");
  }
  for (size_t i = 0; i < optimized.layers.size(); ++i) {
    const OptimizedLayer& l = optimized.layers[i];
    if (l.nodes.size() > 1) {
      result_.stats.fused += l.nodes.size() - 1;
      VKG_VERBOSE("Fused " << l.nodes.size() << " nodes into layer '" << l.node.name << "' (" << l.node.op_type << ")");
    }
    if (l.node.op_type == "If" && l.node.domain.empty())
      add_if(l.node, i, optimized.layers.size());
    else if (l.node.op_type == "Loop" && l.node.domain.empty())
      add_loop(l.node, i, optimized.layers.size());
    else
      add_layer(l.node, l.nodes, i, optimized.layers.size());
  }
}

// An If whose condition is computed on the device: the layers of both branches,
// then a branching layer that copies the results of the branch taken into its
// outputs (EngineLayer::branch_layers). A branch that cannot be built at the
// engine's shapes (its ops fail there, or its results' shapes differ from the
// other branch's) becomes an error the engine raises when the condition selects
// it, as ONNX Runtime fails only when it runs such a branch.
void Builder::add_if(const Node& node, size_t index, size_t total) {
  progress(index, total, node);
  Engine& engine = result_.engine;
  const std::string& cond_name = node.inputs.at(0);
  VKG_CHECK(constant(cond_name) == nullptr, node.describe() << ": its condition is a constant, but the branch was not "
                                                               "inlined at import");
  const ValueInfo cond = info_of(cond_name, node);
  VKG_CHECK(num_elements(cond.concrete_shape()) == 1, node.describe()
                                                          << ": the condition '" << cond_name << "' has shape "
                                                          << cond.describe() << "; it must hold one element");
  for (const std::string& out : node.outputs) VKG_CHECK(!out.empty(), node.describe() << ": an output is omitted");
  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = {node.name};
  layer.op = node.op_type;
  layer.tactic = "control.if";
  layer.inputs = {tensor_in(cond_name, StorageType::I32)};

  // The outputs take the first buildable branch's results' types and shapes (shape
  // inference leaves dimensions open where the branches could differ).
  const size_t k = node.outputs.size();
  std::vector<EngineTensor> outs;
  const char* branch_names[2] = {"then", "else"};
  const Graph* branches[2] = {&node.attr_graph("then_branch"), &node.attr_graph("else_branch")};
  std::string first_error;
  for (size_t b = 0; b < 2; ++b) {
    const Graph& graph = *branches[b];
    VKG_CHECK(graph.outputs.size() == k, node.describe() << ": its " << branch_names[b] << " branch has "
                                                         << graph.outputs.size() << " outputs, the node " << k);
    // Tensors made in one branch (including reformats of outer tensors) are not
    // there in the other branch, nor after the If.
    const auto tensors = tensors_;
    const auto produced = produced_storage_;
    const size_t first_layer = engine.layers.size(), first_tensor = engine.tensors.size();
    const size_t first_choice = result_.replay.layers.size(), first_dispatch = layer.plan.dispatches.size();
    const size_t first_out = outs.size();
    scopes_.push_back(&graph);
    try {
      std::vector<std::string> results;
      for (const ValueInfo& out : graph.outputs) results.push_back(out.name);
      add_block(named_nodes(graph, node.name + "/" + branch_names[b] + "/"), results);
      for (size_t j = 0; j < k; ++j) {
        const std::string& r = results[j];
        const std::string name = resolve(r);
        if (!produced_storage_.count(name)) {
          VKG_CHECK(constant(r) != nullptr, "it never produces '" << r << "'");
          add_constant_output(r);
        }
        const EngineTensor made = engine.tensors[size_t(tensors_.at({name, produced_storage_.at(name)}))];
        if (outs.size() == j) {
          const std::optional<StorageType> storage = storage_for(made.dtype, Precision::FP32);
          VKG_CHECK(storage.has_value(), "its result '" << r << "' is " << dtype_name(made.dtype)
                                                        << ", which the Vulkan backend does not support");
          VKG_CHECK(num_elements(made.shape) > 0, "its result '" << r << "' is empty");
          const ValueInfo* declared = find_info(node.outputs[j]);
          VKG_CHECK(declared == nullptr || !declared->static_shape() || declared->concrete_shape() == made.shape,
                    "it gives '" << r << "' the shape " << shape_to_string(made.shape) << ", but output '"
                                 << node.outputs[j] << "' is " << declared->describe());
          EngineTensor out = made;
          out.name = node.outputs[j];
          out.storage = *storage;
          outs.push_back(out);
        }
        VKG_CHECK(made.dtype == outs[j].dtype && made.shape == outs[j].shape,
                  "it gives output '" << node.outputs[j] << "' the type " << dtype_name(made.dtype)
                                      << shape_to_string(made.shape) << ", the other branch "
                                      << dtype_name(outs[j].dtype) << shape_to_string(outs[j].shape)
                                      << " (a Vulkan engine needs one static shape)");
        layer.inputs.push_back(tensor_in(r, outs[j].storage));
        add_copy(layer, outs[j].storage, uint64_t(num_elements(made.shape)),
                 BindingRef::input(uint32_t(layer.inputs.size() - 1)), uint32_t(j));
      }
      layer.branch_errors.emplace_back();
    } catch (const Error& e) {
      const std::string error = std::string("the ") + branch_names[b] + " branch of " + node.describe() +
                                " cannot run at the engine's shapes: " + e.what();
      VKG_WARNING(error << "; the engine fails if the condition selects it");
      if (first_error.empty()) first_error = error;
      engine.layers.resize(first_layer);
      engine.tensors.resize(first_tensor);
      result_.replay.layers.resize(first_choice);
      layer.plan.dispatches.resize(first_dispatch);
      outs.resize(first_out);
      layer.inputs.resize(1 + b * k);
      layer.inputs.resize(1 + (b + 1) * k, -1);
      layer.branch_errors.push_back(error);
    }
    scopes_.pop_back();
    layer.branch_layers.push_back(uint32_t(engine.layers.size() - first_layer));
    layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size() - first_dispatch));
    tensors_ = tensors;
    produced_storage_ = produced;
  }
  VKG_CHECK(outs.size() == k, first_error);
  if (layer.branch_errors[0].empty() && layer.branch_errors[1].empty()) layer.branch_errors.clear();
  for (const EngineTensor& out : outs) layer.outputs.push_back(add_tensor(out.name, out.dtype, out.shape, out.storage));
  VKG_VERBOSE(node.describe() << ": a condition computed on the device; branches of " << layer.branch_layers[0]
                              << " and " << layer.branch_layers[1]
                              << " layers, the executor runs the one the condition selects");
  engine.layers.push_back(std::move(layer));
  ++result_.stats.layers;
}

void Builder::add_copy(EngineLayer& layer, StorageType storage, uint64_t elements, BindingRef from, uint32_t out) {
  LayerPlan copy = reformat_plan(storage, storage, elements, device_, std::nullopt);
  for (Dispatch& d : copy.dispatches) {
    d.bindings = {from, BindingRef::output(out)};
    layer.plan.dispatches.push_back(std::move(d));
  }
}

namespace {

// True when a node of `graph` (or of a subgraph inside it) reads `name`.
bool reads(const Graph& graph, const std::string& name) {
  for (const Node& n : graph.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) return true;
    for (const Graph* sub : n.subgraphs())
      if (reads(*sub, name)) return true;
  }
  return std::any_of(graph.outputs.begin(), graph.outputs.end(), [&](const ValueInfo& o) { return o.name == name; });
}

}  // namespace

// A Loop whose condition or trip count is computed on the device (a constant trip
// count with a constant condition was unrolled at import): the layers of its body,
// then a loop layer (EngineLayer::is_loop) holding the loop state. The body reads
// the state through its inputs; the loop layer sets the state before the first
// iteration and copies the body's results into it after each.
void Builder::add_loop(const Node& node, size_t index, size_t total) {
  progress(index, total, node);
  Engine& engine = result_.engine;
  const Graph& body = node.attr_graph("body");
  VKG_CHECK(node.inputs.size() >= 2 && body.inputs.size() == node.inputs.size() &&
                body.outputs.size() + 1 >= body.inputs.size(),
            node.describe() << ": its body's inputs and outputs do not match the loop's");
  const size_t n = node.inputs.size() - 2;  // loop-carried values
  const size_t scans = body.outputs.size() + 1 - body.inputs.size();
  VKG_CHECK(scans == 0, node.describe() << ": its " << scans
                                        << " scan output(s) grow by one slice per iteration, and the iterations are "
                                           "counted at run time; a Vulkan engine needs static shapes (a constant trip "
                                           "count and condition unroll the loop)");
  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = {node.name};
  layer.op = node.op_type;
  layer.tactic = "control.loop";
  int32_t trip_count = -1, first_condition = -1;
  const std::string& m = node.inputs[0];
  const std::string& cond = node.inputs[1];
  if (!m.empty()) {
    if (const Tensor* c = constant(m)) {
      layer.loop_trip_count = std::max<int64_t>(c->to_int64s().at(0), 0);
    } else {
      VKG_CHECK(num_elements(info_of(m, node).concrete_shape()) == 1, node.describe()
                                                                          << ": its trip count is not one value");
      trip_count = tensor_in(m, StorageType::I32);
    }
  }
  if (!cond.empty()) {
    if (const Tensor* c = constant(cond)) {
      if (c->get_as_double(0) == 0) layer.loop_trip_count = 0;
    } else {
      VKG_CHECK(num_elements(info_of(cond, node).concrete_shape()) == 1, node.describe()
                                                                             << ": its condition is not one value");
      first_condition = tensor_in(cond, StorageType::I32);
    }
  }

  // The state: the loop-carried values (named as the Loop's outputs), then the iteration
  // count and the condition where the body reads them. Its initial values: an engine tensor or a weight.
  struct State {
    std::string name;
    DType dtype;
    Shape shape;
    StorageType storage;
    std::string body_input, body_result;
    int32_t initial = -1;
    std::optional<Tensor> initial_value;
  };
  std::vector<State> state;
  for (size_t k = 0; k < n; ++k) {
    const std::string& init = node.inputs[2 + k];
    VKG_CHECK(!init.empty(), node.describe() << ": loop-carried value " << k << " has no initial value");
    State st;
    const ValueInfo vi = info_of(init, node);
    st.dtype = *vi.dtype;
    st.shape = vi.concrete_shape();
    const std::optional<StorageType> storage = storage_for(st.dtype, Precision::FP32);
    VKG_CHECK(storage.has_value(), node.describe()
                                       << ": loop-carried value '" << init << "' is " << dtype_name(st.dtype)
                                       << ", which the Vulkan backend does not support");
    st.storage = *storage;
    st.name = k < node.outputs.size() && !node.outputs[k].empty() ? node.outputs[k]
                                                                  : node.name + "/state" + std::to_string(k);
    st.body_input = body.inputs[2 + k].name;
    st.body_result = body.outputs[1 + k].name;
    if (const Tensor* c = constant(init))
      st.initial_value = to_storage(*c, st.storage, "initial value '" + init + "'");
    else
      st.initial = tensor_in(init, st.storage);
    state.push_back(std::move(st));
  }
  // Nodes the builder adds to the body: the iteration count + 1.
  Graph& counters = synthetic_.emplace_back();
  std::vector<Node> added;
  const std::string& iter_name = body.inputs[0].name;
  if (!iter_name.empty() && reads(body, iter_name)) {
    State st{node.name + "/iteration",  DType::Int64, {}, StorageType::I32, iter_name, node.name + "/iteration+1", -1,
             Tensor::scalar<int32_t>(0)};
    folded_[node.name + "/one"] = Tensor::scalar<int64_t>(1);
    counters.value_info[st.body_result] = ValueInfo{st.body_result, DType::Int64, std::vector<Dim>{}};
    Node add;
    add.name = node.name + "/iteration+1";
    add.op_type = "Add";
    add.inputs = {iter_name, node.name + "/one"};
    add.outputs = {st.body_result};
    added.push_back(std::move(add));
    state.push_back(std::move(st));
  }
  const std::string& cond_in = body.inputs[1].name;
  if (!cond_in.empty() && reads(body, cond_in)) {
    State st{node.name + "/condition", DType::Bool, {},          StorageType::I32, cond_in,
             body.outputs[0].name,     -1,          std::nullopt};
    if (first_condition >= 0)
      st.initial = first_condition;
    else
      st.initial_value = Tensor::scalar<int32_t>(1);
    state.push_back(std::move(st));
  }

  std::vector<int32_t> state_ids;
  for (const State& st : state) {
    state_ids.push_back(add_tensor(st.name, st.dtype, st.shape, st.storage));
    aliases_[st.body_input] = st.name;
    // The body's inputs have the state's types and shapes (whatever the body declares).
    std::vector<Dim> dims;
    for (int64_t d : st.shape) dims.push_back(Dim{d, ""});
    counters.value_info[st.body_input] = ValueInfo{st.body_input, st.dtype, dims};
  }
  const auto tensors = tensors_;
  const auto produced = produced_storage_;
  const size_t first_layer = engine.layers.size();
  scopes_.push_back(&body);
  scopes_.push_back(&counters);
  std::vector<const Node*> nodes = named_nodes(body, node.name + "/body/");
  for (Node& a : added) {
    names_.insert(a.name);
    nodes_.push_back(std::move(a));
    nodes.push_back(&nodes_.back());
  }
  std::vector<std::string> keep;
  for (const ValueInfo& out : body.outputs) keep.push_back(out.name);
  for (const State& st : state) keep.push_back(st.body_result);
  add_block(nodes, keep);
  // The body's results in the state's storage forms (made now: reformats belong to the body).
  auto produce = [&](const std::string& r) {
    if (!produced_storage_.count(resolve(r))) {
      VKG_CHECK(constant(r) != nullptr, node.describe() << ": its body never produces '" << r << "'");
      add_constant_output(r);
    }
  };
  std::vector<int32_t> results;
  for (const State& st : state) {
    produce(st.body_result);
    const int32_t id = tensor_in(st.body_result, st.storage);
    const EngineTensor& t = engine.tensors[size_t(id)];
    VKG_CHECK(t.shape == st.shape,
              node.describe() << ": its body gives '" << st.body_result << "' the shape " << shape_to_string(t.shape)
                              << ", but the value it carries has " << shape_to_string(st.shape)
                              << " (a Vulkan engine needs loop-carried values of one static shape)");
    results.push_back(id);
  }
  produce(body.outputs[0].name);
  const int32_t body_condition = constant(body.outputs[0].name) && constant(body.outputs[0].name)->get_as_double(0) != 0
                                     ? -1
                                     : tensor_in(body.outputs[0].name, StorageType::I32);
  scopes_.pop_back();
  scopes_.pop_back();
  tensors_ = tensors;
  produced_storage_ = produced;
  layer.branch_layers = {uint32_t(engine.layers.size() - first_layer)};

  layer.inputs = {trip_count, first_condition};
  for (const State& st : state) layer.inputs.push_back(st.initial);
  layer.inputs.insert(layer.inputs.end(), results.begin(), results.end());
  layer.inputs.push_back(body_condition);
  // Outer tensors the body reads stay alive until the loop ends.
  for (const std::string& read : Graph::outer_scope_reads(node)) {
    const std::string name = resolve(read);
    auto p = produced_storage_.find(name);
    if (p != produced_storage_.end()) layer.inputs.push_back(tensors_.at({name, p->second}));
  }
  const size_t s = state.size();
  for (size_t j = 0; j < s; ++j) {
    const uint64_t elements = uint64_t(num_elements(state[j].shape));
    if (elements == 0) continue;
    BindingRef from = BindingRef::input(uint32_t(2 + j));
    if (state[j].initial_value) from = add_weight(layer.plan, *state[j].initial_value);
    add_copy(layer, state[j].storage, elements, from, uint32_t(j));
  }
  layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size()));
  for (size_t j = 0; j < s; ++j) {
    const uint64_t elements = uint64_t(num_elements(state[j].shape));
    if (elements > 0) add_copy(layer, state[j].storage, elements, BindingRef::input(uint32_t(2 + s + j)), uint32_t(j));
  }
  layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size() - layer.branch_dispatches[0]));
  VKG_CHECK(!layer.plan.dispatches.empty(), node.describe() << ": it carries no values");
  layer.outputs = state_ids;
  VKG_VERBOSE(node.describe() << ": "
                              << (layer.loop_trip_count >= 0 ? "a constant trip count and a condition"
                                                             : "a trip count or condition")
                              << " computed on the device; a body of " << layer.branch_layers[0]
                              << " layers run once per iteration, the condition read back after each");
  engine.layers.push_back(std::move(layer));
  ++result_.stats.layers;
}

BuildResult Builder::build() {
  if (config_.random_seed) rng_.seed(*config_.random_seed);
  VKG_CHECK(config_.optimization_level >= 0 && config_.optimization_level <= 5,
            "--builder-optimization-level must be 0..5, not " << config_.optimization_level);
  if (config_.fp16 && !device_.fp16())
    VKG_WARNING("--fp16: device '" << device_.name << "' lacks fp16 arithmetic or 16-bit storage; building in fp32");
  fp16_everywhere_ = config_.fp16 && device_.fp16() &&
                     (config_.fp16_policy == Fp16Policy::All ||
                      (config_.fp16_policy == Fp16Policy::Auto && device_.fp16_slower));
  if (fp16_everywhere_ && config_.fp16_policy == Fp16Policy::Auto) {
    // Once per process: the debug tools build many times.
    static std::atomic<bool> said{false};
    std::ostringstream msg;
    msg << "--fp16: fp16 arithmetic is slower than fp32 on device '" << device_.name
        << "', so every layer that can be fp16 is fp16 (--fp16-policy auto), with the numerics of an fp16 build on "
        << "a GPU; --fp16-policy fastest chooses by measured time instead";
    if (said.exchange(true))
      VKG_VERBOSE(msg.str());
    else
      VKG_INFO(msg.str());
  }
  if (!config_.tactics_allow.empty() || !config_.tactics_deny.empty()) {
    const std::vector<const Tactic*> all = registry_.all();
    for (const auto& [flag, globs] : {std::pair{"--tactics-allow", &config_.tactics_allow},
                                      std::pair{"--tactics-deny", &config_.tactics_deny}}) {
      for (const std::string& glob : *globs) {
        if (std::none_of(all.begin(), all.end(), [&](const Tactic* t) { return glob_match(glob, t->name); }))
          VKG_WARNING(flag << " '" << glob << "' matches no tactic, so it has no effect (tactic names look like "
                           << "gemm.block16x8.f32; `vkgraphy convert -v` lists each layer's candidates)");
      }
    }
  }
  if (!config_.layer_precisions.empty() && config_.constraints == PrecisionConstraints::None)
    VKG_WARNING("--layer-precisions are ignored with --precision-constraints none");
  const std::vector<std::string> unsupported = unsupported_vulkan_ops(graph_, registry_);
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    VKG_THROW("the Vulkan backend has no tactic for these ops: " << list);
  }
  // Every layer needs a unique name (replays, --layer-precisions): unnamed nodes
  // become "<Op>_<index in the graph>" (in an If branch, "<If>/then/<Op>_<index>").
  names_ = node_names_deep(graph_);
  names_.erase("");
  scopes_ = {&graph_};
  const std::vector<const Node*> nodes = named_nodes(graph_, "");
  for (const auto& [name, pin] : config_.layer_precisions) {
    if (!is_layer_pattern(name)) {
      VKG_CHECK(names_.count(name), "--layer-precisions names layer '" << name
                                << "', which the model does not have (or which import computed: Constant nodes and "
                                   "nodes of constants are folded)");
    } else if (std::none_of(names_.begin(), names_.end(),
                            [&](const std::string& n) { return layer_precision_matches(name, n); })) {
      VKG_WARNING("--layer-precisions pattern '" << name << "' matches no layer, so it has no effect");
    }
  }

  Engine& engine = result_.engine;
  engine.vkgraphy_version = VKGRAPHY_VERSION;
  engine.device = identity_;
  engine.model_name = graph_.name;
  result_.replay.device = identity_;

  for (const ValueInfo& in : graph_.inputs) {
    if (constant(in.name)) continue;
    Node input;
    input.op_type = "model input";
    input.name = in.name;
    const ValueInfo vi = info_of(in.name, input);
    const std::optional<StorageType> s = storage_for(*vi.dtype, Precision::FP32);
    VKG_CHECK(s.has_value(), "model input '" << in.name << "' is " << dtype_name(*vi.dtype)
                                             << ", which the Vulkan backend does not support");
    engine.inputs.push_back(add_tensor(in.name, *vi.dtype, vi.concrete_shape(), *s));
  }

  std::vector<const Node*> remaining;
  for (const Node* node : nodes) {
    if (try_fold(*node)) {
      ++result_.stats.folded;
      continue;
    }
    remaining.push_back(node);
  }

  // The tensors the user reads: never aliased or fused away.
  std::vector<std::string> outputs;
  for (const ValueInfo& out : graph_.outputs) outputs.push_back(out.name);
  if (config_.mark_all) {
    for (const Node* n : remaining)
      for (const std::string& o : n->outputs)
        if (!o.empty()) outputs.push_back(o);
  }
  for (const std::string& name : config_.mark_outputs) {
    const bool produced = std::any_of(remaining.begin(), remaining.end(), [&](const Node* n) {
      return std::find(n->outputs.begin(), n->outputs.end(), name) != n->outputs.end();
    });
    // Produced by a node left to run, folded to a constant, or a model input.
    VKG_CHECK(produced || constant(name) || produced_storage_.count(name),
              "cannot mark tensor '" << name << "' as an output: the model has no such tensor"
                                     << " (tensors inside an If branch are not always computed)");
    outputs.push_back(name);
  }
  add_layers(remaining, outputs);
  if (progress_line_) std::cerr << "\r\033[K" << std::flush;

  std::set<std::string> seen;
  for (const std::string& name : outputs) {
    if (!seen.insert(name).second) continue;
    if (!produced_storage_.count(name)) {
      VKG_CHECK(constant(name) != nullptr, "model output '" << name << "' is never produced");
      add_constant_output(name);
    }
    engine.outputs.push_back(tensors_.at({name, produced_storage_.at(name)}));
  }

  if (!unreplayed_.empty()) {
    const size_t named = config_.replay->layers.size();
    std::string list;
    for (size_t i = 0; i < unreplayed_.size() && i < 5; ++i) list += (i ? ", " : "") + unreplayed_[i];
    if (unreplayed_.size() > 5) list += ", ...";
    VKG_WARNING("The tactic replay does not name " << unreplayed_.size() << " layer(s) of this build, chosen by timing ("
                                                   << list << ")"
                                                   << (unreplayed_.size() * 2 > result_.stats.layers
                                                           ? "; most layers are missing: is the replay (" +
                                                                 std::to_string(named) +
                                                                 " layer(s)) from another model or other build "
                                                                 "options?"
                                                           : ""));
  }
  // The rewrites of the built engine; with fusion off (or them disabled) they leave it as it is.
  const RewriteFilter filter = rewrite_filter();
  std::vector<AppliedRewrite>& rewrites = result_.rewrites;
  const ReformatFusions fused = fuse_reformats(engine, filter, rewrites);
  result_.stats.inputs_converted_on_upload = fused.on_upload;
  result_.stats.reformats_fused = fused.into_layers;
  result_.stats.outputs_written_f32 = fused.outputs_f32;
  result_.stats.reformats -= fused.on_upload + fused.into_layers;
  result_.stats.concats_eliminated = eliminate_concats(engine, device_, filter, rewrites).size();
  result_.stats.copies_eliminated = eliminate_range_copies(engine, device_, filter, rewrites).size();
  if (Logger::get().enabled(Severity::Verbose, __FILE__)) {
    std::string list;
    for (const AppliedRewrite& r : rewrites) list += "\n    " + r.describe();
    VKG_VERBOSE("Applied " << rewrites.size() << " rewrite(s)" << (rewrites.empty() ? "" : ":") << list);
  }
  plan_memory(engine);
  for (const EngineLayer& l : engine.layers) {
    for (const Dispatch& d : l.plan.dispatches) {
      if (engine.spirv.count(d.shader)) continue;
      const auto words = builtin_shader(d.shader);
      engine.spirv[d.shader] = std::vector<uint32_t>(words.begin(), words.end());
    }
  }
  validate_engine(engine, "the built engine");
  return std::move(result_);
}

}  // namespace

BuildResult build_engine(const Graph& graph, const BuilderConfig& config, const DeviceProfile& device,
                         const DeviceIdentity& identity, PlanTimer* timer, const TacticRegistry& registry) {
  Builder builder(graph, config, device, identity, timer, registry);
  return builder.build();
}

}  // namespace vkg
