#include "runtime/core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace vkg {

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal half -> normal float
      float f = std::ldexp(float(mant), -24);
      bits = std::bit_cast<uint32_t>(f) | sign;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {                                  // subnormal or zero in half
    // Round to nearest even at 2^-24 granularity.
    float a = std::bit_cast<float>(abs);
    float scaled = a * 16777216.0f;  // 2^24
    float r = std::nearbyint(scaled);
    return uint16_t(sign | uint16_t(r));
  }
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1;
  return uint16_t(sign | h);
}

Half::Half(float f) : bits(float_to_half(f)) {}
Half::operator float() const { return half_to_float(bits); }

BFloat16::BFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    bits = uint16_t((x >> 16) | 0x40u);
  } else {
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    bits = uint16_t((x + rounding) >> 16);
  }
}
BFloat16::operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }

size_t dtype_size(DType dt) {
  return visit_dtype(dt, []<typename T>() { return sizeof(T); });
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::Float32: return "float32";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float64: return "float64";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view n) {
  static const struct { const char* name; DType dt; } table[] = {
      {"float32", DType::Float32}, {"float", DType::Float32},   {"fp32", DType::Float32},
      {"float16", DType::Float16}, {"half", DType::Float16},    {"fp16", DType::Float16},
      {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16}, {"float64", DType::Float64},
      {"double", DType::Float64},  {"int8", DType::Int8},       {"int16", DType::Int16},
      {"int32", DType::Int32},     {"int64", DType::Int64},     {"uint8", DType::UInt8},
      {"uint16", DType::UInt16},   {"uint32", DType::UInt32},   {"uint64", DType::UInt64},
      {"bool", DType::Bool},
  };
  for (const auto& e : table)
    if (n == e.name) return e.dt;
  return std::nullopt;
}

// Values of onnx::TensorProto_DataType, spelled out so this file needs no ONNX headers.
std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case 1: return DType::Float32;
    case 2: return DType::UInt8;
    case 3: return DType::Int8;
    case 4: return DType::UInt16;
    case 5: return DType::Int16;
    case 6: return DType::Int32;
    case 7: return DType::Int64;
    case 9: return DType::Bool;
    case 10: return DType::Float16;
    case 11: return DType::Float64;
    case 12: return DType::UInt32;
    case 13: return DType::UInt64;
    case 16: return DType::BFloat16;
    default: return std::nullopt;
  }
}

int32_t dtype_to_onnx(DType dt) {
  switch (dt) {
    case DType::Float32: return 1;
    case DType::UInt8: return 2;
    case DType::Int8: return 3;
    case DType::UInt16: return 4;
    case DType::Int16: return 5;
    case DType::Int32: return 6;
    case DType::Int64: return 7;
    case DType::Bool: return 9;
    case DType::Float16: return 10;
    case DType::Float64: return 11;
    case DType::UInt32: return 12;
    case DType::UInt64: return 13;
    case DType::BFloat16: return 16;
  }
  return 0;
}

bool is_floating(DType dt) {
  return dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16 || dt == DType::Float64;
}

bool is_integer(DType dt) { return !is_floating(dt) && dt != DType::Bool; }

}  // namespace vkg
