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
// Whether ASan is in the process is asked at run time, not of the compiler: the test code is not
// instrumented (tests/CMakeLists.txt), and the sanitizer build links the Release build's test
// objects (tests/sanitizer/run.sh), so this file is compiled the same way for both.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/vk_test_util.h"

// Defined by AddressSanitizer's runtime only.
extern "C" void __asan_init() __attribute__((weak));

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
  if (&__asan_init == nullptr) return false;  // not under AddressSanitizer
  for (const std::string& lib : vulkan_libraries()) dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  return true;
}();

}  // namespace
}  // namespace vkg::test
