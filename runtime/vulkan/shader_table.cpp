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

}  // namespace vkg::vk
