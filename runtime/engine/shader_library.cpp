#include "runtime/engine/shader_library.h"

#include <cstddef>
#include <map>

#include "runtime/core/error.h"

namespace vkg {

std::span<const uint32_t> builtin_shader(std::string_view name) {
  for (const ShaderBinary& s : builtin_shaders()) {
    if (name == s.name) return {s.words, s.word_count};
  }
  std::string known;
  for (const std::string& n : builtin_shader_names()) known += (known.empty() ? "" : ", ") + n;
  VKG_THROW("no built-in shader named '" << name << "' (known: " << known << ")");
}

bool has_builtin_shader(std::string_view name) {
  for (const ShaderBinary& s : builtin_shaders()) {
    if (name == s.name) return true;
  }
  return false;
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

bool synchronizes_workgroup(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpControlBarrier = 224, kOpConstant = 43, kScopeWorkgroup = 2, kHeaderWords = 5;
  std::map<uint32_t, uint32_t> constants;  // result id -> value of 32-bit integer constants
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0 || i + words > spirv.size()) break;  // malformed: the driver will say so
    const uint32_t* w = spirv.data() + i;
    if (opcode == kOpConstant && words == 4) constants[w[2]] = w[3];
    if (opcode == kOpControlBarrier && words >= 2) {
      auto scope = constants.find(w[1]);  // the execution scope is an id of a constant
      if (scope != constants.end() && scope->second == kScopeWorkgroup) return true;
    }
    i += words;
  }
  return false;
}

}  // namespace vkg
