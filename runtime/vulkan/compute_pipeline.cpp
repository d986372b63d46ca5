#include "runtime/vulkan/compute_pipeline.h"

#include <sstream>

#include <bit>

#include <algorithm>

#include <utility>

#include "runtime/vulkan/vk_check.h"

namespace vkg::vk {

ComputePipeline::ComputePipeline(Device& device, std::span<const uint32_t> spirv, PipelineDesc desc)
    : device_(&device), desc_(std::move(desc)) {
  const DeviceInfo& info = device.info();
  VKG_CHECK(!spirv.empty() && spirv[0] == 0x07230203u, "pipeline '" << desc_.name << "': not SPIR-V (bad magic)");
  VKG_CHECK(desc_.storage_buffers <= info.max_storage_buffers_per_stage,
            "pipeline '" << desc_.name << "': " << desc_.storage_buffers << " storage buffers exceed the device's "
                         << info.max_storage_buffers_per_stage);
  VKG_CHECK(desc_.push_constant_bytes % 4 == 0 && desc_.push_constant_bytes <= info.max_push_constants_bytes,
            "pipeline '" << desc_.name << "': " << desc_.push_constant_bytes
                         << " bytes of push constants (must be a multiple of 4, at most "
                         << info.max_push_constants_bytes << ")");
  if (desc_.subgroup_size != 0) {
    const uint32_t size = desc_.subgroup_size;
    VKG_CHECK(info.subgroup_size_control && size >= info.min_subgroup_size && size <= info.max_subgroup_size &&
                  std::has_single_bit(size),
              "pipeline '" << desc_.name << "' requires subgroups of " << size << " invocations, which '" << info.name
                           << "' cannot give (subgroup size control "
                           << (info.subgroup_size_control ? "from " + std::to_string(info.min_subgroup_size) + " to " +
                                                                std::to_string(info.max_subgroup_size)
                                                          : std::string("unavailable or switched off"))
                           << ")");
  }
  VkDevice dev = device.handle();
  try {
    VkShaderModuleCreateInfo module{};
    module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    module.codeSize = spirv.size_bytes();
    module.pCode = spirv.data();
    VKG_VK_CHECK(vkCreateShaderModule(dev, &module, nullptr, &module_), "pipeline '" << desc_.name << "': shader module");

    std::vector<VkDescriptorSetLayoutBinding> bindings(desc_.storage_buffers);
    for (uint32_t i = 0; i < desc_.storage_buffers; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo set_layout{};
    set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set_layout.bindingCount = uint32_t(bindings.size());
    set_layout.pBindings = bindings.data();
    VKG_VK_CHECK(vkCreateDescriptorSetLayout(dev, &set_layout, nullptr, &set_layout_),
                 "pipeline '" << desc_.name << "': descriptor set layout");

    VkPushConstantRange push{};
    push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    push.size = desc_.push_constant_bytes;
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &set_layout_;
    layout.pushConstantRangeCount = desc_.push_constant_bytes > 0 ? 1 : 0;
    layout.pPushConstantRanges = &push;
    VKG_VK_CHECK(vkCreatePipelineLayout(dev, &layout, nullptr, &layout_), "pipeline '" << desc_.name << "': layout");

    std::vector<VkSpecializationMapEntry> entries;
    std::vector<uint32_t> values;
    for (const SpecConstant& c : desc_.specialization) {
      entries.push_back({c.id, uint32_t(values.size() * sizeof(uint32_t)), sizeof(uint32_t)});
      values.push_back(c.value);
    }
    VkSpecializationInfo spec{};
    spec.mapEntryCount = uint32_t(entries.size());
    spec.pMapEntries = entries.data();
    spec.dataSize = values.size() * sizeof(uint32_t);
    spec.pData = values.data();

    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{};
    subgroup.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO;
    subgroup.requiredSubgroupSize = desc_.subgroup_size;
    VkComputePipelineCreateInfo pipeline{};
    pipeline.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    if (desc_.subgroup_size != 0) {
      pipeline.stage.pNext = &subgroup;
      const auto local = std::find_if(desc_.specialization.begin(), desc_.specialization.end(),
                                      [](const SpecConstant& c) { return c.id == 0; });
      if (local != desc_.specialization.end() && local->value % desc_.subgroup_size == 0)
        pipeline.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    }
    pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline.stage.module = module_;
    pipeline.stage.pName = "main";
    pipeline.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
    pipeline.layout = layout_;
    VKG_VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &pipeline, nullptr, &pipeline_),
                 "pipeline '" << desc_.name << "': creating the compute pipeline");
  } catch (...) {
    release();
    throw;
  }
}

PipelineDesc pipeline_desc(const Dispatch& d) {
  PipelineDesc desc;
  desc.name = d.shader;
  desc.storage_buffers = uint32_t(d.bindings.size());
  desc.push_constant_bytes = uint32_t(d.push.size() * 4);
  for (const SpecValue& s : d.spec) desc.specialization.push_back(SpecConstant{s.id, s.value});
  desc.subgroup_size = d.subgroup_size;
  return desc;
}

std::string pipeline_key(const PipelineDesc& desc) {
  std::ostringstream key;
  key << desc.name << '|' << desc.storage_buffers << '|' << desc.push_constant_bytes << "|sg" << desc.subgroup_size;
  for (const SpecConstant& s : desc.specialization) key << '|' << s.id << '=' << s.value;
  return key.str();
}

ComputePipeline::~ComputePipeline() { release(); }

ComputePipeline::ComputePipeline(ComputePipeline&& other) noexcept
    : device_(other.device_),
      desc_(std::move(other.desc_)),
      module_(std::exchange(other.module_, VK_NULL_HANDLE)),
      set_layout_(std::exchange(other.set_layout_, VK_NULL_HANDLE)),
      layout_(std::exchange(other.layout_, VK_NULL_HANDLE)),
      pipeline_(std::exchange(other.pipeline_, VK_NULL_HANDLE)) {}

ComputePipeline& ComputePipeline::operator=(ComputePipeline&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    desc_ = std::move(other.desc_);
    module_ = std::exchange(other.module_, VK_NULL_HANDLE);
    set_layout_ = std::exchange(other.set_layout_, VK_NULL_HANDLE);
    layout_ = std::exchange(other.layout_, VK_NULL_HANDLE);
    pipeline_ = std::exchange(other.pipeline_, VK_NULL_HANDLE);
  }
  return *this;
}

void ComputePipeline::release() {
  if (device_ == nullptr || device_->hung()) return;
  VkDevice dev = device_->handle();
  if (pipeline_ != VK_NULL_HANDLE) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (module_ != VK_NULL_HANDLE) vkDestroyShaderModule(dev, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

DescriptorSet::DescriptorSet(Device& device, const ComputePipeline& pipeline, std::span<const Buffer* const> buffers)
    : device_(&device) {
  const PipelineDesc& desc = pipeline.desc();
  VKG_CHECK(buffers.size() == desc.storage_buffers, "pipeline '" << desc.name << "' takes " << desc.storage_buffers
                                                                 << " storage buffers, got " << buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    VKG_CHECK(buffers[i] != nullptr && buffers[i]->handle() != VK_NULL_HANDLE,
              "pipeline '" << desc.name << "': binding " << i << " has no buffer");
    VKG_CHECK(buffers[i]->size() <= device.info().max_storage_buffer_range,
              "pipeline '" << desc.name << "': binding " << i << " is " << buffers[i]->size()
                           << " bytes, above the device's maxStorageBufferRange of "
                           << device.info().max_storage_buffer_range);
  }
  VkDevice dev = device.handle();
  try {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(1, desc.storage_buffers)};
    VkDescriptorPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool.maxSets = 1;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    VKG_VK_CHECK(vkCreateDescriptorPool(dev, &pool, nullptr, &pool_), "pipeline '" << desc.name << "': descriptor pool");

    VkDescriptorSetLayout layout = pipeline.set_layout();
    VkDescriptorSetAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = pool_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VKG_VK_CHECK(vkAllocateDescriptorSets(dev, &alloc, &set_), "pipeline '" << desc.name << "': descriptor set");

    std::vector<VkDescriptorBufferInfo> infos(buffers.size());
    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      infos[i] = {buffers[i]->handle(), 0, VK_WHOLE_SIZE};
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = set_;
      writes[i].dstBinding = uint32_t(i);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(dev, uint32_t(writes.size()), writes.data(), 0, nullptr);
  } catch (...) {
    release();
    throw;
  }
}

DescriptorSet::~DescriptorSet() { release(); }

DescriptorSet::DescriptorSet(DescriptorSet&& other) noexcept
    : device_(other.device_),
      pool_(std::exchange(other.pool_, VK_NULL_HANDLE)),
      set_(std::exchange(other.set_, VK_NULL_HANDLE)) {}

DescriptorSet& DescriptorSet::operator=(DescriptorSet&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    pool_ = std::exchange(other.pool_, VK_NULL_HANDLE);
    set_ = std::exchange(other.set_, VK_NULL_HANDLE);
  }
  return *this;
}

void DescriptorSet::release() {
  if (device_ == nullptr || device_->hung()) return;
  // Destroying the pool frees its set.
  if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_->handle(), pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
  set_ = VK_NULL_HANDLE;
}

}  // namespace vkg::vk
