// Host-specialized SPIR-V kept on disk, so that a process compiles no module that an earlier one
// specialized (spirv_specialize.h): a debug iteration, a test, a second build of a model.
//
// Why: on a CPU driver each pipeline's module is specialized on the host before the driver sees
// it (10 to 60 ms of SPIRV-Tools' optimizer a pipeline), and Mesa's shader cache only keeps what
// LLVM made of it, so every process paid for every module again: about a tenth of a command-line
// test's time (docs/testing.md).
//
// An entry is named by a hash of the input words, the specialization constants and SPIRV-Tools'
// version, and holds a second hash of them and a checksum of its words: an entry that does not
// match, or cannot be read, is a miss, and one that cannot be written is left out (caches fail
// soft). Writes are atomic, so processes may share a folder.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vkg::vk {

struct SpecConstant;

class SpirvCache {
 public:
  // The folder a process uses: $VKGRAPHY_SPIRV_CACHE_DIR, else "spirv" in vkgraphy_cache_dir()
  // (runtime/core/cache_dir.h); off when the variable that decides is set but empty.
  static std::string default_dir();
  // The process's cache, in default_dir() as it was at first use.
  static SpirvCache& process();

  // A cache in `dir` ("" : off, every find a miss, every store dropped). Past `max_entries`
  // entries, the oldest half is removed when the cache is first used.
  explicit SpirvCache(std::string dir, size_t max_entries = kDefaultMaxEntries);

  // The specialized words stored for `spirv` and `spec`, or nullopt.
  std::optional<std::vector<uint32_t>> find(std::span<const uint32_t> spirv, std::span<const SpecConstant> spec);
  // Keeps `specialized` as what `spirv` with `spec` specializes to.
  void store(std::span<const uint32_t> spirv, std::span<const SpecConstant> spec,
             std::span<const uint32_t> specialized);

  const std::string& dir() const { return dir_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t stored() const { return stored_; }

  static constexpr size_t kDefaultMaxEntries = 8192;

 private:
  void trim_once();

  std::string dir_;
  size_t max_entries_;
  std::atomic<bool> trimmed_{false};
  std::atomic<uint64_t> hits_{0}, misses_{0}, stored_{0};
};

}  // namespace vkg::vk
