// The engine builder's choices, made deterministic with a fake timer and a
// small registry of Add tactics built on shaders/elementwise/add.comp: the
// heuristic order, timing and near-ties, replay, timing cache, random
// selection, allow/deny globs, precision pins, marking outputs, the memory
// plan, and (on lavapipe) running the engine and fault injection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/cpu_cost_model.h"
#include "runtime/engine/tactic_validation.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/plan_timer.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

// Times come from a table keyed by tactic name; counts calls.
class FakeTimer : public PlanTimer {
 public:
  std::map<std::string, double> ns;  // by shader spec value 2 (tactic id); "reformat" for reformats
  std::map<std::string, double> first_call;  // a burst of noise: the first call's times, by the same key
  int calls = 0;
  int reformat_calls = 0;
  std::vector<double> time(const LayerPlan& plan, const std::vector<Buffer>&, const std::vector<Buffer>&, int,
                           int samples, double) override {
    ++calls;
    if (plan.dispatches.at(0).shader.rfind("engine/reformat", 0) == 0) {
      ++reformat_calls;
      return std::vector<double>(size_t(samples), ns.count("reformat") ? ns.at("reformat") : 0.0);
    }
    const std::string key = "t" + std::to_string(plan.dispatches.at(0).spec.at(2).value);
    if (auto burst = first_call.find(key); burst != first_call.end()) {
      const double value = burst->second;
      first_call.erase(burst);
      return std::vector<double>(size_t(samples), value);
    }
    return std::vector<double>(size_t(samples), ns.at(key));
  }
};

// Add tactics: "add.a.f32" (priority 0), "add.b.f32" (1), "add.c.f32" (2, vec4:
// only when the size is divisible by 4), "add.a.f16" (0).
TacticRegistry fake_registry() {
  TacticRegistry r;
  auto make = [](uint32_t id, uint32_t vec) {
    return [id, vec](const LayerContext& ctx, std::string& why) -> std::optional<LayerPlan> {
      if (vec == 4 && ctx.output(0).size() % 4 != 0) {
        why = "size not divisible by 4";
        return std::nullopt;
      }
      if (ctx.input(0).shape != ctx.input(1).shape) {
        why = "no broadcasting";
        return std::nullopt;
      }
      LayerPlan plan;
      Dispatch d;
      d.shader = ctx.shader("elementwise/add");
      const uint64_t n = uint64_t(ctx.output(0).size());
      d.spec = {{0, 64}, {1, vec}, {2, id}};
      d.bindings = {bind_input(ctx, plan, 0), bind_input(ctx, plan, 1), BindingRef::output(0)};
      d.push = {uint32_t(n)};
      d.groups = linear_groups(vec == 4 ? n / 4 : n, 64, ctx.device);
      plan.dispatches.push_back(d);
      return plan;
    };
  };
  r.add(Tactic{"add.a.f32", {"Add"}, Arith::F32, 0, make(0, 1)});
  r.add(Tactic{"add.b.f32", {"Add"}, Arith::F32, 1, make(1, 1)});
  r.add(Tactic{"add.c.f32", {"Add"}, Arith::F32, 2, make(2, 4)});
  r.add(Tactic{"add.a.f16", {"Add"}, Arith::F16, 0, make(3, 1)});
  return r;
}

// x -> Add(x, w) -> y -> Add(y, x) -> z, sizes `n`.
Graph two_adds(int64_t n) {
  VkCase c = make_case("two adds", "Add", {random_floats({n}, 1), random_floats({n}, 2)}, {}, 1, {1});
  Graph g = case_graph(c);
  g.nodes[0].name = "first";
  g.nodes[0].outputs = {"y"};
  g.outputs[0].name = "y";
  g.value_info["y"] = g.outputs[0];
  g.value_info.erase("out0");
  Node second;
  second.name = "second";
  second.op_type = "Add";
  second.inputs = {"y", "in0"};
  second.outputs = {"z"};
  g.nodes.push_back(second);
  g.outputs[0].name = "z";
  g.value_info["z"] = g.outputs[0];
  return g;
}

vk::DeviceInfo fake_device(bool fp16) {
  vk::DeviceInfo d;
  d.name = "fake";
  d.shader_float16 = d.storage_buffer_16bit = fp16;
  d.max_workgroup_count[0] = d.max_workgroup_count[1] = d.max_workgroup_count[2] = 65535;
  return d;
}

struct Fixture : ::testing::Test {
  TacticRegistry registry = fake_registry();
  FakeTimer timer;
  vk::DeviceInfo device = fake_device(true);
  DeviceIdentity identity = device_identity(device);
  // These tests are about choosing tactics per layer, so the graph rewrite
  // stays off (it would chain two_adds' Adds into one layer); the fusion is
  // tested end to end in tests/cli/test_fusion.py.
  BuildResult build(const Graph& g, BuilderConfig config) {
    config.fusion = false;
    return build_engine(g, config, device, identity, &timer, registry);
  }
};

using BuilderTest = Fixture;

TEST_F(BuilderTest, LevelZeroTakesTheFirstTacticAndTimesNothing) {
  BuilderConfig config;
  config.optimization_level = 0;
  const BuildResult r = build(two_adds(8), config);
  ASSERT_EQ(r.replay.layers.size(), 2u);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.a.f32");
  EXPECT_TRUE(r.replay.layers[0].candidates.empty());
  EXPECT_EQ(timer.calls, 0);
}

TEST_F(BuilderTest, KeepsTheFastestAndTimesEachSignatureOnce) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  const BuildResult r = build(two_adds(8), BuilderConfig{});
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  EXPECT_EQ(r.replay.layers[1].tactic, "add.b.f32");
  EXPECT_EQ(r.replay.layers[0].candidates.size(), 3u);
  // Three passes over the candidates (level 3: 5 samples, 2 + 2 + 1); add.a, 3x slower than add.b
  // in the first two, is not timed in the third (after one pass only a 4x gap prunes). Both layers
  // have the same signature: the second is not timed at all.
  EXPECT_EQ(timer.calls, 3 + 3 + 2);
  EXPECT_EQ(r.stats.candidates_timed, 3u);
  EXPECT_EQ(r.stats.signature_reuses, 3u);
  // Counted per layer: one timed, one with the other's timings.
  EXPECT_EQ(r.stats.layers_timed, 1u);
  EXPECT_EQ(r.stats.layers_reused, 1u);
  EXPECT_EQ(r.stats.layers_cached, 0u);
}

TEST_F(BuilderTest, DeclinedTacticsAreNotCandidates) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 50}};
  const BuildResult r = build(two_adds(7), BuilderConfig{});
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");  // add.c (vec4) cannot serve 7 elements
}

TEST_F(BuilderTest, DeterministicBreaksNearTiesByHeuristicOrder) {
  timer.ns = {{"t0", 105}, {"t1", 100}, {"t2", 300}};
  BuilderConfig config;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.b.f32");
  config.deterministic = true;  // 105 is within 10% of 100: the first in order wins
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.a.f32");
  config.tie_margin = 0.01;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.b.f32");
}

TEST_F(BuilderTest, ReplayForcesChoicesAndWarnsForMissingLayers) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  TacticReplay replay;
  replay.layers.push_back(TacticChoice{"first", "Add", "", "add.c.f32", Precision::FP32, {}, {}});
  BuilderConfig config;
  config.replay = &replay;
  const BuildResult r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.c.f32");
  EXPECT_EQ(r.replay.layers[1].tactic, "add.b.f32");  // not in the replay: timed
  // Same replay -> same engine.
  EXPECT_EQ(build(two_adds(8), config).engine.layers[0].plan, r.engine.layers[0].plan);
}

TEST_F(BuilderTest, ReplayNamingATacticThatCannotServeIsAnError) {
  TacticReplay replay;
  replay.layers.push_back(TacticChoice{"first", "Add", "", "add.c.f32", Precision::FP32, {}, {}});
  BuilderConfig config;
  config.replay = &replay;
  config.optimization_level = 0;
  try {
    build(two_adds(7), config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot serve layer 'first'"), std::string::npos) << e.what();
  }
  replay.layers[0].tactic = "no.such.f32";
  EXPECT_THROW(build(two_adds(8), config), Error);
  replay.layers[0].tactic = "add.a.f32";
  replay.layers[0].precision = Precision::FP16;
  EXPECT_THROW(build(two_adds(8), config), Error);
}

TEST_F(BuilderTest, ABurstOfNoiseOnOnePassDoesNotDecide) {
  // add.b's first samples (2 of 5) run 4x slow: timed in one go, all five would have been, and
  // add.c would have won.
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  timer.first_call = {{"t1", 400}};
  const BuildResult r = build(two_adds(8), BuilderConfig{});
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  ASSERT_EQ(r.replay.layers[0].candidates.size(), 3u);
  for (const CandidateTiming& c : r.replay.layers[0].candidates) {
    if (c.tactic == "add.b.f32") {
      EXPECT_EQ(c.median_ns, 100);
    }
  }
}

TEST_F(BuilderTest, OneBurstOverTheFirstPassDoesNotPruneTheFastest) {
  // add.b's two first samples, back to back, run 2.5x slower than add.c's median: more than twice
  // it, which one pass alone must not take as proof. add.a, 10x slower than the best from the
  // first pass on, is pruned at once.
  timer.ns = {{"t0", 1000}, {"t1", 100}, {"t2", 200}};
  timer.first_call = {{"t1", 500}};
  const BuildResult r = build(two_adds(8), BuilderConfig{});
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  EXPECT_EQ(timer.calls, 3 + 2 + 2);
}

TEST_F(BuilderTest, WarmTimingCacheTimesNothing) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  TimingCache cache;
  BuilderConfig config;
  config.timing_cache = &cache;
  const BuildResult cold = build(two_adds(8), config);
  EXPECT_EQ(timer.calls, 3 + 3 + 2);
  EXPECT_EQ(cache.size(), 3u);
  timer.calls = 0;
  const BuildResult warm = build(two_adds(8), config);
  EXPECT_EQ(timer.calls, 0);
  EXPECT_EQ(warm.stats.candidates_timed, 0u);
  EXPECT_EQ(warm.stats.cache_hits, 3u);
  EXPECT_EQ(warm.stats.layers_timed, 0u);
  EXPECT_EQ(warm.stats.layers_cached + warm.stats.layers_reused, 2u);
  EXPECT_EQ(warm.replay.layers[0].tactic, cold.replay.layers[0].tactic);
  // Another device identity misses; with error_on_timing_cache_miss that is an error.
  identity.device_name = "other";
  config.error_on_timing_cache_miss = true;
  EXPECT_THROW(build(two_adds(8), config), Error);
}

TEST_F(BuilderTest, RandomSelectionIsReproducibleFromItsSeed) {
  BuilderConfig config;
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    config.random_seed = seed;
    const BuildResult a = build(two_adds(8), config), b = build(two_adds(8), config);
    EXPECT_EQ(a.replay, b.replay);
    seen.insert(a.replay.layers[0].tactic);
  }
  EXPECT_EQ(timer.calls, 0);
  EXPECT_EQ(seen.size(), 3u);
}

TEST_F(BuilderTest, AllowAndDenyGlobsRestrictCandidates) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  BuilderConfig config;
  config.tactics_deny = {"add.b.*"};
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.c.f32");
  config.tactics_deny.clear();
  config.tactics_allow = {"add.a*"};
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.a.f32");
  config.tactics_allow = {"nothing*"};
  EXPECT_THROW(build(two_adds(8), config), Error);
}

TEST_F(BuilderTest, Fp16AndPrecisionConstraints) {
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}, {"t3", 50}};
  BuilderConfig config;
  config.fp16 = true;
  BuildResult r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.a.f16");
  EXPECT_EQ(r.engine.tensors[size_t(r.engine.layers[0].outputs[0])].storage, StorageType::F16);
  EXPECT_EQ(r.stats.reformats, 1u);  // the model input, read in fp16 by both layers
  // With fusion on, the host converts it while uploading, and no reformat layer is left.
  config.fusion = true;
  r = build_engine(two_adds(8), config, device, identity, &timer, registry);
  config.fusion = false;
  EXPECT_EQ(r.stats.reformats, 0u);
  EXPECT_EQ(r.stats.inputs_converted_on_upload, 1u);
  ASSERT_EQ(r.engine.inputs.size(), 1u);
  EXPECT_EQ(r.engine.tensors[size_t(r.engine.inputs[0])].storage, StorageType::F16);
  EXPECT_EQ(r.engine.layers[0].inputs[0], r.engine.inputs[0]);
  for (const EngineLayer& l : r.engine.layers) EXPECT_NE(l.op, "Reformat");
  // Pin the second layer to fp32: a reformat converts y back for it.
  config.layer_precisions["second"] = Precision::FP32;
  config.constraints = PrecisionConstraints::Obey;
  r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[1].tactic, "add.b.f32");
  EXPECT_EQ(r.stats.reformats, 2u);  // the model input to f16 for "first", y back to f32 for "second"
  // Reformats are timed and counted: an fp16 layer that needs its input
  // converted costs its own time plus the conversion's.
  config.layer_precisions.clear();
  timer.ns["reformat"] = 80;  // 50 + 80 > 100: fp32 wins although the fp16 tactic alone is faster
  timer.reformat_calls = 0;
  r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  EXPECT_EQ(r.stats.reformats, 0u);
  const CandidateTiming& f16 = *std::find_if(r.replay.layers[0].candidates.begin(), r.replay.layers[0].candidates.end(),
                                             [](const CandidateTiming& c) { return c.tactic == "add.a.f16"; });
  EXPECT_EQ(f16.median_ns, 50);
  EXPECT_EQ(f16.reformat_ns, 80);
  EXPECT_EQ(timer.reformat_calls, 1);  // once per conversion and size
  // fp16 must be faster beyond the near-tie margin (10%): 95 against 100 buys nothing.
  timer.ns["reformat"] = 0;
  timer.ns["t3"] = 95;
  r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  timer.ns["t3"] = 89;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.a.f16");
  // With --deterministic, the fp32 candidates within the margin are taken in heuristic order.
  timer.ns["t3"] = 95;
  timer.ns["t0"] = 104;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.b.f32");
  config.deterministic = true;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].tactic, "add.a.f32");
  config.deterministic = false;
  timer.ns["t0"] = 300;
  // Without fp16 on the device, --fp16 builds fp32; an obeyed fp16 pin fails.
  device = fake_device(false);
  config.layer_precisions.clear();
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].precision, Precision::FP32);
  config.layer_precisions["first"] = Precision::FP16;
  EXPECT_THROW(build(two_adds(8), config), Error);
  config.constraints = PrecisionConstraints::Prefer;
  EXPECT_EQ(build(two_adds(8), config).replay.layers[0].precision, Precision::FP32);
}

TEST_F(BuilderTest, TheLevelBudgetAppliesPerPrecision) {
  // Level 1 times 2 candidates of each precision: add.a.f16, then add.a.f32 and add.b.f32 (fp16 candidates
  // come first, and must not use up the budget).
  timer.ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}, {"t3", 250}};
  BuilderConfig config;
  config.fp16 = true;
  config.optimization_level = 1;
  const BuildResult r = build(two_adds(8), config);
  EXPECT_EQ(r.replay.layers[0].tactic, "add.b.f32");
  std::vector<std::string> timed;
  for (const CandidateTiming& c : r.replay.layers[0].candidates) timed.push_back(c.tactic);
  EXPECT_EQ(timed, (std::vector<std::string>{"add.a.f16", "add.a.f32", "add.b.f32"}));
}

// Level 3 times six candidates of a precision on a GPU, four on a CPU device and three of its fp16
// ones where fp16 arithmetic is slower than fp32 (what compiles slowest there; docs/bench.md).
TEST(LevelBudget, CpuDevicesTimeFewerAndSlowFp16Fewest) {
  DeviceProfile gpu, cpu, cpu_fast_fp16;
  gpu.type = DeviceType::Discrete;
  cpu.type = cpu_fast_fp16.type = DeviceType::Cpu;
  cpu.fp16_slower = true;
  using builder_impl::candidates_for_level;
  EXPECT_EQ(candidates_for_level(3, gpu, Precision::FP16), 6u);
  EXPECT_EQ(candidates_for_level(3, gpu, Precision::FP32), 6u);
  EXPECT_EQ(candidates_for_level(3, cpu, Precision::FP32), 4u);
  EXPECT_EQ(candidates_for_level(3, cpu, Precision::FP16), 3u);
  EXPECT_EQ(candidates_for_level(3, cpu_fast_fp16, Precision::FP16), 4u);
  EXPECT_EQ(candidates_for_level(5, cpu, Precision::FP16), SIZE_MAX);  // the top level times every one
  EXPECT_EQ(candidates_for_level(0, gpu, Precision::FP32), 1u);
}

// The CPU cost model's rules: forms dominated anywhere, and forms dominated beside another.
TEST(CpuCostModel, DominatedFormsAndFormsDominatedBesideAnother) {
  EXPECT_TRUE(dominated_on_cpu("conv.direct.f32"));
  EXPECT_TRUE(dominated_on_cpu("softmax.row.f16acc32"));
  EXPECT_FALSE(dominated_on_cpu("conv.direct_tile2x8.f32"));
  EXPECT_FALSE(dominated_on_cpu("conv.im2col_gemm.8x8.f16"));
  const std::vector<std::string_view> depthwise = {"conv.depthwise_tile4x8.f16", "conv.depthwise_tile2x8.f16"};
  const std::vector<std::string_view> dense = {"conv.direct_tile2x8.f16", "conv.winograd_f23.f16"};
  EXPECT_TRUE(dominated_on_cpu_beside("conv.im2col_gemm.8x8.f16", depthwise));
  EXPECT_FALSE(dominated_on_cpu_beside("conv.im2col_gemm.8x8.f16", dense));  // the first conv: no depthwise form
  EXPECT_FALSE(dominated_on_cpu_beside("conv.depthwise_tile2x8.f16", depthwise));
  EXPECT_FALSE(dominated_on_cpu_beside("conv.im2col_gemm.8x8.f16", {}));
}

TEST_F(BuilderTest, MarkAllAndMemoryPlan) {
  BuilderConfig config;
  config.optimization_level = 0;
  BuildResult r = build(two_adds(8), config);
  EXPECT_EQ(r.engine.outputs.size(), 1u);
  config.mark_all = true;
  r = build(two_adds(8), config);
  EXPECT_EQ(r.engine.outputs.size(), 2u);
  config.mark_outputs = {"missing"};
  EXPECT_THROW(build(two_adds(8), config), Error);
}

// The heuristic order (what optimization levels cut to) puts the GPU forms first on GPUs only.
TEST(TacticPriority, GpuFormsComeFirstOnGpus) {
  const TacticRegistry& r = TacticRegistry::builtin();
  const Tactic* smemv = r.find("gemm.smemv128x128.f32");
  const Tactic* block = r.find("gemm.block16x16.f32");
  const Tactic* pointwise = r.find("conv.1x1_smemv128x128.f32");
  const Tactic* pointwise_block = r.find("conv.1x1_block16x16.f32");
  ASSERT_TRUE(smemv && block && pointwise && pointwise_block);
  vk::DeviceInfo gpu, cpu;
  gpu.type = vk::DeviceType::Discrete;
  cpu.type = vk::DeviceType::Cpu;
  EXPECT_LT(smemv->priority_on(gpu), block->priority_on(gpu));
  EXPECT_GT(smemv->priority_on(cpu), block->priority_on(cpu));
  EXPECT_LT(pointwise->priority_on(gpu), pointwise_block->priority_on(gpu));
  EXPECT_GT(pointwise->priority_on(cpu), pointwise_block->priority_on(cpu));
  EXPECT_EQ(block->priority_on(gpu), block->priority);  // no GPU priority: the same order everywhere
  // 3x3 Convs: the shared-memory implicit GEMM before the lavapipe forms on GPUs only.
  const Tactic* implicit = r.find("conv.implicit_gemm64x64.f32");
  const Tactic* tile = r.find("conv.direct_tile2x8.f32");
  ASSERT_TRUE(implicit && tile);
  EXPECT_LT(implicit->priority_on(gpu), tile->priority_on(gpu));
  EXPECT_GT(implicit->priority_on(cpu), tile->priority_on(cpu));
}

TEST(MemoryPlan, ReusesSlotsOfDeadTensors) {
  Engine e;
  for (int i = 0; i < 5; ++i)
    e.tensors.push_back(
        EngineTensor{std::string("t").append(std::to_string(i)), DType::Float32, {16}, StorageType::F32, -1});
  // t0 -> L0 -> t1 -> L1 -> t2 -> L2 -> t3 -> L3 -> t4
  for (int i = 0; i < 4; ++i) {
    EngineLayer l;
    l.inputs = {i};
    l.outputs = {i + 1};
    e.layers.push_back(l);
  }
  e.inputs = {0};
  e.outputs = {4};
  plan_memory(e);
  EXPECT_EQ(e.tensors[1].slot, e.tensors[3].slot);
  EXPECT_NE(e.tensors[1].slot, e.tensors[2].slot);
  EXPECT_EQ(e.slots.size(), 4u);  // input, output, two alternating
}

TEST(TacticValidation, ErrorFollowsTheTensorScaleAndSpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor ref = Tensor::from_vector<float>({4}, {100, -50, 0, 1e-3f});
  EXPECT_EQ(validation_error(ref, ref), 0);
  // 0.05 off on the element near zero: small against the tensor's largest magnitude (100).
  EXPECT_NEAR(validation_error(Tensor::from_vector<float>({4}, {100, -50, 0.05f, 1e-3f}), ref), 5e-4, 1e-6);
  EXPECT_GT(validation_error(Tensor::from_vector<float>({4}, {100, -50, 2, 1e-3f}), ref), 1e-2);
  EXPECT_TRUE(std::isinf(validation_error(Tensor::from_vector<float>({4}, {100, -50, nan, 1e-3f}), ref)));
  EXPECT_TRUE(std::isinf(validation_error(Tensor::from_vector<float>({2, 2}, {100, -50, 0, 1e-3f}), ref)));
  const Tensor special = Tensor::from_vector<float>({3}, {nan, inf, 1});
  EXPECT_EQ(validation_error(special, special), 0);
  EXPECT_TRUE(std::isinf(validation_error(Tensor::from_vector<float>({3}, {nan, -inf, 1}), special)));
  const Tensor idx = Tensor::from_vector<int64_t>({4}, {0, 1, 2, 3});
  EXPECT_EQ(validation_error(Tensor::from_vector<int64_t>({4}, {0, 1, 2, 4}), idx), 0.25);
  EXPECT_EQ(validation_tolerance(Precision::FP32, DType::Int64), 0);
  EXPECT_LT(validation_tolerance(Precision::FP32, DType::Float32),
            validation_tolerance(Precision::FP16, DType::Float16));
}

TEST(GlobMatch, Basics) {
  EXPECT_TRUE(glob_match("gemm.*", "gemm.reg4x4.f32"));
  EXPECT_TRUE(glob_match("*.f16", "conv.direct.f16"));
  EXPECT_FALSE(glob_match("*.f16", "conv.direct.f16acc32"));
  EXPECT_TRUE(glob_match("conv.?x?.*", "conv.1x1.f32"));
  EXPECT_FALSE(glob_match("conv", "conv.direct.f32"));
}

// The same builds on lavapipe: the engine runs and matches the reference; the
// fault-injection switch makes the named tactic's layers plainly wrong.
TEST_F(BuilderTest, RunsOnVulkanAndFaultInjectionBreaksTheNamedTactic) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  device = ctx->device().info();
  identity = device_identity(device);
  for (bool fp16 : {false, true}) {
    const Graph g = two_adds(1001);
    BuilderConfig config;
    config.optimization_level = 0;
    config.fp16 = fp16;
    config.mark_all = true;
    const BuildResult r = build(g, config);
    TensorMap inputs{{"in0", random_floats({1001}, 1)}};
    const Tensor& w = g.initializers.at("in1");
    vk::EngineExecutor exec(ctx->device(), r.engine);
    const TensorMap out = exec.run(inputs);
    for (int64_t i = 0; i < 1001; ++i) {
      const float x = inputs["in0"].data<float>()[i], y = x + w.data<float>()[i];
      EXPECT_NEAR(out.at("y").data<float>()[i], y, fp16 ? 1e-2 : 1e-6);
      EXPECT_NEAR(out.at("z").data<float>()[i], y + x, fp16 ? 2e-2 : 1e-6);
    }
    vk::ExecutorOptions faulty;
    faulty.faulty_tactics = {r.replay.layers[1].tactic};
    vk::EngineExecutor broken(ctx->device(), r.engine, faulty);
    const TensorMap bad = broken.run(inputs);
    if (r.replay.layers[0].tactic != r.replay.layers[1].tactic) {
      EXPECT_TRUE(bad.at("y").bit_equal(out.at("y")));
    }
    EXPECT_FALSE(bad.at("z").bit_equal(out.at("z")));
  }
  ctx->check_validation("builder tests");
}

// --validate-tactics on lavapipe: a candidate the fault switch breaks is
// rejected before it is timed, with its error in the replay and the timing
// cache; the others are validated and timed as usual; a layer with no passing
// candidate is a clear error; layers the reference did not compute are not checked.
TEST_F(BuilderTest, ValidationRejectsAFaultyTacticBeforeTimingIt) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  device = ctx->device().info();
  identity = device_identity(device);
  vk::VulkanPlanTimer real_timer(ctx->device());
  const Graph g = two_adds(1000);  // add.c (vec4) serves too
  TensorMap values{{"in0", random_floats({1000}, 1)}};
  TensorMap computed = ReferenceBackend(g).run(values, g.node_outputs());
  values.merge(computed);
  auto validated = [&](int level, std::vector<std::string> faulty, TimingCache* cache = nullptr) {
    BuilderConfig config;
    config.fusion = false;
    config.optimization_level = level;
    config.validation_values = &values;
    config.faulty_tactics = std::move(faulty);
    config.timing_cache = cache;
    return build_engine(g, config, device, identity, &real_timer, registry);
  };

  for (int level : {0, 3}) {
    SCOPED_TRACE("optimization level " + std::to_string(level));
    TimingCache cache;
    const BuildResult r = validated(level, {"add.a.f32"}, &cache);
    EXPECT_EQ(r.stats.layers_validated, 2u);
    EXPECT_EQ(r.stats.candidates_rejected, 2u);
    for (const TacticChoice& layer : r.replay.layers) {
      EXPECT_NE(layer.tactic, "add.a.f32");
      if (level == 0) {
        EXPECT_EQ(layer.tactic, "add.b.f32");  // the first that passes, in heuristic order
      }
      const auto rejected = std::find_if(layer.candidates.begin(), layer.candidates.end(),
                                         [](const CandidateTiming& c) { return c.tactic == "add.a.f32"; });
      ASSERT_NE(rejected, layer.candidates.end());
      EXPECT_TRUE(rejected->rejected);
      EXPECT_GT(*rejected->validation_error, 1e-3);
      EXPECT_NE(rejected->error->find("rejected by validation"), std::string::npos) << *rejected->error;
      if (level > 0) {
        const auto kept = std::find_if(layer.candidates.begin(), layer.candidates.end(),
                                       [](const CandidateTiming& c) { return c.tactic == "add.b.f32"; });
        ASSERT_NE(kept, layer.candidates.end());
        EXPECT_FALSE(kept->rejected);
        EXPECT_LE(*kept->validation_error, 1e-6);
        EXPECT_FALSE(kept->samples_ns.empty());
      }
    }
    const std::vector<TimingEntry> entries = cache.entries();
    EXPECT_TRUE(std::any_of(entries.begin(), entries.end(), [](const TimingEntry& e) {
      return e.tactic == "add.a.f32" && e.rejected && e.validation_error && *e.validation_error > 1e-3;
    }));
  }

  try {
    validated(3, {"add.*"});
    ADD_FAILURE() << "a layer whose every candidate is rejected must fail the build";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every candidate tactic of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("add.b.f32"), std::string::npos) << e.what();
  }

  TensorMap inputs_only{{"in0", values.at("in0")}};
  BuilderConfig config;
  config.fusion = false;
  config.validation_values = &inputs_only;
  const BuildResult unchecked = build_engine(g, config, device, identity, &real_timer, registry);
  EXPECT_EQ(unchecked.stats.layers_validated, 0u);
  ctx->check_validation("tactic validation");
}

// An execution context records its command buffer once: runs with new inputs
// give new outputs, and the staging memory path (forced, as on a discrete GPU)
// gives the same bits as the in-place path.
TEST_F(BuilderTest, ExecutionContextResubmitsAndStagingGivesTheSameBits) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  device = ctx->device().info();
  identity = device_identity(device);
  vk::DeviceOptions staged_options;
  staged_options.validation = true;
  staged_options.force_staging = true;
  vk::Context staged(staged_options);
  ASSERT_EQ(staged.device().info().memory_path(), vk::MemoryPath::Staging);
  const Graph g = two_adds(777);
  BuilderConfig config;
  config.optimization_level = 0;
  config.mark_all = true;
  const BuildResult r = build(g, config);
  vk::EngineExecutor direct(ctx->device(), r.engine), through_staging(staged.device(), r.engine);
  for (uint64_t seed : {3, 4, 5}) {
    const TensorMap inputs{{"in0", random_floats({777}, seed)}};
    const TensorMap a = direct.run(inputs), b = through_staging.run(inputs);
    const float x = inputs.at("in0").data<float>()[100], w = g.initializers.at("in1").data<float>()[100];
    EXPECT_EQ(a.at("z").data<float>()[100], (x + w) + x) << "seed " << seed;
    for (const auto& [name, t] : a) EXPECT_TRUE(t.bit_equal(b.at(name))) << name << ", seed " << seed;
  }
  ctx->check_validation("in-place executor");
  staged.check_validation("staging executor");
}

}  // namespace
}  // namespace vkg::test
