#include "runtime/vulkan/plan_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {

namespace {

constexpr double kSlowRunNs = 20e6;
constexpr int kMaxWarmupRuns = 4096;  // a minimum warm-up time of microsecond dispatches
// A device idle for less than this since the last timed submission is taken to have kept its
// clocks up and warms up for a tenth of the minimum: the builder times one small layer after
// another, and the full warm-up on each of its candidates made GPU builds several times longer
// (H200, 2026-11-27: PP-OCRv4 det's fp32 and fp16 builds with their runs took over 84 s, where
// six builds of three models and every peer's runs had taken 123 s). The tactic bench's large
// products idle the device longer than this between tactics (their data is generated and
// uploaded), and warm up in full.
constexpr auto kShortIdle = std::chrono::milliseconds(50);
constexpr std::chrono::milliseconds kProbeTimeout{120000};

// Deterministic, harmless contents for timing: small floats, zero integers.
std::vector<std::byte> fill_pattern(StorageType s, uint64_t elements) {
  std::vector<std::byte> bytes(size_t(elements) * storage_element_bytes(s));
  switch (s) {
    case StorageType::F32:
      for (uint64_t i = 0; i < elements; ++i) {
        const float v = float(int(i % 17) - 8) * 0.0625f;
        std::memcpy(bytes.data() + i * 4, &v, 4);
      }
      break;
    case StorageType::F16:
      for (uint64_t i = 0; i < elements; ++i) {
        const uint16_t v = float_to_half(float(int(i % 17) - 8) * 0.0625f);
        std::memcpy(bytes.data() + i * 2, &v, 2);
      }
      break;
    case StorageType::I32:
      break;
  }
  return bytes;
}

}  // namespace

double VulkanPlanTimer::default_warmup_ms(const DeviceInfo& info) {
  return info.type == DeviceType::Cpu ? 0 : kGpuWarmupMs;
}

VulkanPlanTimer::VulkanPlanTimer(Device& device, std::optional<double> min_warmup_ms, unsigned compile_threads,
                                 std::optional<unsigned> compile_workers)
    : device_(device),
      min_warmup_ns_(min_warmup_ms.value_or(default_warmup_ms(device.info())) * 1e6),
      compiler_(device, compile_threads),
      workers_(device, compile_workers.value_or(default_compile_workers())) {
  VKG_CHECK(device.info().timestamps(), "device '" << device.info().name
                                                   << "' has no timestamps on its compute queue: the builder cannot "
                                                      "time tactics (use --builder-optimization-level 0)");
}

VulkanPlanTimer::~VulkanPlanTimer() = default;

const ComputePipeline& VulkanPlanTimer::pipeline(const Dispatch& d) {
  PipelineDesc desc = pipeline_desc(d);
  const std::string key = pipeline_key(desc);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;
  return *pipelines_.emplace(key, device_.pipelines().get(builtin_shader(d.shader), desc)).first->second;
}

void VulkanPlanTimer::compile(const std::vector<const LayerPlan*>& plans) {
  std::vector<PipelineDesc> missing;
  std::vector<std::string> keys;
  for (const LayerPlan* plan : plans) {
    for (const Dispatch& d : plan->dispatches) {
      PipelineDesc desc = pipeline_desc(d);
      std::string key = pipeline_key(desc);
      if (pipelines_.count(key) != 0 || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(std::move(key));
      missing.push_back(std::move(desc));
    }
  }
  auto create = [&] {
    std::vector<std::shared_ptr<const ComputePipeline>> made = compiler_.compile(missing);
    std::vector<const ComputePipeline*> out;
    for (size_t i = 0; i < made.size(); ++i) {
      out.push_back(made[i].get());
      if (made[i]) pipelines_.emplace(keys[i], std::move(made[i]));
    }
    return out;
  };
  // Without workers the first dispatch of each compiles it; with them they start on the list while
  // this thread creates the pipelines.
  if (workers_.enabled())
    workers_.compile(missing, create);
  else
    create();
}

// A plan's buffers (inputs and outputs filled with `contents`, weights uploaded,
// scratch allocated) and one descriptor set per dispatch.
struct VulkanPlanTimer::Prepared {
  std::vector<vk::Buffer> in_buffers, out_buffers, weights, scratch;
  struct Step {
    const ComputePipeline* pipeline;
    std::unique_ptr<DescriptorSet> set;
    const Dispatch* dispatch;
  };
  std::vector<Step> steps;

  void record(ComputeCommands& cmd) const {
    for (const Step& s : steps) {
      cmd.dispatch(*s.pipeline, *s.set, s.dispatch->groups[0], s.dispatch->groups[1], s.dispatch->groups[2],
                   s.dispatch->push.data(), uint32_t(s.dispatch->push.size() * 4));
      cmd.barrier();
    }
  }
};

std::unique_ptr<VulkanPlanTimer::Prepared> VulkanPlanTimer::prepare(const LayerPlan& plan,
                                                                    const std::vector<Buffer>& inputs,
                                                                    const std::vector<Buffer>& outputs,
                                                                    const std::vector<const Tensor*>& contents) {
  auto p = std::make_unique<Prepared>();
  std::vector<std::vector<std::byte>> patterns;  // alive until the upload finishes
  StagedUpload upload(device_);
  auto make = [&](std::vector<vk::Buffer>& list, const Buffer& b, const Tensor* content) {
    list.emplace_back(device_, size_t(std::max<uint64_t>(b.elements * storage_element_bytes(b.storage), 4)));
    if (content != nullptr && content->nbytes() > 0) {
      VKG_CHECK(content->nbytes() <= list.back().size(),
                "plan input of " << content->nbytes() << " bytes for a buffer of " << list.back().size());
      upload.add(list.back(), content->raw(), content->nbytes());
    } else {
      patterns.push_back(fill_pattern(b.storage, b.elements));
      upload.add(list.back(), patterns.back().data(), patterns.back().size());
    }
  };
  // StagedUpload keeps pointers to the buffers until finish(): no reallocation until then.
  patterns.reserve(inputs.size() + outputs.size());
  p->in_buffers.reserve(inputs.size());
  p->out_buffers.reserve(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    make(p->in_buffers, inputs[i], i < contents.size() ? contents[i] : nullptr);
  for (const Buffer& b : outputs) make(p->out_buffers, b, nullptr);
  p->weights.reserve(plan.weights.size());
  for (const Tensor& w : plan.weights) {
    p->weights.emplace_back(device_, std::max<size_t>(w.nbytes(), 4), vk::BufferUse::HostWrite);
    upload.add(p->weights.back(), w.raw(), w.nbytes());
  }
  upload.finish();
  for (uint64_t bytes : plan.scratch_bytes) p->scratch.emplace_back(device_, size_t(std::max<uint64_t>(bytes, 4)));

  for (const Dispatch& d : plan.dispatches) {
    std::vector<const vk::Buffer*> bound;
    for (const BindingRef& b : d.bindings) {
      std::vector<vk::Buffer>* list = nullptr;
      switch (b.kind) {
        case BindingRef::Kind::Input:
          list = &p->in_buffers;
          break;
        case BindingRef::Kind::Output:
          list = &p->out_buffers;
          break;
        case BindingRef::Kind::Weight:
          list = &p->weights;
          break;
        case BindingRef::Kind::Scratch:
          list = &p->scratch;
          break;
      }
      VKG_CHECK(b.index < list->size(),
                "plan binds " << binding_kind_name(b.kind) << " " << b.index << ", which the layer does not have");
      bound.push_back(&(*list)[b.index]);
    }
    const ComputePipeline& pipe = pipeline(d);
    p->steps.push_back({&pipe, std::make_unique<DescriptorSet>(device_, pipe, bound), &d});
  }
  return p;
}

std::vector<Tensor> VulkanPlanTimer::run(const LayerPlan& plan, const std::vector<Tensor>& inputs,
                                         const std::vector<Buffer>& outputs, bool inject_fault) {
  std::vector<Buffer> forms;
  std::vector<const Tensor*> contents;
  for (const Tensor& t : inputs) {
    forms.push_back({t.dtype() == DType::Float16 ? StorageType::F16
                     : t.dtype() == DType::Int32 ? StorageType::I32
                                                 : StorageType::F32,
                     uint64_t(t.size())});
    contents.push_back(&t);
  }
  const std::unique_ptr<Prepared> p = prepare(plan, forms, outputs, contents);
  std::vector<std::unique_ptr<DescriptorSet>> fault_sets;  // alive until the submission finishes
  ComputeCommands cmd(device_, 2);
  cmd.begin();
  p->record(cmd);
  for (size_t i = 0; i < outputs.size() && inject_fault; ++i) {
    if (outputs[i].elements == 0) continue;
    const Dispatch d = fault_dispatch(outputs[i].storage, outputs[i].elements, device_.info());
    const ComputePipeline& pipe = pipeline(d);
    const vk::Buffer* target = &p->out_buffers[i];
    fault_sets.push_back(std::make_unique<DescriptorSet>(device_, pipe, std::span(&target, 1)));
    cmd.dispatch(pipe, *fault_sets.back(), d.groups[0], d.groups[1], d.groups[2], d.push.data(),
                 uint32_t(d.push.size() * 4));
    cmd.barrier();
  }
  cmd.submit_and_wait(kProbeTimeout);
  std::vector<Tensor> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const DType dtype = outputs[i].storage == StorageType::F16   ? DType::Float16
                        : outputs[i].storage == StorageType::I32 ? DType::Int32
                                                                 : DType::Float32;
    Tensor t(dtype, {int64_t(outputs[i].elements)});
    if (t.nbytes() > 0) p->out_buffers[i].download(t.raw(), t.nbytes());
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<double> VulkanPlanTimer::time(const LayerPlan& plan, const std::vector<Buffer>& inputs,
                                          const std::vector<Buffer>& outputs, int warmup, int samples,
                                          double known_run_ns) {
  const std::unique_ptr<Prepared> prepared = prepare(plan, inputs, outputs, {});
  auto record_runs = [&](ComputeCommands& cmd, int runs, bool timed,
                         std::vector<std::pair<uint32_t, uint32_t>>& marks) {
    for (int r = 0; r < runs; ++r) {
      const uint32_t t0 = timed ? cmd.write_timestamp() : 0;
      prepared->record(cmd);
      if (timed) marks.emplace_back(t0, cmd.write_timestamp());
    }
  };

  // One probe run decides how many samples fit in the budget, unless a run's time is known
  // (the builder's later passes). A timeout poisons the device for the rest of the build, so the
  // probe (which also pays the driver's pipeline compilation on lavapipe) gets a generous limit
  // and the sampled runs a limit scaled from the probe.
  std::vector<std::pair<uint32_t, uint32_t>> marks;
  const bool kept_busy = last_end_ && std::chrono::steady_clock::now() - *last_end_ < kShortIdle;
  double probe_ns = known_run_ns;
  if (probe_ns <= 0) {
    ComputeCommands probe(device_, 2);
    probe.begin();
    record_runs(probe, 1, true, marks);
    probe.submit_and_wait(kProbeTimeout);
    probe_ns = probe.elapsed_ns(marks[0].first, marks[0].second);
  }
  if (probe_ns > kSlowRunNs) {
    samples = std::clamp(int(4 * kSlowRunNs / probe_ns), 1, samples);
    warmup = 0;
  }
  // Counted from the probe, which ran at whatever clock the idle gap before it left.
  if (min_warmup_ns_ > 0) {
    const double runs = std::ceil((kept_busy ? min_warmup_ns_ / 10 : min_warmup_ns_) / std::max(probe_ns, 1.0));
    warmup = std::max(warmup, int(std::min(runs, double(kMaxWarmupRuns))));
  }
  marks.clear();
  ComputeCommands cmd(device_, uint32_t(2 * samples));
  cmd.begin();
  record_runs(cmd, warmup, false, marks);
  record_runs(cmd, samples, true, marks);
  const auto expected = std::chrono::milliseconds(int64_t(4 * probe_ns * (warmup + samples) / 1e6));
  cmd.submit_and_wait(std::max(ComputeCommands::kDefaultTimeout, expected));
  last_end_ = std::chrono::steady_clock::now();
  std::vector<double> out;
  for (const auto& [a, b] : marks) out.push_back(cmd.elapsed_ns(a, b));
  // Where a driver compiles at the first dispatch, inside the timed commands (lavapipe), the probe
  // run less a later one is the compile: what a cold build's per-shader cost adds up from.
  if (known_run_ns <= 0 && Logger::get().enabled(Severity::ExtraVerbose) && !out.empty()) {
    std::ostringstream shaders;  // "shader[spec,...] ..."
    for (const Dispatch& d : plan.dispatches) {
      shaders << (&d == &plan.dispatches.front() ? "" : " ") << d.shader << '[';
      for (size_t i = 0; i < d.spec.size(); ++i) shaders << (i ? "," : "") << d.spec[i].value;
      shaders << ']';
    }
    VKG_EXTRA_VERBOSE("First run " << probe_ns / 1e6 << " ms, then " << *std::min_element(out.begin(), out.end()) / 1e6
                                   << " ms | " << shaders.str());
  }
  return out;
}

}  // namespace vkg::vk
