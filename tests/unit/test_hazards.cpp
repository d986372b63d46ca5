// Barrier placement (runtime/vulkan/hazards.h) and the read-only bindings it relies on
// (read_only_bindings in runtime/vulkan/shader_table.h). tests/cli/test_vk.py (TestBarriers) runs
// whole engines with the validation layer's synchronization validation on.
#include <gtest/gtest.h>

#include "runtime/engine/shader_library.h"
#include "runtime/vulkan/hazards.h"
#include "runtime/vulkan/shader_table.h"

namespace vkg::vk {
namespace {

// Distinct buffer identities; the tracker compares them and never dereferences them.
const Buffer* buffer(int i) { return reinterpret_cast<const Buffer*>(uintptr_t(0x1000 * i)); }

BufferAccess read(int b, uint64_t offset = 0, uint64_t size = 0) { return {buffer(b), offset, size, false}; }
BufferAccess write(int b, uint64_t offset = 0, uint64_t size = 0) { return {buffer(b), offset, size, true}; }

TEST(HazardTracker, OnlyDependentDispatchesWait) {
  HazardTracker h;
  EXPECT_TRUE(h.empty());
  const std::vector<BufferAccess> a = {read(1), write(2)};
  EXPECT_FALSE(h.conflicts(a));
  h.add(a);
  EXPECT_FALSE(h.empty());
  EXPECT_FALSE(h.conflicts(std::vector{read(1), write(3)}));  // another branch reading the same input
  EXPECT_TRUE(h.conflicts(std::vector{read(2), write(4)}));   // read after write
  EXPECT_TRUE(h.conflicts(std::vector{read(5), write(1)}));   // write after read
  EXPECT_TRUE(h.conflicts(std::vector{read(5), write(2)}));   // write after write
  h.clear();
  EXPECT_TRUE(h.empty());
  EXPECT_FALSE(h.conflicts(std::vector{read(2), write(1)}));
}

TEST(HazardTracker, RegionsOfOneBufferConflictOnlyWhereTheyOverlap) {
  HazardTracker h;
  h.add(std::vector{write(1, 0, 256)});                            // a view: bytes 0-255 of a slot
  EXPECT_FALSE(h.conflicts(std::vector{read(1, 256, 256)}));      // the next view
  EXPECT_FALSE(h.conflicts(std::vector{write(1, 512, 64)}));
  EXPECT_TRUE(h.conflicts(std::vector{read(1, 255, 4)}));          // one byte in common
  EXPECT_TRUE(h.conflicts(std::vector{read(1)}));                  // the whole buffer
  h.clear();
  h.add(std::vector{read(1)});                                      // the whole buffer read
  EXPECT_TRUE(h.conflicts(std::vector{write(1, 4096, 4)}));
  EXPECT_FALSE(h.conflicts(std::vector{read(1, 4096, 4)}));
}

TEST(ReadOnlyBindings, FromTheShadersDeclarations) {
  // gemm/coopmat: A, B, C readonly, Y writeonly, then gemm/common.glsl's batch table, readonly;
  // elementwise/binary's texel build reads A and B as texels.
  EXPECT_EQ(read_only_bindings(builtin_shader("gemm/coopmat.f16")), 0b10111u);
  const uint32_t texel = texel_buffer_bindings(builtin_shader("elementwise/binary_texel.f32"));
  EXPECT_NE(texel, 0u);
  EXPECT_EQ(read_only_bindings(builtin_shader("elementwise/binary_texel.f32")) & texel, texel);
  // The fault-injection shader writes its one binding in place.
  EXPECT_EQ(read_only_bindings(builtin_shader("debug/fault.f32")), 0u);
  // elementwise/binary declares bindings 0 and 1 twice (scalars and vec4s, both readonly) and
  // binding 2, the output, twice as well.
  const uint32_t binary = read_only_bindings(builtin_shader("elementwise/binary.f32"));
  EXPECT_EQ(binary & 0b111u, 0b011u);
}

}  // namespace
}  // namespace vkg::vk
