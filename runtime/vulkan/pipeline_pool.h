// The compute pipelines of one device, shared by every engine built or run on it.
//
// A pipeline depends only on its SPIR-V, its PipelineDesc and the device, and it is never
// changed after creation, so the builder's timer and every executor on the device can use one
// object. Creating one is not cheap even when the driver's own cache has it: lavapipe translates
// SPIR-V to NIR and runs NIR's passes at every vkCreateComputePipelines (10 to 130 ms a
// pipeline), and a builder compiles a layer's winner again when the engine is run. A process
// that builds many engines (the test suites, a debug loop, a Python session) creates each
// pipeline once. The pool keeps the `capacity` pipelines used last alive after their last user
// is gone; older ones live as long as someone holds them.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "runtime/vulkan/compute_pipeline.h"

namespace vkg::vk {

class PipelinePool {
 public:
  static constexpr size_t kDefaultCapacity = 512;

  explicit PipelinePool(Device& device, size_t capacity = kDefaultCapacity) : device_(device), capacity_(capacity) {}
  PipelinePool(const PipelinePool&) = delete;
  PipelinePool& operator=(const PipelinePool&) = delete;

  // The pipeline of `spirv` and `desc`, created on first use (ComputePipeline's errors).
  // Safe to call from several threads; two threads asking for the same new pipeline at once may
  // both create it, and one of the two is kept.
  std::shared_ptr<const ComputePipeline> get(std::span<const uint32_t> spirv, const PipelineDesc& desc);

  // The pipelines kept alive without a user (at most capacity), and how many get() calls
  // found their pipeline and how many created one.
  size_t kept() const;
  uint64_t hits() const;
  uint64_t created() const;

  // Drops the pipelines kept without a user (to free their memory); those in use stay findable.
  void clear();

 private:
  using Kept = std::list<std::pair<std::string, std::shared_ptr<const ComputePipeline>>>;  // key, pipeline
  struct Entry {
    std::weak_ptr<const ComputePipeline> pipeline;
    Kept::iterator recent;  // its place in recent_; recent_.end(): not kept
  };
  // Moves the entry of `key` to the front of recent_, dropping the least recently used past capacity.
  void keep(const std::string& key, Entry& entry, std::shared_ptr<const ComputePipeline> pipeline);
  void forget_unused();  // entries whose pipeline nobody holds

  Device& device_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;                 // by SPIR-V hash and pipeline_key
  Kept recent_;                                                    // most recently used first
  uint64_t hits_ = 0, created_ = 0;
};

}  // namespace vkg::vk
