#include "runtime/vulkan/shader_table.h"

#include <cstddef>
#include <map>
#include <set>
#include <vector>

#include "runtime/core/error.h"

namespace vkg::vk {

uint32_t texel_buffer_bindings(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpTypeImage = 25, kOpTypeSampledImage = 27, kOpTypePointer = 32, kOpVariable = 59,
                     kOpDecorate = 71, kDecorationBinding = 33, kDimBuffer = 5, kHeaderWords = 5;
  std::map<uint32_t, uint32_t> binding_of;  // variable id -> binding
  std::set<uint32_t> texel_types, texel_pointers;
  std::vector<uint32_t> texel_variables;
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0 || i + words > spirv.size()) break;  // malformed: the driver will say so
    const uint32_t* w = spirv.data() + i;
    if (opcode == kOpDecorate && words >= 4 && w[2] == kDecorationBinding) binding_of[w[1]] = w[3];
    if (opcode == kOpTypeImage && words >= 9 && w[3] == kDimBuffer && w[7] == 1) texel_types.insert(w[1]);
    if (opcode == kOpTypeSampledImage && words >= 3 && texel_types.count(w[2])) texel_types.insert(w[1]);
    if (opcode == kOpTypePointer && words >= 4 && texel_types.count(w[3])) texel_pointers.insert(w[1]);
    if (opcode == kOpVariable && words >= 4 && texel_pointers.count(w[1])) texel_variables.push_back(w[2]);
    i += words;
  }
  uint32_t mask = 0;
  for (uint32_t v : texel_variables) {
    const auto b = binding_of.find(v);
    if (b == binding_of.end()) continue;
    VKG_CHECK(b->second < 32, "a uniform texel buffer at binding " << b->second << " (vkgraphy binds 0 to 31)");
    mask |= 1u << b->second;
  }
  return mask;
}

uint32_t read_only_bindings(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpTypeStruct = 30, kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71,
                     kOpMemberDecorate = 72, kDecorationNonWritable = 24, kDecorationBinding = 33, kHeaderWords = 5;
  std::map<uint32_t, uint32_t> binding_of, pointee, members, read_only_members;  // by id
  std::map<uint32_t, uint32_t> variable_type;                                    // variable id -> pointer type
  std::set<uint32_t> non_writable;                                               // decorated ids
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0 || i + words > spirv.size()) break;  // malformed: the driver will say so
    const uint32_t* w = spirv.data() + i;
    if (opcode == kOpDecorate && words >= 4 && w[2] == kDecorationBinding) binding_of[w[1]] = w[3];
    if (opcode == kOpDecorate && words >= 3 && w[2] == kDecorationNonWritable) non_writable.insert(w[1]);
    if (opcode == kOpMemberDecorate && words >= 4 && w[3] == kDecorationNonWritable) ++read_only_members[w[1]];
    if (opcode == kOpTypeStruct && words >= 2) members[w[1]] = words - 2;
    if (opcode == kOpTypePointer && words >= 4) pointee[w[1]] = w[3];
    if (opcode == kOpVariable && words >= 4) variable_type[w[2]] = w[1];
    i += words;
  }
  // A binding is read-only when every variable declared at it is (shaders alias one binding as
  // scalars and vectors); uniform texel buffers always are.
  const uint32_t texel = texel_buffer_bindings(spirv);
  uint32_t declared = 0, writable = 0;
  for (const auto& [variable, binding] : binding_of) {
    if (binding >= 32) continue;
    const auto type = variable_type.find(variable);
    if (type == variable_type.end()) continue;
    declared |= 1u << binding;
    const uint32_t block = pointee.count(type->second) ? pointee[type->second] : 0;
    const bool all_members = members.count(block) && members[block] > 0 && read_only_members[block] >= members[block];
    if (!non_writable.count(variable) && !all_members && !(texel >> binding & 1u)) writable |= 1u << binding;
  }
  return (declared & ~writable) | texel;
}

CooperativeMatrixNeed cooperative_matrix_need(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpCapability = 17, kCapabilityNv = 5357, kCapabilityKhr = 6022, kHeaderWords = 5;
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0 || i + words > spirv.size()) break;
    if (opcode == kOpCapability && words == 2 && spirv[i + 1] == kCapabilityNv) return CooperativeMatrixNeed::Nv;
    if (opcode == kOpCapability && words == 2 && spirv[i + 1] == kCapabilityKhr) return CooperativeMatrixNeed::Khr;
    i += words;
  }
  return CooperativeMatrixNeed::None;
}

std::vector<uint32_t> preserving_nan(std::span<const uint32_t> spirv, bool fp16) {
  constexpr uint32_t kOpCapability = 17, kOpEntryPoint = 15, kOpExecutionMode = 16, kOpExecutionModeId = 331,
                     kCapabilityFloat16 = 9, kCapabilityPreserve = 4466, kModePreserve = 4461, kHeaderWords = 5;
  std::vector<uint32_t> out(spirv.begin(), spirv.end());
  size_t capabilities_end = 0, modes_end = 0;
  bool float16 = false;
  std::vector<uint32_t> entry_points;
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0 || i + words > spirv.size()) return out;  // malformed: the driver will say so
    if (opcode == kOpCapability && words == 2) {
      if (spirv[i + 1] == kCapabilityPreserve) return out;
      float16 = float16 || spirv[i + 1] == kCapabilityFloat16;
      capabilities_end = i + words;
    }
    if (opcode == kOpEntryPoint && words >= 3) entry_points.push_back(spirv[i + 2]), modes_end = i + words;
    if (opcode == kOpExecutionMode || opcode == kOpExecutionModeId) modes_end = i + words;
    i += words;
  }
  if (capabilities_end == 0 || entry_points.empty()) return out;
  std::vector<uint32_t> modes;
  for (uint32_t id : entry_points) {
    for (uint32_t width : {32u, 16u}) {
      if (width == 16 && !(fp16 && float16)) continue;
      modes.insert(modes.end(), {4u << 16 | kOpExecutionMode, id, kModePreserve, width});
    }
  }
  // The later insertion first, so that the earlier one's position still holds.
  out.insert(out.begin() + std::ptrdiff_t(modes_end), modes.begin(), modes.end());
  out.insert(out.begin() + std::ptrdiff_t(capabilities_end), {2u << 16 | kOpCapability, kCapabilityPreserve});
  return out;
}

}  // namespace vkg::vk
