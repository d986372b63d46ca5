#include "runtime/vulkan/context.h"

namespace vkg::vk {

Context::Context(const DeviceOptions& options) : instance_(std::make_unique<Instance>(options.validation)) {
  PhysicalDevice physical = instance_->select(options.device);
  if (options.disable_fp16) physical.info.shader_float16 = physical.info.storage_buffer_16bit = false;
  device_ = std::make_unique<Device>(*instance_, physical);
  instance_->check_validation("opening Vulkan device '" + device_->info().name + "'");
}

Context::~Context() {
  if (device_ != nullptr && device_->hung()) {
    (void)device_.release();
    (void)instance_.release();
  }
}

}  // namespace vkg::vk
