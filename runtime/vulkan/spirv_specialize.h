// Specializes SPIR-V on the host: the specialization constants become
// constants and the branches, functions and code they rule out are removed
// (SPIRV-Tools' optimizer), so the driver gets the shader a pipeline really
// runs, without specialization info.
//
// Why: vkgraphy's shaders are general (one elementwise shader serves every
// binary op, layout and chain, selected by constants) and lavapipe (Mesa 22.3)
// translates and optimizes the whole module to NIR before it drops what the
// constants rule out: creating an elementwise/binary.f16 pipeline took 0.33 s
// of the CPU, one from the specialized module 0.012 s, its specialization
// 0.042 s more (docs/testing.md, "Shader compilation on lavapipe"). GPU drivers specialize as they compile, so only devices whose
// profile sets host_specialization (CPU drivers) take this path.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace vkg::vk {

struct SpecConstant;

// The module with each constant of `spec` frozen at its value (constants it does not name
// keep their defaults, as in Vulkan) and what they rule out removed. nullopt when the
// optimizer cannot process the module: the caller passes the original words and the
// specialization info to the driver instead.
std::optional<std::vector<uint32_t>> specialize_spirv(std::span<const uint32_t> spirv,
                                                      std::span<const SpecConstant> spec);

}  // namespace vkg::vk
