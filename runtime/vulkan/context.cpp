#include "runtime/vulkan/context.h"

namespace vkg::vk {

Context::Context(const DeviceOptions& options) : instance_(std::make_unique<Instance>(options.validation)) {
  PhysicalDevice physical = instance_->select(options.device);
  apply_switches(physical.info, options);
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
