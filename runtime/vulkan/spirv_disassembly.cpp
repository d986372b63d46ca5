#include "runtime/vulkan/spirv_disassembly.h"

#include <spirv-tools/libspirv.hpp>

#include "runtime/core/error.h"

namespace vkg::vk {

std::string disassemble_spirv(std::span<const uint32_t> words) {
  // The newest environment the library knows decodes every SPIR-V version it knows.
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  std::string diagnostic;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
    if (diagnostic.empty()) diagnostic = "word " + std::to_string(position.index) + ": " + message;
  });
  std::string text;
  const uint32_t options = SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  if (!tools.Disassemble(words.data(), words.size(), &text, options))
    VKG_THROW("cannot disassemble SPIR-V (" << words.size()
                                            << " words): " << (diagnostic.empty() ? "invalid module" : diagnostic));
  return text;
}

}  // namespace vkg::vk
