#include "runtime/vulkan/executor.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/tactic.h"
#include "runtime/vulkan/compile_workers.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {

namespace {

constexpr uint32_t kFaultLocalSize = 64;

std::vector<std::string> comma_list_from_env(const char* name) {
  std::vector<std::string> out;
  const char* env = std::getenv(name);
  if (env == nullptr) return out;
  std::string item;
  std::istringstream in(env);
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool any_glob_matches(const std::vector<std::string>& patterns, const std::string& text) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, text); });
}

// An engine that holds tensors in fp16 needs fp16 arithmetic and 16-bit storage.
void check_fp16(const Engine& engine, const DeviceInfo& info) {
  const bool needs_fp16 = std::any_of(engine.tensors.begin(), engine.tensors.end(),
                                      [](const EngineTensor& t) { return t.storage == StorageType::F16; });
  VKG_CHECK(!needs_fp16 || info.fp16(),
            "the engine runs layers in fp16, but device '" << info.name << "' lacks fp16 arithmetic or 16-bit storage");
}

// An engine whose tensor-core shaders were built for the cooperative-matrix extension another
// device (or another switch) used: a clear error before any pipeline is made.
void check_cooperative_matrices(const Engine& engine, const DeviceInfo& info) {
  for (const auto& [name, words] : engine.spirv) {
    const CooperativeMatrixNeed need = cooperative_matrix_need(words);
    if (need == CooperativeMatrixNeed::None) continue;
    const bool khr = need == CooperativeMatrixNeed::Khr;
    const bool offered = info.cooperative_matrix && info.cooperative_matrix_khr == khr;
    VKG_CHECK(offered, "the engine's shader '"
                           << name << "' uses " << (khr ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix")
                           << ", which device '" << info.name << "' "
                           << (!info.cooperative_matrix ? "does not offer (or a switch turned off)"
                                                        : khr ? "does not use (--vk-disable-cooperative-matrix-khr?)"
                                                              : "does not use: it runs VK_KHR_cooperative_matrix "
                                                                "(--vk-disable-cooperative-matrix-khr runs NV engines)")
                           << "; build the engine on this device");
  }
}

}  // namespace

std::vector<std::string> faulty_tactics_from_env() { return comma_list_from_env("VKGRAPHY_FAULTY_TACTICS"); }
std::vector<std::string> faulty_layers_from_env() { return comma_list_from_env("VKGRAPHY_FAULTY_LAYERS"); }

Dispatch fault_dispatch(StorageType storage, uint64_t elements, const DeviceInfo& info) {
  Dispatch fault;
  fault.shader = storage == StorageType::F16 ? "debug/fault.f16" : "debug/fault.f32";
  fault.spec = {{0, kFaultLocalSize}, {1, storage == StorageType::I32 ? 1u : 0u}};
  fault.bindings = {BindingRef::output(0)};
  fault.push = {uint32_t(elements)};
  fault.groups = linear_groups(elements, kFaultLocalSize, info);
  return fault;
}

std::vector<RewriteSwitch> faulty_rewrites_from_env() {
  std::vector<RewriteSwitch> out;
  for (const std::string& item : comma_list_from_env("VKGRAPHY_FAULTY_REWRITES")) out.push_back(parse_rewrite_switch(item));
  return out;
}

void add_rewrite_faults(Engine& engine, const std::vector<AppliedRewrite>& rewrites,
                        const std::vector<RewriteSwitch>& faulty, const DeviceInfo& info) {
  std::set<size_t> faulted;
  for (const AppliedRewrite& r : rewrites) {
    if (std::none_of(faulty.begin(), faulty.end(), [&](const RewriteSwitch& s) { return rewrite_matches(s, r); }))
      continue;
    bool held = false;
    for (size_t li = 0; li < engine.layers.size(); ++li) {
      EngineLayer& layer = engine.layers[li];
      const bool holds = std::any_of(r.nodes.begin(), r.nodes.end(), [&](const std::string& n) {
        return std::find(layer.nodes.begin(), layer.nodes.end(), n) != layer.nodes.end();
      });
      if (!holds || layer.is_branch()) continue;
      held = true;
      if (!faulted.insert(li).second) continue;
      VKG_WARNING("VKGRAPHY_FAULTY_REWRITES: layer '" << layer.name << "' (rewrite " << r.id()
                                                      << ") will produce wrong results on purpose");
      for (size_t o = 0; o < layer.outputs.size(); ++o) {
        if (layer.outputs[o] < 0) continue;
        const EngineTensor& tensor = engine.tensors[size_t(layer.outputs[o])];
        Dispatch fault = fault_dispatch(tensor.storage, uint64_t(num_elements(tensor.shape)), info);
        fault.bindings = {BindingRef::output(uint32_t(o))};
        const auto words = builtin_shader(fault.shader);
        engine.spirv.emplace(fault.shader, std::vector<uint32_t>(words.begin(), words.end()));
        layer.plan.dispatches.push_back(std::move(fault));
      }
    }
    if (!held) VKG_WARNING("VKGRAPHY_FAULTY_REWRITES: rewrite " << r.describe() << " leaves no layer to make faulty");
  }
}

const ComputePipeline& EngineExecutor::pipeline_for(const PipelineDesc& desc, const std::vector<uint32_t>& words) {
  const std::string key = pipeline_key(desc);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;
  return *pipelines_.emplace(key, device_.pipelines().get(words, desc)).first->second;
}

const Buffer& EngineExecutor::tensor_buffer(int32_t tensor) const {
  return slots_.at(size_t(engine_.tensors.at(size_t(tensor)).slot));
}

BufferRegion EngineExecutor::tensor_region(int32_t tensor) const {
  const EngineTensor& t = engine_.tensors.at(size_t(tensor));
  if (t.view_of < 0) return {&tensor_buffer(tensor), 0, 0};
  return {&tensor_buffer(tensor), engine_.slot_offset(tensor), std::max<uint64_t>(t.bytes(), 4)};
}

EngineExecutor::EngineExecutor(Device& device, const Engine& engine, ExecutorOptions options)
    : device_(device), engine_(engine), options_(std::move(options)) {
  check_fp16(engine, device.info());
  check_cooperative_matrices(engine, device.info());
  create_slots();
  layers_.resize(engine.layers.size());
  upload_weights();
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    create_steps(li);
    create_faults(li);
  }
  compile_ahead();
  record();
}

void EngineExecutor::create_slots() {
  std::vector<BufferUse> uses(engine_.slots.size(), BufferUse::Device);
  for (int32_t t : engine_.inputs) uses.at(size_t(engine_.tensors.at(size_t(t)).slot)) = BufferUse::HostWrite;
  for (int32_t t : engine_.outputs) uses.at(size_t(engine_.tensors.at(size_t(t)).slot)) = BufferUse::HostRead;
  for (size_t i = 0; i < engine_.slots.size(); ++i)
    slots_.emplace_back(device_, size_t(std::max<uint64_t>(engine_.slots[i], 4)), uses[i]);
  auto staging_for = [&](int32_t t) -> std::unique_ptr<Buffer> {
    const Buffer& slot = tensor_buffer(t);
    if (slot.host_mapped()) return nullptr;
    return std::make_unique<Buffer>(device_, slot.size(), BufferUse::Staging);
  };
  for (int32_t t : engine_.inputs) input_staging_.push_back(staging_for(t));
  for (int32_t t : engine_.outputs) output_staging_.push_back(staging_for(t));
}

void EngineExecutor::upload_weights() {
  weights_.resize(engine_.layers.size());
  for (size_t li = 0; li < engine_.layers.size(); ++li)
    for (const Tensor& w : engine_.layers[li].plan.weights)
      weights_[li].emplace_back(device_, std::max<size_t>(w.nbytes(), 4), BufferUse::HostWrite);
  StagedUpload upload(device_);
  for (size_t li = 0; li < engine_.layers.size(); ++li)
    for (size_t wi = 0; wi < weights_[li].size(); ++wi) {
      const Tensor& w = engine_.layers[li].plan.weights[wi];
      upload.add(weights_[li][wi], w.raw(), w.nbytes());
    }
  upload.finish();
  if (upload.staged_bytes() > 0)
    VKG_VERBOSE("uploaded " << upload.staged_bytes() << " bytes of weights through staging ("
                            << memory_path_name(device_.info().memory_path()) << " memory path)");
}

std::vector<BufferRegion> EngineExecutor::dispatch_regions(size_t li, const Dispatch& d) const {
  const EngineLayer& layer = engine_.layers[li];
  std::vector<BufferRegion> buffers;
  for (const BindingRef& b : d.bindings) {
    switch (b.kind) {
      case BindingRef::Kind::Input:
        buffers.push_back(tensor_region(layer.inputs.at(b.index)));
        break;
      case BindingRef::Kind::Output:
        buffers.push_back(tensor_region(layer.outputs.at(b.index)));
        break;
      case BindingRef::Kind::Weight:
        buffers.push_back({&weights_[li].at(b.index), 0, 0});
        break;
      case BindingRef::Kind::Scratch:
        buffers.push_back({&slots_.at(size_t(layer.scratch_slots.at(b.index))), 0, 0});
        break;
    }
  }
  return buffers;
}

void EngineExecutor::create_steps(size_t li) {
  const EngineLayer& layer = engine_.layers[li];
  for (const Dispatch& d : layer.plan.dispatches) {
    const std::vector<BufferRegion> buffers = dispatch_regions(li, d);
    const auto words = engine_.spirv.find(d.shader);
    VKG_CHECK(words != engine_.spirv.end(), "layer '" << layer.name << "': no SPIR-V for shader '" << d.shader << "'");
    const ComputePipeline& p = pipeline_for(pipeline_desc(d), words->second);
    auto set = std::make_unique<DescriptorSet>(device_, p, buffers);
    // The ranges as bound (a texel view may reach past its region, DescriptorSet::ranges).
    std::vector<BufferAccess> accesses;
    for (size_t i = 0; i < buffers.size(); ++i)
      accesses.push_back({buffers[i].buffer, set->ranges()[i].first, set->ranges()[i].second,
                          !(p.read_only_bindings() >> i & 1u)});
    layers_[li].steps.push_back({&p, std::move(set), &d, std::move(accesses)});
  }
}

void EngineExecutor::create_faults(size_t li) {
  const EngineLayer& layer = engine_.layers[li];
  const bool by_tactic = any_glob_matches(options_.faulty_tactics, layer.tactic);
  const bool by_layer = any_glob_matches(options_.faulty_layers, layer.name) ||
                        std::any_of(layer.nodes.begin(), layer.nodes.end(),
                                    [&](const std::string& n) { return any_glob_matches(options_.faulty_layers, n); });
  if (!by_tactic && !by_layer) return;
  VKG_WARNING((by_tactic ? "VKGRAPHY_FAULTY_TACTICS" : "VKGRAPHY_FAULTY_LAYERS")
              << ": layer '" << layer.name << "' (tactic " << layer.tactic
              << ") will produce wrong results on purpose");
  for (int32_t t : layer.outputs) {
    if (t < 0) continue;
    const EngineTensor& tensor = engine_.tensors[size_t(t)];
    const Dispatch fault = fault_dispatch(tensor.storage, uint64_t(num_elements(tensor.shape)), device_.info());
    const auto span = builtin_shader(fault.shader);
    const std::vector<uint32_t> words(span.begin(), span.end());
    const ComputePipeline& p = pipeline_for(pipeline_desc(fault), words);
    const BufferRegion region = tensor_region(t);
    layers_[li].faults.push_back({&p, std::make_unique<DescriptorSet>(device_, p, std::span(&region, 1)),
                                  fault.push[0], fault.groups, {{region.buffer, region.offset, region.size, true}}});
  }
}

void EngineExecutor::compile_ahead() {
  // The engine's own pipelines (its epilogue constants are not those its build timed with) compiled
  // side by side where the driver compiles one at a time in a process, instead of one by one at the
  // first run; elsewhere (and with no workers) the first run compiles them, as it always did.
  CompileWorkers workers(device_, default_compile_workers());
  if (!workers.enabled()) return;
  std::vector<const ComputePipeline*> pipelines;
  for (const LayerSteps& l : layers_)
    for (const Step& step : l.steps) pipelines.push_back(step.pipeline);
  workers.compile(pipelines);
  if (workers.started())
    VKG_VERBOSE("engine pipelines compiled ahead: " << workers.compiled_by_workers() << " by " << workers.started()
                                                     << " worker process(es), " << workers.compiled_here() << " here");
}

EngineExecutor::~EngineExecutor() = default;

void EngineExecutor::record() {
  recorded_dispatches_ = recorded_barriers_ = 0;
  recordings_.clear();
  program_.clear();
  conditions_.clear();
  failures_.clear();
  loops_.clear();
  Pending pending;
  emit(layer_blocks(engine_, "the engine"), pending);
  flush(pending, /*last=*/true);
}

void EngineExecutor::emit(const LayerBlock& block, Pending& pending) {
  for (const LayerBlock::Item& item : block.items) {
    const EngineLayer& layer = engine_.layers[item.layer];
    if (!layer.is_branch()) {
      pending.layers.emplace_back(item.layer, 0, layers_[item.layer].steps.size());
      continue;
    }
    // Host copies of tensors the program tests, filled at the end of the recording being assembled.
    auto read_back = [&](int32_t tensor) -> std::optional<size_t> {
      if (tensor < 0) return std::nullopt;
      pending.readbacks.push_back(tensor);
      return conditions_.size() + pending.readbacks.size() - 1;
    };
    if (layer.is_loop()) {
      // Set the state, read the trip count and first condition; then test, run the body
      // and copy its results into the state, read the body's condition, test again.
      const size_t s = layer.outputs.size();
      Loop loop;
      loop.trip_count = layer.loop_trip_count;
      pending.layers.emplace_back(item.layer, 0, layer.branch_dispatches[0]);
      loop.trip_count_host = read_back(layer.inputs.at(0));
      loop.first_condition = read_back(layer.inputs.at(1));
      flush(pending, false);
      const size_t index = loops_.size();
      program_.push_back({Instruction::Kind::LoopEnter, index, 0});
      const size_t test = program_.size();
      program_.push_back({Instruction::Kind::LoopTest, index, 0});
      emit(item.branches.at(0), pending);
      pending.layers.emplace_back(item.layer, layer.branch_dispatches[0], layers_[item.layer].steps.size());
      loop.body_condition = read_back(layer.inputs.at(2 + 2 * s));
      flush(pending, false);
      program_.push_back({Instruction::Kind::LoopBack, index, test});
      program_[test].target = program_.size();
      loop.name = layer.name;
      loops_.push_back(loop);
      continue;
    }
    // Up to the condition; then the then branch and its copies, or the else branch and its copies.
    const size_t condition = *read_back(layer.inputs.at(0));
    flush(pending, false);
    const size_t test = program_.size();
    program_.push_back({Instruction::Kind::JumpIfFalse, condition, 0});
    size_t jump = 0;
    for (size_t b = 0; b < 2; ++b) {
      if (b == 1) {
        jump = program_.size();
        program_.push_back({Instruction::Kind::Jump, 0, 0});
        program_[test].target = program_.size();
      }
      if (!layer.branch_errors.empty() && !layer.branch_errors[b].empty()) {
        program_.push_back({Instruction::Kind::Fail, failures_.size(), 0});
        failures_.push_back(layer.branch_errors[b]);
        continue;
      }
      emit(item.branches.at(b), pending);
      const size_t first = b == 0 ? 0 : layer.branch_dispatches[0];
      pending.layers.emplace_back(item.layer, first, first + layer.branch_dispatches[b]);
      flush(pending, false);
    }
    program_[jump].target = program_.size();
  }
}

void EngineExecutor::flush(Pending& pending, bool last) {
  const bool first = recordings_.empty();
  const bool timestamps = device_.info().timestamps();
  Recording rec;
  const uint32_t queries = timestamps ? uint32_t(options_.profile ? pending.layers.size() + 1 : 2) : 0;
  rec.cmd = std::make_unique<ComputeCommands>(device_, queries);
  ComputeCommands& cmd = *rec.cmd;
  cmd.begin(/*reusable=*/true);
  if (first) {
    bool copied = false;
    for (size_t i = 0; i < engine_.inputs.size(); ++i) {
      const EngineTensor& t = engine_.tensors[size_t(engine_.inputs[i])];
      if (input_staging_[i] == nullptr || t.bytes() == 0) continue;
      cmd.copy(*input_staging_[i], tensor_buffer(engine_.inputs[i]), size_t(t.bytes()));
      copied = true;
    }
    if (copied) cmd.barrier();
  }
  if (timestamps) rec.first_mark = rec.last_mark = cmd.write_timestamp();
  HazardTracker hazards;  // the input copies ended with a barrier, as the previous recording did
  for (const auto& [li, begin, end] : pending.layers) {
    for (size_t s = begin; s < end; ++s) {
      const Step& step = layers_[li].steps[s];
      record_dispatch(cmd, hazards, step.accesses, *step.pipeline, *step.set, step.dispatch->groups,
                      step.dispatch->push.data(), uint32_t(step.dispatch->push.size() * 4));
    }
    for (const Fault& f : layers_[li].faults)
      record_dispatch(cmd, hazards, f.accesses, *f.pipeline, *f.set, f.groups, &f.elements, 4);
    if (timestamps && options_.profile) {
      if (!hazards.empty()) barrier(cmd, hazards);  // the layer's time is its own: nothing of it runs past the mark
      rec.last_mark = cmd.write_timestamp();
      rec.layer_marks.emplace_back(li, rec.last_mark);
    }
  }
  // Before the timestamp, the copies to the host and the next recording (a barrier orders work of
  // earlier submissions on the queue too).
  if (!hazards.empty()) barrier(cmd, hazards);
  if (timestamps && !options_.profile) rec.last_mark = cmd.write_timestamp();
  for (int32_t tensor : pending.readbacks) {
    conditions_.push_back(std::make_unique<Buffer>(device_, 4, BufferUse::Staging));
    cmd.copy(tensor_buffer(tensor), *conditions_.back(), 4, size_t(engine_.slot_offset(tensor)));
  }
  if (!pending.readbacks.empty()) cmd.barrier();
  if (last) {
    for (size_t i = 0; i < engine_.outputs.size(); ++i) {
      const EngineTensor& t = engine_.tensors[size_t(engine_.outputs[i])];
      if (output_staging_[i] == nullptr || t.bytes() == 0) continue;
      cmd.copy(tensor_buffer(engine_.outputs[i]), *output_staging_[i], size_t(t.bytes()));
    }
  }
  program_.push_back({Instruction::Kind::Submit, recordings_.size(), 0});
  recordings_.push_back(std::move(rec));
  pending = Pending{};
}

void EngineExecutor::record_dispatch(ComputeCommands& cmd, HazardTracker& hazards,
                                     const std::vector<BufferAccess>& accesses, const ComputePipeline& pipeline,
                                     const DescriptorSet& set, const std::array<uint32_t, 3>& groups, const void* push,
                                     uint32_t push_bytes) {
  if (hazards.conflicts(accesses) || (options_.profile && !hazards.empty())) barrier(cmd, hazards);
  cmd.dispatch(pipeline, set, groups[0], groups[1], groups[2], push, push_bytes);
  hazards.add(accesses);
  ++recorded_dispatches_;
}

void EngineExecutor::barrier(ComputeCommands& cmd, HazardTracker& hazards) {
  cmd.barrier();
  hazards.clear();
  ++recorded_barriers_;
}

int32_t EngineExecutor::read_condition(size_t index) const {
  int32_t value = 0;
  conditions_.at(index)->download(&value, sizeof value);
  return value;
}

void EngineExecutor::write_tensor(int32_t tensor, const Tensor& value) {
  const EngineTensor& t = engine_.tensors.at(size_t(tensor));
  VKG_CHECK(value.size() == num_elements(t.shape),
            "tensor '" << t.name << "' has " << num_elements(t.shape) << " elements, given " << value.size());
  const Tensor stored =
      to_storage(value.dtype() == t.dtype ? value : value.cast(t.dtype), t.storage, "tensor '" + t.name + "'");
  if (stored.nbytes() > 0)
    slots_.at(size_t(t.slot)).upload(stored.raw(), stored.nbytes(), size_t(engine_.slot_offset(tensor)));
}

Tensor EngineExecutor::read_tensor(int32_t tensor) const {
  const EngineTensor& t = engine_.tensors.at(size_t(tensor));
  Tensor stored(storage_dtype(t.storage), t.shape);
  if (stored.nbytes() > 0)
    slots_.at(size_t(t.slot)).download(stored.raw(), stored.nbytes(), size_t(engine_.slot_offset(tensor)));
  return from_storage(std::move(stored), t.dtype);
}

void EngineExecutor::run_layer(size_t layer) {
  VKG_CHECK(layer < engine_.layers.size(), "layer " << layer << " is out of range");
  VKG_CHECK(!engine_.layers[layer].is_branch(), "layer '" << engine_.layers[layer].name << "' ("
                                                          << engine_.layers[layer].op
                                                          << ") selects its work at run time: it cannot run alone");
  ComputeCommands cmd(device_);
  cmd.begin();
  for (const Step& step : layers_[layer].steps) {
    cmd.dispatch(*step.pipeline, *step.set, step.dispatch->groups[0], step.dispatch->groups[1],
                 step.dispatch->groups[2], step.dispatch->push.data(), uint32_t(step.dispatch->push.size() * 4));
    cmd.barrier();
  }
  for (const Fault& f : layers_[layer].faults) {
    cmd.dispatch(*f.pipeline, *f.set, f.groups[0], f.groups[1], f.groups[2], &f.elements, 4);
    cmd.barrier();
  }
  cmd.submit_and_wait();
}

TensorMap EngineExecutor::run(const TensorMap& inputs) {
  TensorViewMap views;
  for (const auto& [name, value] : inputs) views.emplace(name, TensorView::of(value));
  return run(views);
}

TensorMap EngineExecutor::run(const TensorViewMap& inputs) {
  upload_inputs(inputs);
  execute_program();
  return download_outputs();
}

void EngineExecutor::upload_inputs(const TensorViewMap& inputs) {
  for (size_t i = 0; i < engine_.inputs.size(); ++i) {
    const EngineTensor& t = engine_.tensors[size_t(engine_.inputs[i])];
    auto it = inputs.find(t.name);
    VKG_CHECK(it != inputs.end(), "input '" << t.name << "' of the engine was not provided");
    const TensorView& value = it->second;
    VKG_CHECK(value.shape == t.shape, "input '" << t.name << "' has shape " << shape_to_string(value.shape)
                                                << " but the engine was built for " << shape_to_string(t.shape));
    VKG_CHECK(value.dtype == t.dtype, "input '" << t.name << "' is " << dtype_name(value.dtype)
                                                << " but the engine expects " << dtype_name(t.dtype));
    // Uploaded as given where it is in its storage form already (no host copy), else converted.
    const bool as_is = value.dtype == storage_dtype(t.storage);
    const Tensor stored = as_is ? Tensor() : to_storage(value.copy(), t.storage, "input '" + t.name + "'");
    const std::byte* source = as_is ? value.data : stored.raw();
    const size_t bytes = as_is ? value.nbytes() : stored.nbytes();
    if (bytes == 0) continue;
    Buffer& target = input_staging_[i] ? *input_staging_[i] : slots_[size_t(t.slot)];
    target.upload(source, bytes);
  }
}

void EngineExecutor::submit_recording(Recording& rec, bool timestamps) {
  rec.cmd->submit_and_wait();
  if (timestamps) last_device_ns_ += rec.cmd->elapsed_ns(rec.first_mark, rec.last_mark);
  uint32_t before = rec.first_mark;
  for (const auto& [layer, mark] : rec.layer_marks) {
    last_layer_ns_[layer] += rec.cmd->elapsed_ns(before, mark);
    before = mark;
  }
}

void EngineExecutor::execute_program() {
  const bool timestamps = device_.info().timestamps();
  last_device_ns_ = 0;
  last_layer_ns_.assign(timestamps && options_.profile ? engine_.layers.size() : 0, 0.0);
  size_t pc = 0;  // jumps only go forward: the program ends
  while (pc < program_.size()) {
    const Instruction& in = program_[pc];
    switch (in.kind) {
      case Instruction::Kind::Submit:
        submit_recording(recordings_[in.index], timestamps);
        ++pc;
        break;
      case Instruction::Kind::JumpIfFalse:
        pc = read_condition(in.index) != 0 ? pc + 1 : in.target;
        break;
      case Instruction::Kind::LoopEnter: {
        Loop& loop = loops_[in.index];
        loop.iterations = 0;
        loop.limit = loop.trip_count >= 0   ? loop.trip_count
                     : loop.trip_count_host ? std::max<int64_t>(read_condition(*loop.trip_count_host), 0)
                                            : -1;
        loop.condition = loop.first_condition;
        ++pc;
        break;
      }
      case Instruction::Kind::LoopTest: {
        Loop& loop = loops_[in.index];
        const bool more = (loop.limit < 0 || loop.iterations < loop.limit) &&
                          (!loop.condition || read_condition(*loop.condition) != 0);
        if (more) {
          VKG_CHECK(++loop.iterations <= kMaxLoopIterations,
                    "Loop '" << loop.name << "' ran " << kMaxLoopIterations
                             << " iterations without a trip count and its condition stayed true");
        }
        pc = more ? pc + 1 : in.target;
        break;
      }
      case Instruction::Kind::LoopBack:
        loops_[in.index].condition = loops_[in.index].body_condition;
        pc = in.target;
        break;
      case Instruction::Kind::Jump:
        pc = in.target;
        break;
      case Instruction::Kind::Fail:
        VKG_THROW(failures_[in.index]);
    }
  }
}

TensorMap EngineExecutor::download_outputs() const {
  TensorMap outputs;
  for (size_t i = 0; i < engine_.outputs.size(); ++i) {
    const EngineTensor& t = engine_.tensors[size_t(engine_.outputs[i])];
    Tensor stored(storage_dtype(t.storage), t.shape);
    const Buffer& source = output_staging_[i] ? *output_staging_[i] : slots_[size_t(t.slot)];
    if (stored.nbytes() > 0) source.download(stored.raw(), stored.nbytes());
    outputs[t.name] = from_storage(std::move(stored), t.dtype);
  }
  return outputs;
}

}  // namespace vkg::vk
