// The device's pipeline pool (runtime/vulkan/pipeline_pool.h): one pipeline per SPIR-V and
// PipelineDesc, kept for the next engine within its capacity, shared between threads, and
// shared by the builder's timer and the executors, so that running a built engine, or building
// the same model again, creates no pipeline.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "runtime/engine/builder.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/pipeline_pool.h"
#include "runtime/vulkan/plan_timer.h"
#include "runtime/vulkan/shader_table.h"
#include "tests/unit/op_test_util.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

using vk::PipelineDesc;
using vk::PipelinePool;
using vk::SpecConstant;

vk::Device* test_device() {
  vk::Context* ctx = test_vk_context();
  return ctx == nullptr ? nullptr : &ctx->device();
}

const PipelineDesc kAdd{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 64)}};

TEST(PipelinePool, OnePipelinePerSpirvAndDesc) {
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  PipelinePool pool(*test_device());
  const auto words = vk::builtin_shader(kAdd.name);
  const auto first = pool.get(words, kAdd);
  EXPECT_EQ(pool.get(words, kAdd), first);
  EXPECT_EQ(pool.created(), 1u);
  EXPECT_EQ(pool.hits(), 1u);

  PipelineDesc other_size = kAdd;
  other_size.specialization = {SpecConstant::u32(0, 128)};
  EXPECT_NE(pool.get(words, other_size), first);

  // The same desc over other SPIR-V (an engine file's own words) is another pipeline: here
  // the words differ in the generator word of the header only.
  std::vector<uint32_t> other_words(words.begin(), words.end());
  other_words[2] ^= 1u;
  EXPECT_NE(pool.get(other_words, kAdd), first);
  EXPECT_EQ(pool.created(), 3u);
  test_vk_context()->check_validation("pipeline pool");
}

TEST(PipelinePool, KeepsTheMostRecentlyUsedWithinItsCapacity) {
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  PipelinePool pool(*test_device(), /*capacity=*/1);
  const auto words = vk::builtin_shader(kAdd.name);
  PipelineDesc wide = kAdd;
  wide.specialization = {SpecConstant::u32(0, 128)};

  pool.get(words, kAdd);  // kept though no one holds it
  EXPECT_EQ(pool.kept(), 1u);
  pool.get(words, kAdd);
  EXPECT_EQ(pool.created(), 1u);

  pool.get(words, wide);  // pushes kAdd out: capacity 1
  EXPECT_EQ(pool.kept(), 1u);
  const auto held = pool.get(words, kAdd);  // made again, and now held here
  EXPECT_EQ(pool.created(), 3u);
  pool.get(words, wide);  // pushes kAdd out of the kept list again
  EXPECT_EQ(pool.get(words, kAdd), held) << "a pipeline someone holds is found though it is not kept";
  EXPECT_EQ(pool.created(), 4u);

  pool.clear();
  EXPECT_EQ(pool.kept(), 0u);
  EXPECT_EQ(pool.get(words, kAdd), held);

  PipelinePool none(*test_device(), /*capacity=*/0);
  none.get(words, kAdd);
  none.get(words, kAdd);
  EXPECT_EQ(none.created(), 2u) << "capacity 0 keeps nothing";
}

TEST(PipelinePool, ThreadsAskingForTheSamePipelineShareOne) {
  std::string why;
  if (test_vk_context(&why) == nullptr) VKG_NO_VULKAN(why);
  PipelinePool pool(*test_device());
  const auto words = vk::builtin_shader(kAdd.name);
  std::vector<std::shared_ptr<const vk::ComputePipeline>> got(4);
  {
    std::vector<std::jthread> threads;
    for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = pool.get(words, kAdd); });
  }
  for (const auto& p : got) EXPECT_EQ(p, got[0]);
  EXPECT_EQ(pool.created(), 1u);
  test_vk_context()->check_validation("pipeline pool threads");
}

TEST(PipelinePool, RunningABuiltEngineOrBuildingItAgainCreatesNoPipeline) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  vk::Device& device = ctx->device();
  const VkCase c = make_case("conv", "Conv", {unit_floats({1, 8, 12, 12}, 1), unit_floats({16, 8, 3, 3}, 2)},
                             {{"pads", ints_attr({1, 1, 1, 1})}}, 1, {1});
  const Graph g = case_graph(c);
  const vk::DeviceInfo info = device.info();
  const DeviceIdentity identity = device_identity(info);
  BuilderConfig config;
  config.optimization_level = 3;
  auto build = [&] {
    vk::VulkanPlanTimer timer(device);
    return build_engine(g, config, info, identity, &timer);
  };

  const BuildResult built = build();
  const uint64_t after_build = device.pipelines().created();
  ASSERT_GT(built.stats.candidates_timed, 1u) << "the layer had candidates to time";
  vk::EngineExecutor executor(device, built.engine);
  TensorMap inputs;
  inputs["in0"] = c.inputs.at(0).second;
  const TensorMap out = executor.run(inputs);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(device.pipelines().created(), after_build) << "the executor made a pipeline the timer had made";

  const BuildResult again = build();
  EXPECT_EQ(device.pipelines().created(), after_build) << "a second build of the same graph made a pipeline";
  EXPECT_EQ(again.replay.layers.size(), built.replay.layers.size());
  ctx->check_validation("pipeline pool engine");
}

}  // namespace
}  // namespace vkg::test
