// Everything a tool needs to compute on Vulkan, opened from DeviceOptions: the
// instance (with validation when asked) and the selected logical device.
#pragma once

#include <memory>
#include <string>

#include "runtime/vulkan/device.h"
#include "runtime/vulkan/instance.h"

namespace vkg::vk {

class Context {
 public:
  // Creates the instance, selects the device by options.device and creates it.
  // Throws Error when there is no driver, no match, or validation reports a problem.
  explicit Context(const DeviceOptions& options);
  // If the device hung (work never finished, see ComputeCommands), the device and instance are leaked:
  // destroying them under running work could hang or crash.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Instance& instance() { return *instance_; }
  Device& device() { return *device_; }
  // Instance::check_validation: throws Error if validation reported anything so far.
  void check_validation(const std::string& where) { instance_->check_validation(where); }

 private:
  // Declared in destruction order: the device goes before its instance.
  std::unique_ptr<Instance> instance_;
  std::unique_ptr<Device> device_;
};

}  // namespace vkg::vk
