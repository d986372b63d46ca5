// What the Vulkan layer does to an embedded shader's SPIR-V
// (runtime/engine/shader_library.h) before it makes a pipeline of it: which
// bindings are texel buffers, and the NaN-preserving execution mode. Free of
// Vulkan headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/engine/shader_library.h"

namespace vkg::vk {

// The embedded shaders (runtime/engine/shader_library.h), by the names the Vulkan layer uses.
using vkg::builtin_shader;
using vkg::builtin_shader_names;
using vkg::builtin_shaders;
using vkg::declares_spec_constant;
using vkg::ShaderBinary;
using vkg::synchronizes_workgroup;

// The bindings of descriptor set 0 that the SPIR-V declares as uniform texel buffers
// (GLSL samplerBuffer or textureBuffer), as a bit mask; every other binding is a storage buffer.
// Throws vkg::Error for a texel buffer at binding 32 or above.
uint32_t texel_buffer_bindings(std::span<const uint32_t> spirv);

// The bindings of descriptor set 0 that the SPIR-V never writes, as a bit mask: its uniform texel
// buffers, and storage buffers declared readonly (NonWritable on the variable or on every member of
// its block). The executor needs no barrier between dispatches that only read the same memory.
uint32_t read_only_bindings(std::span<const uint32_t> spirv);

// Which cooperative-matrix extension a shader's SPIR-V needs (its CooperativeMatrixNV or
// CooperativeMatrixKHR capability), if any.
enum class CooperativeMatrixNeed { None, Nv, Khr };
CooperativeMatrixNeed cooperative_matrix_need(std::span<const uint32_t> spirv);

// `spirv` with the SignedZeroInfNanPreserve execution mode (SPIR-V 1.4 float controls) on every
// entry point, for 32-bit floats and, with `fp16` and where the module declares Float16, 16-bit
// ones: without it a driver may assume that no value is NaN or infinite and fold NaN away
// (NVIDIA's compiled Relu's `v < 0 ? 0 : v` and a max pool's compare-and-select into fmax, which
// returns the other operand of a NaN). Returns the module unchanged when it already declares the mode.
std::vector<uint32_t> preserving_nan(std::span<const uint32_t> spirv, bool fp16);

}  // namespace vkg::vk
