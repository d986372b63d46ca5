// Host specialization of SPIR-V (runtime/vulkan/spirv_specialize.h): the result is valid
// Vulkan SPIR-V without the specialization constants it was given, smaller where they rule
// code out, and a module the optimizer cannot read is declined, not an exception.
#include <gtest/gtest.h>

#include <spirv-tools/libspirv.hpp>

#include <string>
#include <vector>

#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/shader_table.h"
#include "runtime/vulkan/spirv_disassembly.h"
#include "runtime/vulkan/spirv_specialize.h"
#include "tests/unit/text_util.h"

namespace vkg::vk {
namespace {

bool valid_for_vulkan(const std::vector<uint32_t>& words, std::string* messages) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  tools.SetMessageConsumer([messages](spv_message_level_t, const char*, const spv_position_t&, const char* m) {
    *messages += std::string(m) + "\n";
  });
  spvtools::ValidatorOptions options;
  options.SetScalarBlockLayout(true);
  return tools.Validate(words.data(), words.size(), options);
}

TEST(SpirvSpecialize, FoldsTheConstantsAndDropsWhatTheyRuleOut) {
  const std::span<const uint32_t> binary = builtin_shader("elementwise/binary.f32");
  // Add (op 0) of two contiguous float tensors of rank 1, 64 invocations a workgroup, one element each.
  const std::vector<SpecConstant> spec = {SpecConstant::u32(0, 64), SpecConstant::u32(1, 1),
                                          SpecConstant::u32(2, 0),  SpecConstant::u32(8, 0),
                                          SpecConstant::u32(9, 0),  SpecConstant::u32(13, 1)};
  const auto specialized = specialize_spirv(binary, spec);
  ASSERT_TRUE(specialized.has_value());
  std::string messages;
  EXPECT_TRUE(valid_for_vulkan(*specialized, &messages)) << messages;
  const std::string before = disassemble_spirv(binary), after = disassemble_spirv(*specialized);
  EXPECT_GT(test::count_occurrences(before, "SpecId"), 6u);
  EXPECT_EQ(test::count_occurrences(after, "SpecId"), 0u) << "every constant is frozen, given or not";
  EXPECT_LT(specialized->size() * 3, binary.size()) << "the other ops' code is gone";
  EXPECT_EQ(test::count_occurrences(after, "OpSpecConstant"), 0u);
}

TEST(SpirvSpecialize, KeepsTheWorkgroupSizeItWasGiven) {
  const std::span<const uint32_t> add = builtin_shader("elementwise/add.f32");
  const auto specialized = specialize_spirv(add, std::vector<SpecConstant>{SpecConstant::u32(0, 96)});
  ASSERT_TRUE(specialized.has_value());
  const std::string text = disassemble_spirv(*specialized);
  EXPECT_NE(text.find("BuiltIn WorkgroupSize"), std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find("OpConstant %uint 96"), std::string::npos) << text.substr(0, 2000);
}

TEST(SpirvSpecialize, DeclinesWhatItCannotRead) {
  const std::vector<uint32_t> garbage = {0x07230203u, 0x00010500u, 0, 5, 0, 0xdeadbeefu, 42};
  EXPECT_FALSE(specialize_spirv(garbage, std::vector<SpecConstant>{SpecConstant::u32(0, 64)}).has_value());
  EXPECT_FALSE(specialize_spirv(std::vector<uint32_t>{}, std::vector<SpecConstant>{}).has_value());
}

}  // namespace
}  // namespace vkg::vk
