// The disk cache of host-specialized SPIR-V (runtime/vulkan/spirv_cache.h): what one cache
// stores another finds, anything else is a miss, an entry that is damaged is a miss that the
// next store repairs, a folder that cannot be written costs nothing but the cache, and a
// pipeline created twice specializes its module once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/shader_table.h"
#include "runtime/vulkan/spirv_cache.h"
#include "runtime/vulkan/spirv_specialize.h"
#include "tests/unit/test_data_util.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

namespace fs = std::filesystem;
using vk::SpecConstant;
using vk::SpirvCache;
using test::ScopedEnv;

const std::vector<SpecConstant> kSpec = {SpecConstant::u32(0, 64)};

std::vector<uint32_t> specialized_add(const std::vector<SpecConstant>& spec) {
  const auto words = vk::builtin_shader("elementwise/add.f32");
  auto specialized = vk::specialize_spirv(words, spec);
  EXPECT_TRUE(specialized.has_value());
  return specialized.value_or(std::vector<uint32_t>{});
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".spv") found.push_back(it->path());
  return found;
}

TEST(SpirvCache, WhatOneProcessStoresTheNextFinds) {
  TempDir dir;
  const auto words = vk::builtin_shader("elementwise/add.f32");
  const auto specialized = specialized_add(kSpec);
  {
    SpirvCache first(dir.path().string());
    EXPECT_FALSE(first.find(words, kSpec).has_value());
    first.store(words, kSpec, specialized);
    EXPECT_EQ(first.misses(), 1u);
    EXPECT_EQ(first.stored(), 1u);
  }
  SpirvCache second(dir.path().string());
  const auto found = second.find(words, kSpec);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, specialized);
  EXPECT_EQ(second.hits(), 1u);
  EXPECT_EQ(entries(dir.path()).size(), 1u);
}

TEST(SpirvCache, OtherConstantsOrOtherWordsAreAMiss) {
  TempDir dir;
  const auto words = vk::builtin_shader("elementwise/add.f32");
  SpirvCache cache(dir.path().string());
  cache.store(words, kSpec, specialized_add(kSpec));

  EXPECT_FALSE(cache.find(words, std::vector<SpecConstant>{SpecConstant::u32(0, 128)}).has_value());
  EXPECT_FALSE(cache.find(words, std::vector<SpecConstant>{SpecConstant::u32(1, 64)}).has_value());
  EXPECT_FALSE(cache.find(words, std::vector<SpecConstant>{}).has_value());
  std::vector<uint32_t> other(words.begin(), words.end());
  other[2] ^= 1u;  // the generator word: the same code, other input
  EXPECT_FALSE(cache.find(other, kSpec).has_value());
  EXPECT_TRUE(cache.find(words, kSpec).has_value());
  EXPECT_EQ(cache.misses(), 4u);
}

// A damaged entry is a miss, never words that were not stored; storing again repairs it.
TEST(SpirvCache, ADamagedEntryIsAMissAndTheNextStoreRepairsIt) {
  const auto words = vk::builtin_shader("elementwise/add.f32");
  const auto specialized = specialized_add(kSpec);
  const std::vector<std::pair<std::string, std::function<void(std::string&)>>> damages = {
      {"truncated", [](std::string& b) { b.resize(b.size() - 4); }},
      {"header only", [](std::string& b) { b.resize(32); }},
      {"empty", [](std::string& b) { b.clear(); }},
      {"one word flipped", [](std::string& b) { b[b.size() - 3] ^= 0x10; }},
      {"wrong magic", [](std::string& b) { b[0] ^= 1; }},
      {"other version", [](std::string& b) { b[4] ^= 1; }},
      {"longer", [](std::string& b) { b += std::string(4, '\0'); }},
  };
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    TempDir dir;
    SpirvCache(dir.path().string()).store(words, kSpec, specialized);
    const auto stored = entries(dir.path());
    ASSERT_EQ(stored.size(), 1u);
    std::string bytes = read_text(stored[0].string());
    damage(bytes);
    std::ofstream(stored[0], std::ios::binary | std::ios::trunc) << bytes;

    SpirvCache cache(dir.path().string());
    EXPECT_FALSE(cache.find(words, kSpec).has_value());
    cache.store(words, kSpec, specialized);
    const auto repaired = cache.find(words, kSpec);
    ASSERT_TRUE(repaired.has_value());
    EXPECT_EQ(*repaired, specialized);
  }
}

TEST(SpirvCache, AnEmptyFolderNameTurnsItOff) {
  const auto words = vk::builtin_shader("elementwise/add.f32");
  SpirvCache off("");
  off.store(words, kSpec, specialized_add(kSpec));
  EXPECT_FALSE(off.find(words, kSpec).has_value());
  EXPECT_EQ(off.stored(), 0u);
}

TEST(SpirvCache, AFolderItCannotWriteCostsOnlyTheCache) {
  TempDir dir;
  const std::string file = dir.file("a-file");
  std::ofstream(file) << "not a folder";
  const auto words = vk::builtin_shader("elementwise/add.f32");
  SpirvCache cache(file + "/spirv");
  EXPECT_NO_THROW(cache.store(words, kSpec, specialized_add(kSpec)));
  EXPECT_EQ(cache.stored(), 0u);
  EXPECT_FALSE(cache.find(words, kSpec).has_value());
}

TEST(SpirvCache, PastItsLimitTheOldestHalfGoes) {
  TempDir dir;
  const auto words = vk::builtin_shader("elementwise/add.f32");
  const auto specialized = specialized_add(kSpec);
  auto spec_of = [](uint32_t size) { return std::vector<SpecConstant>{SpecConstant::u32(0, size)}; };
  // Eight entries, the one of workgroup size 1 the oldest by a day, the one of size 8 the newest.
  const auto now = fs::file_time_type::clock::now();
  for (uint32_t size = 1; size <= 8; ++size) {
    const auto before = entries(dir.path());
    SpirvCache(dir.path().string()).store(words, spec_of(size), specialized);
    for (const auto& entry : entries(dir.path()))
      if (std::find(before.begin(), before.end(), entry) == before.end())
        fs::last_write_time(entry, now - std::chrono::hours(24 * (9 - size)));
  }
  ASSERT_EQ(entries(dir.path()).size(), 8u);

  SpirvCache trimmed(dir.path().string(), /*max_entries=*/6);
  EXPECT_FALSE(trimmed.find(words, spec_of(99)).has_value());
  EXPECT_EQ(entries(dir.path()).size(), 4u);
  for (uint32_t size = 1; size <= 8; ++size)
    EXPECT_EQ(trimmed.find(words, spec_of(size)).has_value(), size > 4) << "workgroup size " << size;
}

TEST(SpirvCache, TheFolderComesFromTheEnvironment) {
  {
    ScopedEnv spirv("VKGRAPHY_SPIRV_CACHE_DIR", "/somewhere/spirv");
    EXPECT_EQ(SpirvCache::default_dir(), "/somewhere/spirv");
  }
  {
    ScopedEnv spirv("VKGRAPHY_SPIRV_CACHE_DIR", "");
    EXPECT_EQ(SpirvCache::default_dir(), "") << "set but empty: off";
  }
  ScopedEnv spirv("VKGRAPHY_SPIRV_CACHE_DIR", nullptr);
  {
    ScopedEnv root("VKGRAPHY_CACHE_DIR", "/cache");
    EXPECT_EQ(SpirvCache::default_dir(), "/cache/spirv");
  }
  {
    ScopedEnv root("VKGRAPHY_CACHE_DIR", "");
    EXPECT_EQ(SpirvCache::default_dir(), "");
  }
  ScopedEnv root("VKGRAPHY_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(SpirvCache::default_dir(), "/xdg/vkgraphy/spirv");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/user");
  EXPECT_EQ(SpirvCache::default_dir(), "/home/user/.cache/vkgraphy/spirv");
}

// Two pools (as two processes would have) create the same pipeline: the second finds the
// module the first specialized, in the process's cache.
TEST(SpirvCache, APipelineCreatedTwiceSpecializesOnce) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  if (!ctx->device().info().host_specialization) GTEST_SKIP() << "the device specializes its own shaders";
  SpirvCache& cache = SpirvCache::process();
  if (cache.dir().empty()) GTEST_SKIP() << "the process's cache is off (VKGRAPHY_SPIRV_CACHE_DIR is empty)";

  const vk::PipelineDesc desc{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 80)}};
  const auto words = vk::builtin_shader(desc.name);
  const uint64_t hits = cache.hits(), stored = cache.stored();
  vk::PipelinePool(ctx->device()).get(words, desc);  // found, or specialized and stored
  EXPECT_EQ(cache.hits() + cache.stored(), hits + stored + 1);
  vk::PipelinePool(ctx->device()).get(words, desc);  // found
  EXPECT_EQ(cache.hits() + cache.stored(), hits + stored + 2);
  EXPECT_GE(cache.hits(), hits + 1);
  ctx->check_validation("pipelines from the SPIR-V cache");
}

}  // namespace
}  // namespace vkg::test
