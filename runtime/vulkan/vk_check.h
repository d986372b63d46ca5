// Turning VkResult failures into vkg::Error. Only the Vulkan layer includes this.
#pragma once

#include <vulkan/vulkan.h>

#include "runtime/core/error.h"

namespace vkg::vk {

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ... (the enum name, or the number if unknown).
const char* vk_result_name(VkResult result);

}  // namespace vkg::vk

// Throws vkg::Error "<what>: VK_ERROR_..." unless `call` returns VK_SUCCESS.
//   VKG_VK_CHECK(vkCreateBuffer(...), "creating a " << bytes << "-byte buffer");
#define VKG_VK_CHECK(call, what)                                                       \
  do {                                                                                 \
    const VkResult vkg_vk_result_ = (call);                                            \
    if (vkg_vk_result_ != VK_SUCCESS) VKG_THROW(what << ": " << ::vkg::vk::vk_result_name(vkg_vk_result_)); \
  } while (0)
