#include "runtime/vulkan/context.h"

namespace vkg::vk {

Context::Context(const DeviceOptions& options) : instance_(std::make_unique<Instance>(options.validation)) {
  device_ = std::make_unique<Device>(*instance_, instance_->select(options.device));
  instance_->check_validation("opening Vulkan device '" + device_->info().name + "'");
}

Context::~Context() {
  if (device_ != nullptr && device_->hung()) {
    (void)device_.release();
    (void)instance_.release();
  }
}

}  // namespace vkg::vk
