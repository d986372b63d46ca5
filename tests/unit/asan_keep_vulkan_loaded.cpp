// Under AddressSanitizer (tests/sanitizer/run.sh) only: keeps the Vulkan driver
// and the validation layer loaded for the whole test process.
//
// The Vulkan loader dlcloses the driver and the layers at every vkDestroyInstance.
// Memory they still hold from their globals (reachable, not leaked) then lives on
// in a process that no longer maps those globals, and LeakSanitizer reports it at
// exit as leaked from "<unknown module>" frames: no suppression can name them,
// and a real leak of vkgraphy's inside a driver call could not be told from them.
// Opened once more here with RTLD_NODELETE, the libraries stay mapped after the
// loader's dlclose, as in any process that keeps its instance. RTLD_LOCAL: none of
// their symbols interposes the loader's (the layer exports vkGetInstanceProcAddr).
// The sanitizer build defines VKG_TEST_UNDER_ASAN (tests/CMakeLists.txt: the test code itself is
// not instrumented there, so the compiler's own macros are not set in this file).
#ifdef VKG_TEST_UNDER_ASAN
#elif defined(__SANITIZE_ADDRESS__)
#define VKG_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VKG_TEST_UNDER_ASAN 1
#endif
#endif

#ifdef VKG_TEST_UNDER_ASAN
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// The libraries of the drivers VK_DRIVER_FILES names (default: lavapipe, as the
// tests select it), as their ICD manifests give them, and the validation layer's.
std::vector<std::string> vulkan_libraries() {
  std::vector<std::string> libs = {"libVkLayer_khronos_validation.so"};
  const char* env = std::getenv("VK_DRIVER_FILES");
  const std::string manifests = env != nullptr ? env : kLavapipeIcd;
  size_t start = 0;
  while (start <= manifests.size()) {
    const size_t colon = std::min(manifests.find(':', start), manifests.size());
    const std::filesystem::path manifest = manifests.substr(start, colon - start);
    start = colon + 1;
    std::ifstream in(manifest);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("ICD") || !j["ICD"].contains("library_path")) continue;
    std::filesystem::path lib = j["ICD"]["library_path"].get<std::string>();
    // A relative path with a directory is relative to the manifest; a bare name is searched.
    if (lib.is_relative() && lib.has_parent_path()) lib = manifest.parent_path() / lib;
    libs.push_back(lib.string());
  }
  return libs;
}

[[maybe_unused]] const bool vulkan_libraries_pinned = [] {
  for (const std::string& lib : vulkan_libraries()) dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  return true;
}();

}  // namespace
}  // namespace vkg::test
#endif
