// SPIR-V as text, through SPIRV-Tools (what `spirv-dis` prints). Used by
// `vkgraphy inspect model --show spirv` to show the shaders of an engine.
// Free of Vulkan headers.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vkg::vk {

// The assembly text of a SPIR-V module: a header comment (version, generator,
// bound) then one instruction per line with friendly names ("%main = OpFunction
// ..."), ending with a newline. Throws vkg::Error with SPIRV-Tools' diagnostic
// when the words are not a SPIR-V module it can decode.
std::string disassemble_spirv(std::span<const uint32_t> words);

}  // namespace vkg::vk
