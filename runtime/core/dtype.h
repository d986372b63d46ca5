// Element types of tensors and the helpers that map them to C++ types.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace vkg {

// Conversions between IEEE half bits and float, one value at a time (whole arrays: halves_to_floats
// and floats_to_halves below). Exact, signed zeros kept; a NaN stays a NaN with the top bits of
// its payload, made quiet, as x86's F16C instructions convert it.
inline float half_to_float(uint16_t h) {
  // Exponent and mantissa moved into place and the exponent rebiased (15 -> 127); an all-ones
  // exponent (inf, NaN) goes to all ones, and zeros and subnormals are normalised by subtracting
  // the float whose bits they then hold with a zero mantissa, 2^-14.
  constexpr uint32_t kExpMask = 0x7c00u << 13;
  uint32_t bits = uint32_t(h & 0x7fffu) << 13;
  const uint32_t exp = bits & kExpMask;
  bits += (127u - 15u) << 23;
  if (exp == kExpMask) {
    bits += (128u - 16u) << 23;
    if ((h & 0x3ffu) != 0) bits |= 1u << 22;  // NaN: quiet
  } else if (exp == 0) {
    bits += 1u << 23;
    bits = std::bit_cast<uint32_t>(std::bit_cast<float>(bits) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(bits | uint32_t(h & 0x8000u) << 16);
}

// Round to nearest even; overflow to inf.
inline uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf, or NaN: quiet, the top ten bits of its payload kept
    return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
  }
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {                                  // subnormal or zero in half
    // Round to nearest even at 2^-24 granularity.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24
    return uint16_t(sign | uint16_t(std::nearbyint(scaled)));
  }
  const uint32_t mant = abs & 0x7fffffu;
  const uint32_t exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1;
  return uint16_t(sign | h);
}

// Whole arrays, as the engine converts its fp16 inputs and outputs on every run: with x86's F16C
// instructions where the CPU has them (eight values an instruction), else one value at a time;
// the same bits either way. 307,200 values to fp16 take 1.71 ms one at a time and 0.045 ms through
// Tensor::cast (build/bench/vkgraphy_host_bench, this project's 2-core machine, 2026-11-27).
void floats_to_halves(const float* src, uint16_t* dst, size_t n);
void halves_to_floats(const uint16_t* src, float* dst, size_t n);

// IEEE half precision, stored as raw bits. Arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(float_to_half(f)) {}
  operator float() const { return half_to_float(bits); }
};

// bfloat16, stored as raw bits (the top half of a float).
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  operator float() const;
};

enum class DType : uint8_t {
  Float32,
  Float16,
  BFloat16,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
};

// Size of one element in bytes.
size_t dtype_size(DType dt);
// numpy-style name: "float32", "int64", "bool", ...
const char* dtype_name(DType dt);
// Parses a numpy-style name ("float32", "fp32", "float", "int64", ...).
std::optional<DType> dtype_from_name(std::string_view name);
// ONNX TensorProto::DataType <-> DType. Unsupported ONNX types give nullopt.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
int32_t dtype_to_onnx(DType dt);
bool is_floating(DType dt);
bool is_integer(DType dt);  // signed or unsigned, not bool

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

// Calls f.template operator()<T>() with the C++ type of dt:
//   visit_dtype(t.dtype(), [&]<typename T>() { ... });
template <class F> decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int8: return f.template operator()<int8_t>();
    case DType::Int16: return f.template operator()<int16_t>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::UInt16: return f.template operator()<uint16_t>();
    case DType::UInt32: return f.template operator()<uint32_t>();
    case DType::UInt64: return f.template operator()<uint64_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  return f.template operator()<float>();  // unreachable: the switch is exhaustive
}

// Like visit_dtype, but only for types with native arithmetic (no Half/BFloat16):
// half types are computed in float by the caller converting first.
template <class T> inline constexpr bool is_half_type = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace vkg
