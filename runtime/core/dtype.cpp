#include "runtime/core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define VKG_HAVE_F16C_PATH 1
#endif

namespace vkg {

namespace {

// The F16C kernels convert whole groups of eight and return how many values they did; without
// the instructions (another architecture, an older CPU) none.
#ifdef VKG_HAVE_F16C_PATH
bool cpu_has_f16c() {
  // F16C from CPUID leaf 1 (ECX bit 29): clang before 15 does not know __builtin_cpu_supports("f16c").
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  }();
  return has;
}

__attribute__((target("avx,f16c"))) size_t floats_to_halves_f16c(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  return i;
}

__attribute__((target("avx,f16c"))) size_t halves_to_floats_f16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  return i;
}
#else
bool cpu_has_f16c() { return false; }
size_t floats_to_halves_f16c(const float*, uint16_t*, size_t) { return 0; }
size_t halves_to_floats_f16c(const uint16_t*, float*, size_t) { return 0; }
#endif

// `n` values: the F16C kernel Fast where the CPU has it, One value at a time for the rest (template
// arguments, so that One is called directly and inlined).
template <auto Fast, auto One, class S, class D> void convert_array(const S* src, D* dst, size_t n) {
  for (size_t i = cpu_has_f16c() ? Fast(src, dst, n) : 0; i < n; ++i) dst[i] = One(src[i]);
}

}  // namespace

void floats_to_halves(const float* src, uint16_t* dst, size_t n) {
  convert_array<floats_to_halves_f16c, float_to_half>(src, dst, n);
}

void halves_to_floats(const uint16_t* src, float* dst, size_t n) {
  convert_array<halves_to_floats_f16c, half_to_float>(src, dst, n);
}

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
