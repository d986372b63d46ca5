#include "runtime/engine/engine.h"

#include <algorithm>
#include <map>
#include <set>

#include "runtime/core/error.h"

namespace vkg {

int32_t Engine::find_tensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return int32_t(i);
  }
  return -1;
}

namespace {

// Follows tensor t's views to the tensor that holds their memory, adding their offsets to
// `offset`. Views never form a cycle (validate_engine); the bound guards a corrupt list.
int32_t follow_views(const std::vector<EngineTensor>& tensors, int32_t t, uint64_t& offset) {
  for (size_t hops = 0; hops <= tensors.size() && tensors.at(size_t(t)).view_of >= 0; ++hops) {
    offset += tensors[size_t(t)].offset;
    t = tensors[size_t(t)].view_of;
  }
  return t;
}

}  // namespace

int32_t Engine::memory_root(int32_t t) const {
  uint64_t offset = 0;
  return follow_views(tensors, t, offset);
}

uint64_t Engine::slot_offset(int32_t t) const {
  uint64_t offset = 0;
  follow_views(tensors, t, offset);
  return offset;
}

uint64_t Engine::activation_bytes() const {
  uint64_t total = 0;
  for (uint64_t s : slots) total += s;
  return total;
}

uint64_t Engine::weight_bytes() const {
  uint64_t total = 0;
  for (const EngineLayer& l : layers) {
    for (const Tensor& w : l.plan.weights) total += w.nbytes();
  }
  return total;
}

namespace {

struct SlotPool {
  std::vector<uint64_t>& sizes;
  std::vector<bool> busy;

  int32_t acquire(uint64_t bytes) {
    bytes = std::max<uint64_t>(bytes, 4);
    // Best fit among free slots: the smallest that holds `bytes`, else the largest (grown).
    int32_t best = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (busy[i]) continue;
      if (best < 0) {
        best = int32_t(i);
        continue;
      }
      const bool fits_i = sizes[i] >= bytes, fits_b = sizes[size_t(best)] >= bytes;
      if (fits_i != fits_b ? fits_i : (fits_i ? sizes[i] < sizes[size_t(best)] : sizes[i] > sizes[size_t(best)]))
        best = int32_t(i);
    }
    if (best < 0) return dedicated(bytes);
    sizes[size_t(best)] = std::max(sizes[size_t(best)], bytes);
    busy[size_t(best)] = true;
    return best;
  }
  int32_t dedicated(uint64_t bytes) {
    sizes.push_back(std::max<uint64_t>(bytes, 4));
    busy.push_back(true);
    return int32_t(sizes.size() - 1);
  }
  void release(int32_t slot) { busy[size_t(slot)] = false; }
};

}  // namespace

void plan_memory(Engine& engine) {
  engine.slots.clear();
  SlotPool pool{engine.slots, {}};
  const size_t n = engine.tensors.size();
  // A view lives in its root's memory: the root's slot is taken when the first of them is written
  // and kept until the last of them is read.
  std::vector<int32_t> root(n);
  for (size_t t = 0; t < n; ++t) root[t] = engine.memory_root(int32_t(t));
  auto slot_of = [&](int32_t t) -> int32_t& { return engine.tensors[size_t(root[size_t(t)])].slot; };
  std::set<int32_t> pinned;
  for (const auto* list : {&engine.inputs, &engine.outputs})
    for (int32_t t : *list) pinned.insert(root[size_t(t)]);

  std::vector<int64_t> last_use(n, -1);
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    for (const auto* list : {&engine.layers[li].inputs, &engine.layers[li].outputs})
      for (int32_t t : *list)
        if (t >= 0) last_use[size_t(root[size_t(t)])] = int64_t(li);
  }
  for (EngineTensor& t : engine.tensors) t.slot = -1;
  auto acquire = [&](int32_t t, bool dedicated) {
    int32_t& slot = slot_of(t);
    const uint64_t bytes = engine.tensors[size_t(root[size_t(t)])].bytes();
    if (slot < 0) slot = dedicated ? pool.dedicated(bytes) : pool.acquire(bytes);
  };
  for (const auto* list : {&engine.inputs, &engine.outputs})
    for (int32_t t : *list) acquire(t, /*dedicated=*/true);
  std::multimap<size_t, size_t> loops_by_start;  // first body layer -> loop layer
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    const EngineLayer& l = engine.layers[li];
    if (l.is_loop() && l.branch_layers.size() == 1 && l.branch_layers[0] <= li)
      loops_by_start.emplace(li - l.branch_layers[0], li);
  }
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    EngineLayer& layer = engine.layers[li];
    for (auto [it, end] = loops_by_start.equal_range(li); it != end; ++it) {
      for (int32_t t : engine.layers[it->second].outputs)
        if (t >= 0) acquire(t, /*dedicated=*/false);
    }
    for (int32_t t : layer.outputs)
      if (t >= 0) acquire(t, /*dedicated=*/false);
    layer.scratch_slots.clear();
    for (uint64_t bytes : layer.plan.scratch_bytes) layer.scratch_slots.push_back(pool.acquire(bytes));
    for (int32_t s : layer.scratch_slots) pool.release(s);
    // Tensors whose last use is this layer free their slots for later layers.
    std::set<int32_t> seen;
    for (const auto* list : {&layer.inputs, &layer.outputs}) {
      for (int32_t t : *list) {
        if (t < 0) continue;
        const int32_t r = root[size_t(t)];
        if (pinned.count(r) || !seen.insert(r).second) continue;
        if (last_use[size_t(r)] == int64_t(li)) pool.release(slot_of(t));
      }
    }
  }
  for (size_t t = 0; t < n; ++t) engine.tensors[t].slot = engine.tensors[size_t(root[t])].slot;
}

namespace {

// The items of layers [begin, end), read from the back: a branching layer owns
// the blocks of layers right before it.
LayerBlock blocks_of(const Engine& engine, size_t begin, size_t end, const std::string& what) {
  LayerBlock block;
  size_t i = end;
  while (i > begin) {
    --i;
    LayerBlock::Item item{i, {}};
    const EngineLayer& l = engine.layers[i];
    if (l.is_loop()) {
      VKG_CHECK(l.branch_layers.size() == 1 && l.branch_layers[0] <= i - begin,
                what << ": the body of loop '" << l.name << "' reaches outside its block");
      item.branches.push_back(blocks_of(engine, i - l.branch_layers[0], i, what));
      i -= l.branch_layers[0];
    } else if (l.is_branch()) {
      VKG_CHECK(l.branch_layers.size() == 2 && l.branch_dispatches.size() == 2,
                what << ": branching layer '" << l.name << "' needs the layer and dispatch counts of two branches");
      const uint64_t then_n = l.branch_layers[0], else_n = l.branch_layers[1];
      VKG_CHECK(then_n + else_n <= i - begin, what << ": the branches of layer '" << l.name << "' (" << then_n
                                                    << " + " << else_n << " layers) reach outside its block");
      const size_t else_begin = i - size_t(else_n), then_begin = else_begin - size_t(then_n);
      item.branches.push_back(blocks_of(engine, then_begin, else_begin, what));
      item.branches.push_back(blocks_of(engine, else_begin, i, what));
      i = then_begin;
    }
    block.items.push_back(std::move(item));
  }
  std::reverse(block.items.begin(), block.items.end());
  return block;
}

}  // namespace

LayerBlock layer_blocks(const Engine& engine, const std::string& what) {
  return blocks_of(engine, 0, engine.layers.size(), what);
}

namespace {

// `where` (a layer's input, an engine output...) refers to tensor `t`: one of the engine's, or -1.
void check_tensor_index(const Engine& engine, int32_t t, const std::string& what, const std::string& where) {
  const int32_t n = int32_t(engine.tensors.size());
  VKG_CHECK(t >= -1 && t < n, what << ": " << where << " refers to tensor " << t << " of " << n);
}

// A view tensor lies inside the tensor it views, reaches a memory root without a cycle and shares
// that root's slot.
void check_view(const Engine& engine, size_t i, const std::string& what) {
  const int32_t n = int32_t(engine.tensors.size());
  const EngineTensor& t = engine.tensors[i];
  VKG_CHECK(t.view_of < n && t.view_of != int32_t(i),
            what << ": tensor '" << t.name << "' is a view of tensor " << t.view_of << " of " << n);
  const EngineTensor& base = engine.tensors[size_t(t.view_of)];
  VKG_CHECK(t.offset <= base.bytes() && t.bytes() <= base.bytes() - t.offset && t.storage == base.storage,
            what << ": tensor '" << t.name << "' (" << t.bytes() << " bytes at " << t.offset
                 << ") is not a part of tensor '" << base.name << "' (" << base.bytes() << " bytes)");
  int32_t hop = t.view_of;
  for (size_t hops = 0; hop >= 0; ++hops) {
    VKG_CHECK(hops < engine.tensors.size() && hop < n, what << ": the views of tensor '" << t.name << "' form a cycle");
    hop = engine.tensors[size_t(hop)].view_of;
  }
  VKG_CHECK(t.slot == engine.tensors[size_t(engine.memory_root(int32_t(i)))].slot,
            what << ": tensor '" << t.name << "' does not share its memory's slot");
}

// Tensor i fits a valid slot, has no negative dimension and, as a view, is a valid one.
void check_tensor(const Engine& engine, size_t i, const std::string& what) {
  const EngineTensor& t = engine.tensors[i];
  VKG_CHECK(t.slot >= 0 && size_t(t.slot) < engine.slots.size(),
            what << ": tensor '" << t.name << "' has memory slot " << t.slot << " of " << engine.slots.size());
  VKG_CHECK(engine.slots[size_t(t.slot)] >= t.bytes(),
            what << ": tensor '" << t.name << "' (" << t.bytes() << " bytes) does not fit its slot");
  for (int64_t d : t.shape) VKG_CHECK(d >= 0, what << ": tensor '" << t.name << "' has a negative dimension");
  if (t.view_of >= 0) check_view(engine, i, what);
}

// The engine's inputs or outputs (`role`) are present tensors that hold their own memory.
void check_engine_io(const Engine& engine, const std::vector<int32_t>& tensors, const std::string& role,
                     const std::string& what) {
  for (int32_t t : tensors) {
    check_tensor_index(engine, t, what, "an engine " + role);
    VKG_CHECK(t >= 0, what << ": an engine " << role << " is missing");
    VKG_CHECK(engine.tensors[size_t(t)].view_of < 0,
              what << ": engine " << role << " '" << engine.tensors[size_t(t)].name << "' is a view of another tensor");
  }
}

// The layer's scratch buffers have valid slots, its weights a supported dtype, and it dispatches.
void check_layer_resources(const Engine& engine, const EngineLayer& l, const std::string& where,
                           const std::string& what) {
  VKG_CHECK(l.scratch_slots.size() == l.plan.scratch_bytes.size(), what << ": " << where << " scratch mismatch");
  for (size_t s = 0; s < l.scratch_slots.size(); ++s) {
    const int32_t slot = l.scratch_slots[s];
    VKG_CHECK(slot >= 0 && size_t(slot) < engine.slots.size() &&
                  engine.slots[size_t(slot)] >= std::max<uint64_t>(l.plan.scratch_bytes[s], 1),
              what << ": " << where << " scratch " << s << " has no valid slot");
  }
  for (const Tensor& w : l.plan.weights) {
    VKG_CHECK(w.dtype() == DType::Float32 || w.dtype() == DType::Float16 || w.dtype() == DType::Int32,
              what << ": " << where << " has a weight of dtype " << dtype_name(w.dtype()));
  }
  VKG_CHECK(!l.plan.dispatches.empty(), what << ": " << where << " has no dispatch");
}

// A loop layer splits its dispatches into setting and updating its state, and reads one-integer
// trip counts and conditions.
void check_loop_layer(const Engine& engine, const EngineLayer& l, const std::string& where, const std::string& what) {
  const size_t s = l.outputs.size();
  VKG_CHECK(l.branch_dispatches.size() == 2 &&
                uint64_t(l.branch_dispatches[0]) + l.branch_dispatches[1] == l.plan.dispatches.size() &&
                l.branch_errors.empty(),
            what << ": " << where << " splits its dispatches between setting and updating its state wrongly");
  VKG_CHECK(l.inputs.size() >= 3 + 2 * s && l.loop_trip_count >= -1,
            what << ": " << where << " needs a trip count, conditions, initial values and results for its state");
  for (size_t at : {size_t(0), size_t(1), 2 + 2 * s}) {
    const int32_t t = l.inputs[at];
    VKG_CHECK(t < 0 || (engine.tensors[size_t(t)].storage == StorageType::I32 &&
                        num_elements(engine.tensors[size_t(t)].shape) == 1),
              what << ": " << where << " reads a trip count or condition that is not one integer");
  }
}

// A branching layer splits its dispatches between two branches, reads a one-element integer
// condition and the results of both, and a branch it marks as failing has no layers or results.
void check_branch_layer(const Engine& engine, const EngineLayer& l, const std::string& where, const std::string& what) {
  VKG_CHECK(l.branch_dispatches.size() == 2 &&
                uint64_t(l.branch_dispatches[0]) + l.branch_dispatches[1] == l.plan.dispatches.size(),
            what << ": " << where << " splits its dispatches between the branches wrongly");
  VKG_CHECK(l.inputs.size() == 1 + 2 * l.outputs.size() && l.inputs[0] >= 0 &&
                engine.tensors[size_t(l.inputs[0])].storage == StorageType::I32 &&
                engine.tensors[size_t(l.inputs[0])].shape.size() <= 1 &&
                num_elements(engine.tensors[size_t(l.inputs[0])].shape) == 1,
            what << ": " << where << " needs a one-element integer condition and the results of both branches");
  VKG_CHECK(l.branch_errors.empty() || l.branch_errors.size() == 2,
            what << ": " << where << " needs an error entry per branch or none");
  for (size_t b = 0; b < l.branch_errors.size() && l.branch_layers.size() == 2; ++b) {
    if (l.branch_errors[b].empty()) continue;
    bool results_absent = true;
    for (size_t j = 0; j < l.outputs.size(); ++j) results_absent &= l.inputs[1 + b * l.outputs.size() + j] == -1;
    VKG_CHECK(results_absent && l.branch_layers[b] == 0 && l.branch_dispatches[b] == 0,
              what << ": " << where << " has layers or results for a branch it marks as failing");
  }
}

// Whether layer `l` has the input, output, weight or scratch buffer that `b` binds.
bool binding_exists(const EngineLayer& l, const BindingRef& b) {
  bool ok = false;
  switch (b.kind) {
    case BindingRef::Kind::Input: ok = b.index < l.inputs.size() && l.inputs[b.index] >= 0; break;
    case BindingRef::Kind::Output: ok = b.index < l.outputs.size() && l.outputs[b.index] >= 0; break;
    case BindingRef::Kind::Weight: ok = b.index < l.plan.weights.size(); break;
    case BindingRef::Kind::Scratch: ok = b.index < l.plan.scratch_bytes.size(); break;
  }
  return ok;
}

// Each dispatch has its SPIR-V, at most 128 bytes of push constants, some groups and bindings the
// layer has.
void check_dispatches(const Engine& engine, const EngineLayer& l, const std::string& where, const std::string& what) {
  for (const Dispatch& d : l.plan.dispatches) {
    VKG_CHECK(engine.spirv.count(d.shader),
              what << ": " << where << " uses shader '" << d.shader << "' whose SPIR-V is missing");
    VKG_CHECK(d.push.size() <= 32, what << ": " << where << " pushes more than 128 bytes of constants");
    for (uint32_t g : d.groups) VKG_CHECK(g > 0, what << ": " << where << " dispatches zero groups");
    for (const BindingRef& b : d.bindings) {
      VKG_CHECK(binding_exists(l, b), what << ": " << where << " binds " << binding_kind_name(b.kind) << " " << b.index
                                           << ", which it does not have");
    }
  }
}

// Everything layer `l` needs to run: valid tensors and buffers, consistent control flow, valid dispatches.
void check_layer(const Engine& engine, const EngineLayer& l, const std::string& what) {
  const std::string where = "layer '" + l.name + "'";
  for (int32_t t : l.inputs) check_tensor_index(engine, t, what, where + " input");
  for (int32_t t : l.outputs) check_tensor_index(engine, t, what, where + " output");
  check_layer_resources(engine, l, where, what);
  if (l.is_loop()) {
    check_loop_layer(engine, l, where, what);
  } else if (l.is_branch()) {
    check_branch_layer(engine, l, where, what);
  } else {
    VKG_CHECK(l.branch_dispatches.empty() && l.branch_errors.empty() && l.loop_trip_count == -1,
              what << ": " << where << " has branch data but no branches");
  }
  check_dispatches(engine, l, where, what);
}

}  // namespace

void validate_engine(const Engine& engine, const std::string& what) {
  for (size_t i = 0; i < engine.tensors.size(); ++i) check_tensor(engine, i, what);
  check_engine_io(engine, engine.inputs, "input", what);
  check_engine_io(engine, engine.outputs, "output", what);
  for (const EngineLayer& l : engine.layers) check_layer(engine, l, what);
  layer_blocks(engine, what);
}

}  // namespace vkg
