#include "runtime/vulkan/plan_timer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {

namespace {

constexpr double kSlowRunNs = 20e6;
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
    case StorageType::I32: break;
  }
  return bytes;
}

}  // namespace

VulkanPlanTimer::VulkanPlanTimer(Device& device) : device_(device) {
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
  auto p = std::make_unique<ComputePipeline>(device_, builtin_shader(d.shader), std::move(desc));
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

std::vector<double> VulkanPlanTimer::time(const LayerPlan& plan, const std::vector<Buffer>& inputs,
                                          const std::vector<Buffer>& outputs, int warmup, int samples) {
  std::vector<vk::Buffer> in_buffers, out_buffers, weights, scratch;
  std::vector<std::vector<std::byte>> patterns;  // alive until the upload finishes
  StagedUpload upload(device_);
  auto make = [&](std::vector<vk::Buffer>& list, const Buffer& b) {
    list.emplace_back(device_, size_t(std::max<uint64_t>(b.elements * storage_element_bytes(b.storage), 4)));
    patterns.push_back(fill_pattern(b.storage, b.elements));
  };
  for (const Buffer& b : inputs) make(in_buffers, b);
  for (const Buffer& b : outputs) make(out_buffers, b);
  for (size_t i = 0; i < in_buffers.size(); ++i) upload.add(in_buffers[i], patterns[i].data(), patterns[i].size());
  for (size_t i = 0; i < out_buffers.size(); ++i) {
    const std::vector<std::byte>& p = patterns[in_buffers.size() + i];
    upload.add(out_buffers[i], p.data(), p.size());
  }
  weights.reserve(plan.weights.size());
  for (const Tensor& w : plan.weights) {
    weights.emplace_back(device_, std::max<size_t>(w.nbytes(), 4), vk::BufferUse::HostWrite);
    upload.add(weights.back(), w.raw(), w.nbytes());
  }
  upload.finish();
  for (uint64_t bytes : plan.scratch_bytes) scratch.emplace_back(device_, size_t(std::max<uint64_t>(bytes, 4)));

  struct Step {
    const ComputePipeline* pipeline;
    std::unique_ptr<DescriptorSet> set;
    const Dispatch* dispatch;
  };
  std::vector<Step> steps;
  for (const Dispatch& d : plan.dispatches) {
    std::vector<const vk::Buffer*> bound;
    for (const BindingRef& b : d.bindings) {
      std::vector<vk::Buffer>* list = nullptr;
      switch (b.kind) {
        case BindingRef::Kind::Input: list = &in_buffers; break;
        case BindingRef::Kind::Output: list = &out_buffers; break;
        case BindingRef::Kind::Weight: list = &weights; break;
        case BindingRef::Kind::Scratch: list = &scratch; break;
      }
      VKG_CHECK(b.index < list->size(), "plan binds " << binding_kind_name(b.kind) << " " << b.index
                                                      << ", which the layer does not have");
      bound.push_back(&(*list)[b.index]);
    }
    const ComputePipeline& p = pipeline(d);
    steps.push_back({&p, std::make_unique<DescriptorSet>(device_, p, bound), &d});
  }

  auto record_runs = [&](ComputeCommands& cmd, int runs, bool timed, std::vector<std::pair<uint32_t, uint32_t>>& marks) {
    for (int r = 0; r < runs; ++r) {
      const uint32_t t0 = timed ? cmd.write_timestamp() : 0;
      for (const Step& s : steps) {
        cmd.dispatch(*s.pipeline, *s.set, s.dispatch->groups[0], s.dispatch->groups[1], s.dispatch->groups[2],
                     s.dispatch->push.data(), uint32_t(s.dispatch->push.size() * 4));
        cmd.barrier();
      }
      if (timed) marks.emplace_back(t0, cmd.write_timestamp());
    }
  };

  // One probe run decides how many samples fit in the budget. A timeout poisons
  // the device for the rest of the build, so the probe (which also pays the
  // driver's pipeline compilation on lavapipe) gets a generous limit and the
  // sampled runs a limit scaled from the probe.
  std::vector<std::pair<uint32_t, uint32_t>> marks;
  double probe_ns = 0;
  {
    ComputeCommands probe(device_, 2);
    probe.begin();
    record_runs(probe, 1, true, marks);
    probe.submit_and_wait(kProbeTimeout);
    probe_ns = probe.elapsed_ns(marks[0].first, marks[0].second);
    if (probe_ns > kSlowRunNs) {
      samples = std::clamp(int(4 * kSlowRunNs / probe_ns), 1, samples);
      warmup = 0;
    }
  }
  marks.clear();
  ComputeCommands cmd(device_, uint32_t(2 * samples));
  cmd.begin();
  record_runs(cmd, warmup, false, marks);
  record_runs(cmd, samples, true, marks);
  const auto expected = std::chrono::milliseconds(int64_t(4 * probe_ns * (warmup + samples) / 1e6));
  cmd.submit_and_wait(std::max(ComputeCommands::kDefaultTimeout, expected));
  std::vector<double> out;
  for (const auto& [a, b] : marks) out.push_back(cmd.elapsed_ns(a, b));
  return out;
}

}  // namespace vkg::vk
