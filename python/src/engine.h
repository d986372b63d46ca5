// vkgraphy.Engine: a Vulkan engine with the device it runs on, built from a model (the builder's
// options as keyword arguments) or loaded from an engine file, and run from numpy arrays.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/engine/builder.h"
#include "runtime/engine/engine.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/executor.h"

namespace vkg::python {

class PyEngine {
 public:
  PyEngine(std::unique_ptr<vk::Context> context, Engine engine, std::optional<BuildResult> build);
  ~PyEngine();

  // Runs the engine once: every engine input from `feed`, each output as a new array, in engine order.
  pybind11::dict infer(const pybind11::dict& feed);
  void save(const std::string& path) const;
  pybind11::bytes serialize() const;
  void close();  // frees the device's resources; the engine cannot run after

  const Engine& engine() const { return engine_; }
  const std::optional<BuildResult>& build() const { return build_; }
  std::string device_name() const;
  double last_device_time() const { return last_device_s_; }
  double last_inference_time() const { return last_wall_s_; }

 private:
  vk::EngineExecutor& executor();

  std::unique_ptr<vk::Context> context_;
  Engine engine_;
  std::optional<BuildResult> build_;  // the build's replay and statistics, when built here
  std::unique_ptr<vk::EngineExecutor> executor_;  // made by the first infer
  std::mutex mutex_;                  // one inference at a time
  double last_device_s_ = 0, last_wall_s_ = 0;
};

void bind_engine(pybind11::module_& m);

}  // namespace vkg::python
