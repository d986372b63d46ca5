#include "runtime/vulkan/spirv_cache.h"

#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runtime/core/cache_dir.h"
#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/hash.h"
#include "runtime/vulkan/compute_pipeline.h"

namespace vkg::vk {

namespace {

namespace fs = std::filesystem;

constexpr uint32_t kMagic = 0x53474b56;  // "VKGS"
constexpr uint32_t kVersion = 1;

// An entry: this header, then the specialized words.
struct EntryHeader {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  uint64_t check = 0;     // a second hash of what the entry's name hashes
  uint64_t checksum = 0;  // of the words
  uint64_t words = 0;
};

std::string_view bytes_of(std::span<const uint32_t> words) {
  return {reinterpret_cast<const char*>(words.data()), words.size_bytes()};
}

std::string_view bytes_of(std::span<const SpecConstant> spec) {
  static_assert(sizeof(SpecConstant) == 8, "SpecConstant is two 32-bit words");
  return {reinterpret_cast<const char*>(spec.data()), spec.size_bytes()};
}

// What an entry depends on, hashed in two ways: its name, and the check it holds.
uint64_t identity_hash(std::string_view tag, std::span<const uint32_t> spirv, std::span<const SpecConstant> spec,
                       bool spirv_first) {
  uint64_t h = fnv1a64(tag);
  h = fnv1a64(spvSoftwareVersionString(), h);
  if (spirv_first) h = fnv1a64(bytes_of(spirv), h);
  h = fnv1a64(bytes_of(spec), h);
  if (!spirv_first) h = fnv1a64(bytes_of(spirv), h);
  return fnv1a64(std::to_string(spirv.size()) + "/" + std::to_string(spec.size()), h);
}

std::string entry_path(const std::string& dir, std::span<const uint32_t> spirv, std::span<const SpecConstant> spec) {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.spv",
                static_cast<unsigned long long>(identity_hash("vkgraphy-spirv-cache", spirv, spec, false)));
  return dir + "/" + name;
}

}  // namespace

std::string SpirvCache::default_dir() {
  if (const char* dir = std::getenv("VKGRAPHY_SPIRV_CACHE_DIR")) return dir;
  const std::string root = vkgraphy_cache_dir();
  return root.empty() ? "" : root + "/spirv";
}

SpirvCache& SpirvCache::process() {
  static SpirvCache cache(default_dir());
  return cache;
}

SpirvCache::SpirvCache(std::string dir, size_t max_entries) : dir_(std::move(dir)), max_entries_(max_entries) {}

std::optional<std::vector<uint32_t>> SpirvCache::find(std::span<const uint32_t> spirv,
                                                      std::span<const SpecConstant> spec) {
  if (dir_.empty()) return std::nullopt;
  trim_once();
  std::ifstream in(entry_path(dir_, spirv, spec), std::ios::binary);
  EntryHeader header;
  std::vector<uint32_t> words;
  if (in && in.read(reinterpret_cast<char*>(&header), sizeof(header)) && header.magic == kMagic &&
      header.version == kVersion && header.check == identity_hash("check", spirv, spec, true) && header.words > 0 &&
      header.words <= (uint64_t(1) << 28)) {
    words.resize(header.words);
    const bool whole = bool(in.read(reinterpret_cast<char*>(words.data()), std::streamsize(words.size() * 4))) &&
                       in.peek() == std::char_traits<char>::eof();
    if (whole && fnv1a64(bytes_of(words)) == header.checksum && words[0] == 0x07230203u) {
      ++hits_;
      return words;
    }
  }
  ++misses_;
  return std::nullopt;
}

void SpirvCache::store(std::span<const uint32_t> spirv, std::span<const SpecConstant> spec,
                       std::span<const uint32_t> specialized) {
  if (dir_.empty() || specialized.empty()) return;
  trim_once();
  EntryHeader header;
  header.check = identity_hash("check", spirv, spec, true);
  header.checksum = fnv1a64(bytes_of(specialized));
  header.words = specialized.size();
  std::string contents(reinterpret_cast<const char*>(&header), sizeof(header));
  contents += bytes_of(specialized);
  try {
    write_file_atomically(entry_path(dir_, spirv, spec), contents, "specialized SPIR-V cache entry");
    ++stored_;
  } catch (const Error&) {
    // A cache that cannot be written only costs the next process the specialization.
  }
}

void SpirvCache::trim_once() {
  if (trimmed_.exchange(true)) return;
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".spv") entries.emplace_back(it->last_write_time(ec), it->path());
  if (entries.size() <= max_entries_) return;
  const auto oldest_half = entries.begin() + std::ptrdiff_t(entries.size() / 2);
  std::nth_element(entries.begin(), oldest_half, entries.end());
  for (auto it = entries.begin(); it != oldest_half; ++it) fs::remove(it->second, ec);
}

}  // namespace vkg::vk
