// What every tactic family writes the same way when it fills specialization and push constants.
#pragma once

#include <bit>
#include <cstdint>

namespace vkg {

// Workgroup size of the thread-per-element shaders (their specialization constant 0).
inline constexpr uint32_t kLocalSize = 64;

// A size, stride or offset as the 32-bit value a push constant holds.
inline uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// A float as the bits of a uint push constant (the shader reads it with uintBitsToFloat).
inline uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }

}  // namespace vkg
