#include "runtime/vulkan/spirv_specialize.h"

#include <spirv-tools/optimizer.hpp>

#include <unordered_map>

#include "runtime/vulkan/compute_pipeline.h"

namespace vkg::vk {

std::optional<std::vector<uint32_t>> specialize_spirv(std::span<const uint32_t> spirv,
                                                      std::span<const SpecConstant> spec) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> values;
  for (const SpecConstant& c : spec) values[c.id] = {c.value};
  spvtools::Optimizer optimizer(SPV_ENV_VULKAN_1_2);
  optimizer.SetMessageConsumer([](spv_message_level_t, const char*, const spv_position_t&, const char*) {});
  // Freeze the values, fold what depends on them (the workgroup size, array lengths), then
  // drop the branches and functions they rule out and the code left dead.
  optimizer.RegisterPass(spvtools::CreateSetSpecConstantDefaultValuePass(values))
      .RegisterPass(spvtools::CreateFreezeSpecConstantValuePass())
      .RegisterPass(spvtools::CreateFoldSpecConstantOpAndCompositePass())
      .RegisterPass(spvtools::CreateUnifyConstantPass())
      .RegisterPass(spvtools::CreateCCPPass())
      .RegisterPass(spvtools::CreateDeadBranchElimPass())
      .RegisterPass(spvtools::CreateBlockMergePass())
      .RegisterPass(spvtools::CreateEliminateDeadFunctionsPass())
      .RegisterPass(spvtools::CreateAggressiveDCEPass());
  spvtools::OptimizerOptions options;
  options.set_run_validator(false);  // validated when the shaders were built; the layer checks the result
  std::vector<uint32_t> specialized;
  if (!optimizer.Run(spirv.data(), spirv.size(), &specialized, options) || specialized.empty()) return std::nullopt;
  return specialized;
}

}  // namespace vkg::vk
