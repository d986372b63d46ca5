// vkgraphy_compile_worker: compiles pipelines for the engine builder of another process, into the
// driver's on-disk cache (runtime/vulkan/compile_workers.h). Started by the builder; not a tool to
// run by hand: `vkgraphy_compile_worker --serve-fd 3` answers the protocol on descriptor 3.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/vulkan/compile_workers.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--serve-fd") != 0) {
    std::fprintf(stderr,
                 "vkgraphy_compile_worker compiles pipelines for vkgraphy's engine builder, which starts it.\n"
                 "usage: vkgraphy_compile_worker --serve-fd FD\n");
    return 2;
  }
  return vkg::vk::serve_compile_jobs(std::atoi(argv[2]));
}
