#include "runtime/vulkan/executor.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/tactic.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {

namespace {

constexpr uint32_t kFaultLocalSize = 64;

std::string pipeline_key(const std::string& shader, const std::vector<SpecValue>& spec, uint32_t bindings,
                         uint32_t push_words) {
  std::ostringstream key;
  key << shader << '|' << bindings << '|' << push_words;
  for (const SpecValue& s : spec) key << '|' << s.id << '=' << s.value;
  return key.str();
}

}  // namespace

std::vector<std::string> faulty_tactics_from_env() {
  std::vector<std::string> out;
  const char* env = std::getenv("VKGRAPHY_FAULTY_TACTICS");
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

const ComputePipeline& EngineExecutor::pipeline_for(const std::string& shader, const std::vector<SpecValue>& spec,
                                                    uint32_t bindings, uint32_t push_words,
                                                    const std::vector<uint32_t>& words) {
  const std::string key = pipeline_key(shader, spec, bindings, push_words);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;
  PipelineDesc desc;
  desc.name = shader;
  desc.storage_buffers = bindings;
  desc.push_constant_bytes = push_words * 4;
  for (const SpecValue& s : spec) desc.specialization.push_back(SpecConstant{s.id, s.value});
  auto pipeline = std::make_unique<ComputePipeline>(device_, words, std::move(desc));
  return *pipelines_.emplace(key, std::move(pipeline)).first->second;
}

const Buffer& EngineExecutor::tensor_buffer(int32_t tensor) const {
  return slots_.at(size_t(engine_.tensors.at(size_t(tensor)).slot));
}

EngineExecutor::EngineExecutor(Device& device, const Engine& engine, ExecutorOptions options)
    : device_(device), engine_(engine), options_(std::move(options)) {
  const bool needs_fp16 = std::any_of(engine.tensors.begin(), engine.tensors.end(),
                                      [](const EngineTensor& t) { return t.storage == StorageType::F16; });
  VKG_CHECK(!needs_fp16 || device.info().fp16(),
            "the engine runs layers in fp16, but device '" << device.info().name
                                                           << "' lacks fp16 arithmetic or 16-bit storage");
  for (uint64_t bytes : engine.slots) slots_.emplace_back(device, size_t(std::max<uint64_t>(bytes, 4)));

  layers_.resize(engine.layers.size());
  weights_.resize(engine.layers.size());
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    const EngineLayer& layer = engine.layers[li];
    for (const Tensor& w : layer.plan.weights) {
      weights_[li].emplace_back(device, std::max<size_t>(w.nbytes(), 4));
      if (w.nbytes() > 0) weights_[li].back().upload(w.raw(), w.nbytes());
    }
    for (const Dispatch& d : layer.plan.dispatches) {
      std::vector<const Buffer*> buffers;
      for (const BindingRef& b : d.bindings) {
        switch (b.kind) {
          case BindingRef::Kind::Input: buffers.push_back(&tensor_buffer(layer.inputs.at(b.index))); break;
          case BindingRef::Kind::Output: buffers.push_back(&tensor_buffer(layer.outputs.at(b.index))); break;
          case BindingRef::Kind::Weight: buffers.push_back(&weights_[li].at(b.index)); break;
          case BindingRef::Kind::Scratch: buffers.push_back(&slots_.at(size_t(layer.scratch_slots.at(b.index)))); break;
        }
      }
      const auto words = engine.spirv.find(d.shader);
      VKG_CHECK(words != engine.spirv.end(), "layer '" << layer.name << "': no SPIR-V for shader '" << d.shader << "'");
      const ComputePipeline& p =
          pipeline_for(d.shader, d.spec, uint32_t(d.bindings.size()), uint32_t(d.push.size()), words->second);
      layers_[li].steps.push_back({&p, std::make_unique<DescriptorSet>(device, p, buffers), &d});
    }
    const bool faulty = std::any_of(options_.faulty_tactics.begin(), options_.faulty_tactics.end(),
                                    [&](const std::string& pattern) { return glob_match(pattern, layer.tactic); });
    if (!faulty) continue;
    VKG_WARNING("VKGRAPHY_FAULTY_TACTICS: layer '" << layer.name << "' (tactic " << layer.tactic
                                                   << ") will produce wrong results on purpose");
    for (int32_t t : layer.outputs) {
      if (t < 0) continue;
      const EngineTensor& tensor = engine.tensors[size_t(t)];
      const bool integer = tensor.storage == StorageType::I32;
      const std::string shader = tensor.storage == StorageType::F16 ? "debug/fault.f16" : "debug/fault.f32";
      const auto span = builtin_shader(shader);
      const std::vector<uint32_t> words(span.begin(), span.end());
      const std::vector<SpecValue> spec = {{0, kFaultLocalSize}, {1, integer ? 1u : 0u}};
      const ComputePipeline& p = pipeline_for(shader, spec, 1, 1, words);
      const Buffer* buffer = &tensor_buffer(t);
      const uint64_t n = uint64_t(num_elements(tensor.shape));
      layers_[li].faults.push_back({&p, std::make_unique<DescriptorSet>(device, p, std::span(&buffer, 1)),
                                    uint32_t(n), linear_groups(n, kFaultLocalSize, device.info())});
    }
  }
}

EngineExecutor::~EngineExecutor() = default;

TensorMap EngineExecutor::run(const TensorMap& inputs) {
  for (int32_t id : engine_.inputs) {
    const EngineTensor& t = engine_.tensors[size_t(id)];
    auto it = inputs.find(t.name);
    VKG_CHECK(it != inputs.end(), "input '" << t.name << "' of the engine was not provided");
    const Tensor& value = it->second;
    VKG_CHECK(value.shape() == t.shape, "input '" << t.name << "' has shape " << shape_to_string(value.shape())
                                                  << " but the engine was built for "
                                                  << shape_to_string(t.shape));
    VKG_CHECK(value.dtype() == t.dtype, "input '" << t.name << "' is " << dtype_name(value.dtype())
                                                  << " but the engine expects " << dtype_name(t.dtype));
    const Tensor stored = to_storage(value, t.storage, "input '" + t.name + "'");
    if (stored.nbytes() > 0) slots_[size_t(t.slot)].upload(stored.raw(), stored.nbytes());
  }

  const bool timestamps = device_.info().timestamps();
  const uint32_t queries = timestamps ? uint32_t(options_.profile ? engine_.layers.size() + 1 : 2) : 0;
  ComputeCommands cmd(device_, queries);
  cmd.begin();
  std::vector<uint32_t> marks;
  if (timestamps) marks.push_back(cmd.write_timestamp());
  for (size_t li = 0; li < layers_.size(); ++li) {
    for (const Step& s : layers_[li].steps) {
      cmd.dispatch(*s.pipeline, *s.set, s.dispatch->groups[0], s.dispatch->groups[1], s.dispatch->groups[2],
                   s.dispatch->push.data(), uint32_t(s.dispatch->push.size() * 4));
      cmd.barrier();
    }
    for (const Fault& f : layers_[li].faults) {
      cmd.dispatch(*f.pipeline, *f.set, f.groups[0], f.groups[1], f.groups[2], &f.elements, 4);
      cmd.barrier();
    }
    if (timestamps && options_.profile) marks.push_back(cmd.write_timestamp());
  }
  if (timestamps && !options_.profile) marks.push_back(cmd.write_timestamp());
  cmd.submit_and_wait();

  last_layer_ns_.clear();
  last_device_ns_ = 0;
  if (timestamps) {
    last_device_ns_ = cmd.elapsed_ns(marks.front(), marks.back());
    if (options_.profile) {
      for (size_t i = 0; i + 1 < marks.size(); ++i) last_layer_ns_.push_back(cmd.elapsed_ns(marks[i], marks[i + 1]));
    }
  }

  TensorMap outputs;
  for (int32_t id : engine_.outputs) {
    const EngineTensor& t = engine_.tensors[size_t(id)];
    const DType stored_dtype = t.storage == StorageType::F32   ? DType::Float32
                               : t.storage == StorageType::F16 ? DType::Float16
                                                               : DType::Int32;
    Tensor stored(stored_dtype, t.shape);
    if (stored.nbytes() > 0) slots_[size_t(t.slot)].download(stored.raw(), stored.nbytes());
    outputs[t.name] = from_storage(stored, t.dtype);
  }
  return outputs;
}

}  // namespace vkg::vk
