// The builder's compile workers (runtime/vulkan/compile_workers.h), the pipeline keys and device
// switches they are given, and the canonical texel views that let one compile serve every binding
// (DeviceProfile::canonical_texel_views), on lavapipe.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/compile_workers.h"
#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/device_info.h"
#include "runtime/vulkan/shader_table.h"
#include "tests/unit/test_data_util.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

vk::PipelineDesc unary_desc(uint32_t local_size) {
  vk::PipelineDesc desc;
  desc.name = "elementwise/unary.f32";
  desc.bindings = 2;
  desc.push_constant_bytes = 20;
  desc.specialization = {{0, local_size}, {1, 1}, {2, 3}, {3, 0}, {4, 0}, {5, 0}, {6, 0}};
  return desc;
}

// Pipelines of their own (not the pool's), so that none was dispatched in this process yet.
struct FreshPipelines {
  std::vector<std::unique_ptr<vk::ComputePipeline>> made;
  std::vector<const vk::ComputePipeline*> list;

  FreshPipelines(vk::Device& device, std::initializer_list<uint32_t> local_sizes) {
    for (uint32_t local : local_sizes) {
      const vk::PipelineDesc desc = unary_desc(local);
      made.push_back(std::make_unique<vk::ComputePipeline>(device, vk::builtin_shader(desc.name), desc));
      list.push_back(made.back().get());
    }
  }
};

TEST(PipelineKey, ParsesWhatItPrints) {
  vk::PipelineDesc desc = unary_desc(64);
  desc.subgroup_size = 8;
  desc.specialization.push_back({23, 0x3f3504f3u});
  const std::optional<vk::PipelineDesc> back = vk::parse_pipeline_key(vk::pipeline_key(desc));
  ASSERT_TRUE(back);
  EXPECT_EQ(vk::pipeline_key(*back), vk::pipeline_key(desc));
  EXPECT_EQ(back->subgroup_size, 8u);
  ASSERT_EQ(back->specialization.size(), desc.specialization.size());
  EXPECT_EQ(back->specialization.back().value, 0x3f3504f3u);
  for (const char* bad : {"", "name", "a|1|4", "a|1|4|8", "a|x|4|sg0", "a|1|4|sg0|7", "a|1|4|sg0|=1", "a b|1|4|sg0",
                          "a|1|4|sg0|1=99999999999"})
    EXPECT_FALSE(vk::parse_pipeline_key(bad)) << bad;
}

TEST(DeviceSwitches, WordsGiveTheOptionsBack) {
  vk::DeviceOptions options;
  options.disable_fp16 = options.disable_texel_buffers = options.disable_host_specialization = true;
  options.disable_canonical_texel_views = options.force_staging = true;
  const std::vector<std::string> words = vk::switch_words(options);
  const vk::DeviceOptions back = vk::options_from_switch_words(words);
  EXPECT_EQ(vk::switch_words(back), words);
  EXPECT_TRUE(back.disable_fp16 && back.disable_texel_buffers && back.disable_host_specialization &&
              back.disable_canonical_texel_views && back.force_staging);
  EXPECT_FALSE(back.disable_int64 || back.disable_subgroup_size_control || back.validation);
  EXPECT_THROW(vk::options_from_switch_words({"fp16", "warp-drive"}), Error);
}

TEST(DeviceSwitches, AProfileGivesTheSwitchesThatMadeIt) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  vk::DeviceInfo info = ctx->device().info();
  vk::DeviceOptions options;
  options.disable_texel_buffers = options.disable_host_specialization = true;
  vk::apply_switches(info, options);
  const vk::DeviceOptions again = vk::switches_of(info);
  EXPECT_EQ(again.device, std::to_string(info.index));
  EXPECT_TRUE(again.disable_texel_buffers);
  EXPECT_EQ(again.disable_host_specialization, info.type == vk::DeviceType::Cpu);
  EXPECT_FALSE(again.disable_fp16);
}

// The worker's side of the protocol, served on one end of a socket pair by a thread of this process
// (a second instance and device of its own, as in the worker program).
TEST(CompileWorkers, TheWorkerAnswersEachRequest) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  const vk::DeviceInfo& info = ctx->device().info();
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  std::thread worker([fd = fds[1]] {
    vk::serve_compile_jobs(fd);
    close(fd);
  });
  std::string buffer;
  auto ask = [&](const std::string& line) {
    const std::string text = line + "\n";
    EXPECT_EQ(write(fds[0], text.data(), text.size()), ssize_t(text.size()));
    while (buffer.find('\n') == std::string::npos) {
      char chunk[512];
      const ssize_t n = read(fds[0], chunk, sizeof chunk);
      if (n <= 0) return std::string("(closed)");
      buffer.append(chunk, size_t(n));
    }
    std::string reply = buffer.substr(0, buffer.find('\n'));
    buffer.erase(0, reply.size() + 1);
    return reply;
  };
  EXPECT_EQ(ask("compile " + vk::pipeline_key(unary_desc(8))).rfind("error compile before open", 0), 0u);
  std::string open = "open " + info.uuid + " " + std::to_string(info.index);
  for (const std::string& w : vk::switch_words(vk::switches_of(info))) open += " " + w;
  EXPECT_EQ(ask("open 00ff " + std::to_string(info.index)).rfind("error device ", 0), 0u) << "another UUID";
  EXPECT_EQ(ask(open), "ready");
  EXPECT_EQ(ask("compile " + vk::pipeline_key(unary_desc(8))), "done");
  EXPECT_EQ(ask("compile " + vk::pipeline_key(unary_desc(16))), "done");
  EXPECT_EQ(ask("compile not|a|key").rfind("error not a pipeline key", 0), 0u);
  vk::PipelineDesc unknown = unary_desc(8);
  unknown.name = "elementwise/no_such_shader.f32";
  EXPECT_EQ(ask("compile " + vk::pipeline_key(unknown)).rfind("error ", 0), 0u);
  EXPECT_EQ(ask("fly"), "error unknown request 'fly'");
  shutdown(fds[0], SHUT_WR);  // the builder is done: the worker returns
  worker.join();
  close(fds[0]);
}

TEST(CompileWorkers, EveryPipelineIsCompiledOnceHereOrByAWorker) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  vk::Device& device = ctx->device();
  if (!device.info().compiles_in_one_thread) GTEST_SKIP() << "the device compiles pipelines where it creates them";
  ASSERT_FALSE(vk::compile_worker_program().empty()) << "vkgraphy_compile_worker is built with the unit tests";
  FreshPipelines fresh(device, {8u, 16u, 24u, 40u});
  const auto& made = fresh.made;
  std::vector<const vk::ComputePipeline*> list = fresh.list;
  list.push_back(list.front());  // named twice, compiled once
  vk::CompileWorkers workers(device, 1);
  ASSERT_TRUE(workers.enabled());
  workers.compile(list);
  EXPECT_EQ(workers.started(), 1u);
  // How the list splits depends on how fast the worker starts; the total does not.
  EXPECT_EQ(workers.compiled_here() + workers.compiled_by_workers(), made.size());
  // Those compiled here were dispatched here; the workers' wait in Mesa's cache for their first dispatch.
  size_t dispatched = 0;
  for (const auto& p : made) dispatched += p->dispatched();
  EXPECT_EQ(dispatched, workers.compiled_here());
  // What was dispatched here is not compiled again.
  const size_t here = workers.compiled_here(), there = workers.compiled_by_workers();
  std::vector<const vk::ComputePipeline*> mine;
  for (const auto& p : made)
    if (p->dispatched()) mine.push_back(p.get());
  workers.compile(mine);
  EXPECT_EQ(workers.compiled_here(), here);
  EXPECT_EQ(workers.compiled_by_workers(), there);
  ctx->check_validation("compile workers");
}

TEST(CompileWorkers, WithoutAWorkingWorkerEverythingCompilesHere) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  vk::Device& device = ctx->device();
  if (!device.info().compiles_in_one_thread) GTEST_SKIP() << "the device compiles pipelines where it creates them";
  // No program, then one that exits at once (it never answers "ready").
  for (const char* program : {"/nonexistent/vkgraphy_compile_worker", "/bin/false"}) {
    ScopedEnv env("VKGRAPHY_COMPILE_WORKER", program);
    FreshPipelines fresh(device, {48u, 56u, 72u});
    const std::vector<const vk::ComputePipeline*>& list = fresh.list;
    vk::CompileWorkers workers(device, 2);
    workers.compile(list);
    EXPECT_EQ(workers.compiled_by_workers(), 0u) << program;
    EXPECT_EQ(workers.compiled_here(), list.size()) << program;
    for (const vk::ComputePipeline* p : list) EXPECT_TRUE(p->dispatched()) << program;
  }
  ctx->check_validation("compile workers without a worker");
}

TEST(CompileWorkers, TheCountComesFromTheEnvironment) {
  {
    ScopedEnv env("VKGRAPHY_COMPILE_WORKERS", "3");
    EXPECT_EQ(vk::default_compile_workers(), 3u);
  }
  {
    ScopedEnv env("VKGRAPHY_COMPILE_WORKERS", "many");
    EXPECT_THROW(vk::default_compile_workers(), Error);
  }
  {
    ScopedEnv env("VKGRAPHY_COMPILE_WORKERS", nullptr);
    ScopedEnv lp("LP_NUM_THREADS", "1");
    EXPECT_EQ(vk::default_compile_workers(), 0u) << "one core: no worker";
  }
}

TEST(CanonicalTexelViews, BuffersAreNoPowerOfTwoAndViewsHaveANonzeroSecondByte) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  vk::Device& device = ctx->device();
  if (!device.info().canonical_texel_views) GTEST_SKIP() << "not a device that needs them";
  // gemm/block_texel reads A and B through texel buffers.
  vk::PipelineDesc desc;
  desc.name = "gemm/block_texel.f32";
  desc.bindings = 5;
  desc.push_constant_bytes = 64;
  desc.specialization = {{0, 8}, {1, 16}, {2, 4}, {3, 1}, {4, 0}, {5, 0}, {6, 0}, {7, 0}, {14, 0}};
  const vk::ComputePipeline pipeline(device, vk::builtin_shader(desc.name), desc);
  ASSERT_NE(pipeline.texel_bindings(), 0u);
  for (size_t bytes : {size_t(16), size_t(64), size_t(240), size_t(4096), size_t(65536), size_t(65536 + 16)}) {
    std::vector<vk::Buffer> buffers;
    for (uint32_t b = 0; b < desc.bindings; ++b) buffers.emplace_back(device, bytes);
    EXPECT_FALSE(std::has_single_bit(buffers[0].allocated_size())) << bytes;
    EXPECT_GE(buffers[0].allocated_size(), bytes + vk::kTexelViewSlack) << bytes;
    std::vector<const vk::Buffer*> bound;
    for (const vk::Buffer& b : buffers) bound.push_back(&b);
    const vk::DescriptorSet set(device, pipeline, bound);
    for (uint32_t b = 0; b < desc.bindings; ++b) {
      const auto [offset, range] = set.ranges()[b];
      EXPECT_EQ(offset, 0u);
      EXPECT_GE(range, bytes) << bytes << " binding " << b;
      if (pipeline.texel_bindings() >> b & 1u)
        EXPECT_NE(range & 0xff00u, 0u) << bytes << " bytes: texel binding " << b << " has range " << range;
      else
        EXPECT_EQ(range, bytes) << bytes << " binding " << b;
    }
  }
  ctx->check_validation("canonical texel views");
}

}  // namespace
}  // namespace vkg::test
