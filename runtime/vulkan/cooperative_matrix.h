// What a device offers of cooperative matrices, through VK_KHR_cooperative_matrix (cross-vendor)
// and VK_NV_cooperative_matrix (NVIDIA), read into its profile (DeviceProfile's cooperative_matrix
// fields), and the extension and features a device is created with to use them.
#pragma once

#include <vector>

#include "runtime/vulkan/device_info.h"
#include "runtime/vulkan/khr_cooperative_matrix.h"

namespace vkg::vk {

// The features to chain into vkGetPhysicalDeviceFeatures2 (query) or VkDeviceCreateInfo (enable).
struct CooperativeMatrixFeatures {
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR khr{};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nv{};
  bool has_khr = false, has_nv = false;  // the device lists the extension

  // Checks the device's extensions and appends the structures of those it has after *tail.
  void chain_for_query(VkPhysicalDevice device, void**& tail);
};

// Fills info's cooperative_matrix fields from the queried features: KHR's multiply-adds (all of them,
// for `inspect device`) and NV's fp16 shapes; the tactics use KHR's where the device has the feature
// and this build has the KHR shaders, else NV's. `memory_model`: the device has vulkanMemoryModel and
// its device scope, which the cooperative-matrix shaders declare. Needs info.fp16().
void read_cooperative_matrices(VkInstance instance, VkPhysicalDevice device, const CooperativeMatrixFeatures& features,
                               bool memory_model, DeviceInfo& info);

// The fp16 shapes the tensor-core tactics take from a list of KHR multiply-adds: A and B fp16, C and D
// both fp16 or both fp32, subgroup scope, not saturating.
std::vector<CooperativeMatrixShape> fp16_shapes(const std::vector<CooperativeMatrixProperties>& properties);

// For device creation: chains the feature structure of the extension `info` uses after *tail and adds
// its name to `extensions` (nothing when info.cooperative_matrix is off).
void enable_cooperative_matrices(const DeviceInfo& info, CooperativeMatrixFeatures& features, void**& tail,
                                 std::vector<const char*>& extensions);

}  // namespace vkg::vk
