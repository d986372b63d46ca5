#include "runtime/vulkan/pipeline_pool.h"

#include <string_view>

#include "runtime/core/hash.h"

namespace vkg::vk {

namespace {

std::string pool_key(std::span<const uint32_t> spirv, const PipelineDesc& desc) {
  const std::string_view bytes(reinterpret_cast<const char*>(spirv.data()), spirv.size_bytes());
  return std::to_string(fnv1a64(bytes)) + ':' + std::to_string(spirv.size()) + '|' + pipeline_key(desc);
}

}  // namespace

std::shared_ptr<const ComputePipeline> PipelinePool::get(std::span<const uint32_t> spirv, const PipelineDesc& desc) {
  const std::string key = pool_key(spirv, desc);
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (std::shared_ptr<const ComputePipeline> found = it->second.pipeline.lock()) {
        ++hits_;
        keep(key, it->second, found);
        return found;
      }
    }
  }
  auto made = std::make_shared<const ComputePipeline>(device_, spirv, desc);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = entries_.try_emplace(key, Entry{{}, recent_.end()});
  if (std::shared_ptr<const ComputePipeline> other = it->second.pipeline.lock()) {
    keep(key, it->second, other);  // another thread made it first; ours is dropped
    return other;
  }
  ++created_;
  it->second.pipeline = made;
  keep(key, it->second, made);
  return made;
}

void PipelinePool::keep(const std::string& key, Entry& entry, std::shared_ptr<const ComputePipeline> pipeline) {
  if (capacity_ == 0) return;
  if (entry.recent != recent_.end()) recent_.erase(entry.recent);
  recent_.emplace_front(key, std::move(pipeline));
  entry.recent = recent_.begin();
  if (recent_.size() <= capacity_) return;
  // The least recently used is no longer kept; its entry stays while a user holds the pipeline.
  auto oldest = entries_.find(recent_.back().first);
  recent_.pop_back();
  oldest->second.recent = recent_.end();
  if (entries_.size() > 2 * capacity_) forget_unused();
}

void PipelinePool::forget_unused() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.recent == recent_.end() && it->second.pipeline.expired()) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t PipelinePool::kept() const {
  std::lock_guard lock(mutex_);
  return recent_.size();
}

uint64_t PipelinePool::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

uint64_t PipelinePool::created() const {
  std::lock_guard lock(mutex_);
  return created_;
}

void PipelinePool::clear() {
  std::lock_guard lock(mutex_);
  recent_.clear();
  for (auto& [key, entry] : entries_) entry.recent = recent_.end();
  forget_unused();
}

}  // namespace vkg::vk
