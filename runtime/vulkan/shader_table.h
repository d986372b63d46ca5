// The SPIR-V of every shader in shaders/, compiled and validated at build time
// (cmake/shaders.cmake) and embedded in the library. Free of Vulkan headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkg::vk {

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

// True when the SPIR-V declares a specialization constant with this constant_id
// (an OpDecorate SpecId): a dispatch may set only those and rely on the effect.
bool declares_spec_constant(std::span<const uint32_t> spirv, uint32_t id);

// True when the SPIR-V synchronizes the invocations of a workgroup (an OpControlBarrier of
// workgroup scope: shared-memory tiles).
bool synchronizes_workgroup(std::span<const uint32_t> spirv);

// The bindings of descriptor set 0 that the SPIR-V declares as uniform texel buffers
// (GLSL samplerBuffer or textureBuffer), as a bit mask; every other binding is a storage buffer.
// Throws vkg::Error for a texel buffer at binding 32 or above.
uint32_t texel_buffer_bindings(std::span<const uint32_t> spirv);

// `spirv` with the SignedZeroInfNanPreserve execution mode (SPIR-V 1.4 float controls) on every
// entry point, for 32-bit floats and, with `fp16` and where the module declares Float16, 16-bit
// ones: without it a driver may assume that no value is NaN or infinite and fold NaN away
// (NVIDIA's compiled Relu's `v < 0 ? 0 : v` and a max pool's compare-and-select into fmax, which
// returns the other operand of a NaN). Returns the module unchanged when it already declares the mode.
std::vector<uint32_t> preserving_nan(std::span<const uint32_t> spirv, bool fp16);

// The names of every embedded variant.
std::vector<std::string> builtin_shader_names();

}  // namespace vkg::vk
