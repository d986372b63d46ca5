#include "runtime/vulkan/cooperative_matrix.h"

#include <algorithm>

#include "runtime/engine/shader_library.h"
#include "runtime/vulkan/device_info.h"
#include "runtime/vulkan/instance.h"

namespace vkg::vk {

namespace {

std::string component_name(VkComponentTypeKHR t) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_KHR: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_KHR: return "f64";
    case VK_COMPONENT_TYPE_SINT8_KHR: return "s8";
    case VK_COMPONENT_TYPE_SINT16_KHR: return "s16";
    case VK_COMPONENT_TYPE_SINT32_KHR: return "s32";
    case VK_COMPONENT_TYPE_SINT64_KHR: return "s64";
    case VK_COMPONENT_TYPE_UINT8_KHR: return "u8";
    case VK_COMPONENT_TYPE_UINT16_KHR: return "u16";
    case VK_COMPONENT_TYPE_UINT32_KHR: return "u32";
    case VK_COMPONENT_TYPE_UINT64_KHR: return "u64";
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: return "bf16";
    default: return "type" + std::to_string(int(t));  // a newer type this header does not name
  }
}

std::string scope_name(VkScopeKHR s) {
  switch (s) {
    case VK_SCOPE_DEVICE_KHR: return "device";
    case VK_SCOPE_WORKGROUP_KHR: return "workgroup";
    case VK_SCOPE_SUBGROUP_KHR: return "subgroup";
    case VK_SCOPE_QUEUE_FAMILY_KHR: return "queue-family";
    default: return "scope" + std::to_string(int(s));
  }
}

// Every entry of a vkGetPhysicalDeviceCooperativeMatrixProperties{KHR,NV}-style query (empty when
// the driver lacks the function or it fails).
template <typename Props, typename Get>
std::vector<Props> enumerate(VkInstance instance, VkPhysicalDevice device, const char* function, VkStructureType type) {
  auto get = reinterpret_cast<Get>(vkGetInstanceProcAddr(instance, function));
  uint32_t count = 0;
  if (get == nullptr || get(device, &count, nullptr) != VK_SUCCESS) return {};
  std::vector<Props> props(count, Props{});
  for (Props& p : props) p.sType = type;
  if (get(device, &count, props.data()) != VK_SUCCESS) return {};
  props.resize(count);
  return props;
}

// One multiply-add in vkgraphy's terms; the NV extension's component types and scopes have the
// KHR ones' values.
CooperativeMatrixProperties described(uint32_t m, uint32_t n, uint32_t k, int a, int b, int c, int result,
                                      bool saturating, int scope) {
  return {m, n, k, component_name(VkComponentTypeKHR(a)), component_name(VkComponentTypeKHR(b)),
          component_name(VkComponentTypeKHR(c)), component_name(VkComponentTypeKHR(result)), saturating,
          scope_name(VkScopeKHR(scope))};
}

std::vector<CooperativeMatrixProperties> khr_properties(VkInstance instance, VkPhysicalDevice device) {
  std::vector<CooperativeMatrixProperties> out;
  for (const auto& p : enumerate<VkCooperativeMatrixPropertiesKHR, PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
           instance, device, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
           VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR)) {
    out.push_back(described(p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.ResultType,
                            p.saturatingAccumulation == VK_TRUE, p.scope));
  }
  return out;
}

// The fp16 shapes of VK_NV_cooperative_matrix, by the rule of the KHR ones (fp16_shapes).
std::vector<CooperativeMatrixShape> nv_shapes(VkInstance instance, VkPhysicalDevice device) {
  std::vector<CooperativeMatrixProperties> described_nv;
  for (const auto& p : enumerate<VkCooperativeMatrixPropertiesNV, PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
           instance, device, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
           VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV)) {
    described_nv.push_back(described(p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.DType, false, p.scope));
  }
  return fp16_shapes(described_nv);
}

}  // namespace

void CooperativeMatrixFeatures::chain_for_query(VkPhysicalDevice device, void**& tail) {
  khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
  nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  has_khr = has_device_extension(device, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  has_nv = has_device_extension(device, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (has_khr) *tail = &khr, tail = &khr.pNext;
  if (has_nv) *tail = &nv, tail = &nv.pNext;
}

std::vector<CooperativeMatrixShape> fp16_shapes(const std::vector<CooperativeMatrixProperties>& properties) {
  std::vector<CooperativeMatrixShape> shapes;
  for (const CooperativeMatrixProperties& p : properties) {
    if (p.a_type != "f16" || p.b_type != "f16" || p.c_type != p.result_type || p.scope != "subgroup" || p.saturating)
      continue;
    if (p.c_type != "f16" && p.c_type != "f32") continue;
    const CooperativeMatrixShape shape{p.m, p.n, p.k, p.c_type == "f32"};
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
  }
  return shapes;
}

void read_cooperative_matrices(VkInstance instance, VkPhysicalDevice device, const CooperativeMatrixFeatures& features,
                               bool memory_model, DeviceInfo& info) {
  if (features.has_khr) info.cooperative_matrix_khr_properties = khr_properties(instance, device);
  if (!memory_model || !info.fp16()) return;
  if (features.has_nv && features.nv.cooperativeMatrix) info.cooperative_matrix_nv_shapes = nv_shapes(instance, device);
  // The KHR form where the device has it and this build compiled its shaders.
  const std::vector<CooperativeMatrixShape> khr = fp16_shapes(info.cooperative_matrix_khr_properties);
  if (features.has_khr && features.khr.cooperativeMatrix && !khr.empty() && has_builtin_shader("gemm/coopmat_khr.f16")) {
    info.cooperative_matrix_khr = true;
    info.cooperative_matrix_shapes = khr;
  } else {
    info.cooperative_matrix_shapes = info.cooperative_matrix_nv_shapes;
  }
  info.cooperative_matrix = !info.cooperative_matrix_shapes.empty();
  if (!info.cooperative_matrix && emulated_cooperative_matrix_from_env()) {
    info.cooperative_matrix = info.cooperative_matrix_emulated = true;
    info.cooperative_matrix_shapes = {{16, 16, 16, false}, {16, 16, 16, true}};
  }
}

void enable_cooperative_matrices(const DeviceInfo& info, CooperativeMatrixFeatures& features, void**& tail,
                                 std::vector<const char*>& extensions) {
  if (!info.cooperative_matrix || info.cooperative_matrix_emulated) return;
  if (info.cooperative_matrix_khr) {
    features.khr = {};
    features.khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    features.khr.cooperativeMatrix = VK_TRUE;
    *tail = &features.khr, tail = &features.khr.pNext;
    extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  } else {
    features.nv = {};
    features.nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    features.nv.cooperativeMatrix = VK_TRUE;
    *tail = &features.nv, tail = &features.nv.pNext;
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
}

}  // namespace vkg::vk
