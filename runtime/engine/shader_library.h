// The compiled shaders that tactics name (DESIGN.md, "Layout"): the SPIR-V of
// every shader in shaders/, compiled and validated at build time
// (cmake/shaders.cmake) and embedded in the library, looked up by variant
// name, and the facts about a module that the builder reads (which
// specialization constants it declares, whether it synchronizes a workgroup).
// The engine file stores these words; the Vulkan layer makes pipelines of them
// (runtime/vulkan/shader_table.h). Free of Vulkan headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkg {

// One compiled shader variant, named "<dir>/<file>.<precision>", e.g. "elementwise/add.f32".
struct ShaderBinary {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};

// Every embedded shader variant, sorted by source path (defined in the generated table).
std::span<const ShaderBinary> builtin_shaders();

// The SPIR-V words of the named variant; throws vkg::Error naming the known shaders if absent.
std::span<const uint32_t> builtin_shader(std::string_view name);

// True when the named variant is embedded (the "_khr" builds are where this build had their
// compiler: cmake/khr_shader_tools.cmake).
bool has_builtin_shader(std::string_view name);

// The names of every embedded variant.
std::vector<std::string> builtin_shader_names();

// True when the SPIR-V declares a specialization constant with this constant_id
// (an OpDecorate SpecId): a dispatch may set only those and rely on the effect.
bool declares_spec_constant(std::span<const uint32_t> spirv, uint32_t id);

// True when the SPIR-V synchronizes the invocations of a workgroup (an OpControlBarrier of
// workgroup scope: shared-memory tiles).
bool synchronizes_workgroup(std::span<const uint32_t> spirv);

}  // namespace vkg
