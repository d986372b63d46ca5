#include "runtime/vulkan/shader_table.h"

#include "runtime/core/error.h"

namespace vkg::vk {

std::span<const uint32_t> builtin_shader(std::string_view name) {
  for (const ShaderBinary& s : builtin_shaders()) {
    if (name == s.name) return {s.words, s.word_count};
  }
  std::string known;
  for (const std::string& n : builtin_shader_names()) known += (known.empty() ? "" : ", ") + n;
  VKG_THROW("no built-in shader named '" << name << "' (known: " << known << ")");
}

std::vector<std::string> builtin_shader_names() {
  std::vector<std::string> names;
  for (const ShaderBinary& s : builtin_shaders()) names.emplace_back(s.name);
  return names;
}

bool declares_spec_constant(std::span<const uint32_t> spirv, uint32_t id) {
  constexpr uint32_t kOpDecorate = 71, kDecorationSpecId = 1, kHeaderWords = 5;
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0) return false;  // malformed: stop rather than loop
    if (opcode == kOpDecorate && words >= 4 && i + 3 < spirv.size() && spirv[i + 2] == kDecorationSpecId &&
        spirv[i + 3] == id)
      return true;
    i += words;
  }
  return false;
}

}  // namespace vkg::vk
