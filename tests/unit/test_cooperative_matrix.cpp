// Cooperative matrices through VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix: the shaders'
// two builds (cmake/shaders.cmake, `vkgraphy-coopmat-khr`), the device profile's choice between the
// extensions and its switch, and the tensor-core tactics taking the build of the extension in use.
// lavapipe has no cooperative matrices: running the KHR shaders is the GPU run's (bench/gpu.sh).
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/engine/shader_library.h"
#include "runtime/vulkan/cooperative_matrix.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/shader_table.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

using vk::DeviceInfo;

// The OpCapability operands of a module.
std::vector<uint32_t> capabilities(std::span<const uint32_t> spirv) {
  constexpr uint32_t kOpCapability = 17, kHeaderWords = 5;
  std::vector<uint32_t> out;
  for (size_t i = kHeaderWords; i < spirv.size();) {
    const uint32_t words = spirv[i] >> 16, opcode = spirv[i] & 0xffffu;
    if (words == 0) break;
    if (opcode == kOpCapability && words == 2) out.push_back(spirv[i + 1]);
    i += words;
  }
  return out;
}

constexpr uint32_t kCapabilityCooperativeMatrixNV = 5357, kCapabilityCooperativeMatrixKHR = 6022;
const char* const kCoopmatShaders[] = {"gemm/coopmat", "gemm/coopmat_vec", "gemm/coopmat_peak",
                                       "conv/implicit_coopmat"};

bool has(const std::vector<uint32_t>& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(CooperativeMatrixShaders, BothBuildsDeclareTheirOwnExtension) {
  for (const char* base : kCoopmatShaders) {
    for (const char* precision : {".f16", ".f16acc32"}) {
      const std::string nv = std::string(base) + precision, khr = std::string(base) + "_khr" + precision;
      const std::vector<uint32_t> nv_caps = capabilities(builtin_shader(nv));
      EXPECT_TRUE(has(nv_caps, kCapabilityCooperativeMatrixNV)) << nv;
      EXPECT_FALSE(has(nv_caps, kCapabilityCooperativeMatrixKHR)) << nv;
#if VKGRAPHY_KHR_SHADERS
      // Configured with the newer glslang (./setup.sh installs it): compiled, validated, embedded.
      ASSERT_TRUE(has_builtin_shader(khr)) << khr;
      const std::vector<uint32_t> khr_caps = capabilities(builtin_shader(khr));
      EXPECT_TRUE(has(khr_caps, kCapabilityCooperativeMatrixKHR)) << khr;
      EXPECT_FALSE(has(khr_caps, kCapabilityCooperativeMatrixNV)) << khr;
#else
      EXPECT_FALSE(has_builtin_shader(khr)) << khr << ": configured without the KHR shader tools";
#endif
    }
  }
}

// The emulated builds (VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX, ctest's unit_coopmat_emulated)
// run on any device: they declare neither extension's capability.
TEST(CooperativeMatrixShaders, TheEmulatedBuildsNeedNoExtension) {
  for (const char* base : {"gemm/coopmat_emu", "conv/implicit_coopmat_emu"}) {
    for (const char* precision : {".f16", ".f16acc32"}) {
      const std::string name = std::string(base) + precision;
      ASSERT_TRUE(has_builtin_shader(name)) << name;
      const std::vector<uint32_t> caps = capabilities(builtin_shader(name));
      EXPECT_FALSE(has(caps, kCapabilityCooperativeMatrixNV)) << name;
      EXPECT_FALSE(has(caps, kCapabilityCooperativeMatrixKHR)) << name;
    }
  }
}

vkg::CooperativeMatrixProperties khr_property(uint32_t m, uint32_t n, uint32_t k, const char* ab, const char* cd,
                                             const char* scope = "subgroup", bool saturating = false) {
  return {m, n, k, ab, ab, cd, cd, saturating, scope};
}

TEST(CooperativeMatrixProfile, TheTacticsTakeFp16SubgroupShapesOfKhr) {
  const std::vector<vkg::CooperativeMatrixProperties> reported = {
      khr_property(16, 16, 16, "f16", "f16"),           khr_property(16, 16, 16, "f16", "f32"),
      khr_property(16, 16, 32, "s8", "s32"),            khr_property(16, 8, 16, "f16", "f32", "workgroup"),
      khr_property(16, 16, 16, "f16", "f16", "subgroup", true),
      {16, 16, 16, "f16", "f16", "f32", "f16", false, "subgroup"},  // C and D of different types
      khr_property(16, 16, 16, "f16", "f16")};                       // listed twice
  EXPECT_EQ(vk::fp16_shapes(reported),
            (std::vector<vkg::CooperativeMatrixShape>{{16, 16, 16, false}, {16, 16, 16, true}}));
}

DeviceInfo gpu_with_both_extensions() {
  DeviceInfo d;
  d.name = "a GPU";
  d.type = vkg::DeviceType::Discrete;
  d.api_version = (1u << 22) | (3u << 12);
  d.has_compute_queue = true;
  d.shader_float16 = d.storage_buffer_16bit = true;
  d.subgroup_size = 32;
  d.subgroup_size_control = true;
  d.min_subgroup_size = d.max_subgroup_size = 32;
  d.cooperative_matrix_khr_properties = {khr_property(16, 16, 16, "f16", "f32"), khr_property(16, 16, 32, "s8", "s32")};
  d.cooperative_matrix_nv_shapes = {{16, 16, 16, false}, {16, 16, 16, true}};
  d.cooperative_matrix = d.cooperative_matrix_khr = true;
  d.cooperative_matrix_shapes = vk::fp16_shapes(d.cooperative_matrix_khr_properties);
  return d;
}

// A square fp32 MatMul [n, n] x [n, n] planned on gpu_with_both_extensions(), with room for the
// tensor-core workgroups (`shared_kib` KiB of shared memory, workgroups of up to 1024 invocations).
TacticPlanner square_matmul_on_a_gpu(int64_t n, uint32_t shared_kib) {
  TacticPlanner p("MatMul", 13);
  p.input(DType::Float32, {n, n});
  p.input(DType::Float32, {n, n});
  p.output(DType::Float32, {n, n});
  p.device() = gpu_with_both_extensions();
  p.device().max_shared_memory_bytes = shared_kib << 10;
  for (int i = 0; i < 3; ++i) p.device().max_workgroup_count[i] = 65535, p.device().max_workgroup_size[i] = 1024;
  p.device().max_workgroup_invocations = 1024;
  return p;
}

TEST(CooperativeMatrixProfile, KhrIsPreferredAndItsSwitchFallsBackToNv) {
  DeviceInfo d = gpu_with_both_extensions();
  EXPECT_TRUE(d.has_feature("cooperative-matrix-khr"));
  EXPECT_TRUE(d.cooperative_matrix_shape(16, 16, 16, true));
  EXPECT_FALSE(d.cooperative_matrix_shape(16, 16, 16, false));  // KHR offers no fp16 accumulators here
  const std::string text = vkg::format_device_info(d);
  EXPECT_NE(text.find("cooperative matrix: yes (VK_KHR_cooperative_matrix, fp16 inputs, MxNxK: 16x16x16 fp32 acc)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("16x16x16 f16*f16+f32->f32, subgroup; 16x16x32 s8*s8+s32->s32, subgroup"), std::string::npos)
      << text;
  EXPECT_NE(text.find("VK_NV_cooperative_matrix: 16x16x16 fp16 acc, 16x16x16 fp32 acc (KHR preferred)"),
            std::string::npos)
      << text;

  vk::DeviceOptions options;
  options.disable_cooperative_matrix_khr = true;
  vk::apply_switches(d, options);
  EXPECT_FALSE(d.has_feature("cooperative-matrix-khr"));
  EXPECT_TRUE(d.has_feature("cooperative-matrix"));  // through NV now
  EXPECT_TRUE(d.cooperative_matrix_shape(16, 16, 16, false));
  EXPECT_EQ(d.switched_off, std::vector<std::string>{"cooperative-matrix-khr"});
  EXPECT_NE(vkg::format_device_info(d).find("cooperative matrix: yes (VK_NV_cooperative_matrix"), std::string::npos);

  DeviceInfo khr_only = gpu_with_both_extensions();
  khr_only.cooperative_matrix_nv_shapes.clear();
  vk::apply_switches(khr_only, options);  // nothing to fall back to
  EXPECT_FALSE(khr_only.has_feature("cooperative-matrix"));

  DeviceInfo all_off = gpu_with_both_extensions();
  options.disable_cooperative_matrix = true;
  vk::apply_switches(all_off, options);
  EXPECT_FALSE(all_off.has_feature("cooperative-matrix"));
  EXPECT_FALSE(all_off.has_feature("cooperative-matrix-khr"));
  EXPECT_EQ(all_off.switched_off, (std::vector<std::string>{"cooperative-matrix", "cooperative-matrix-khr"}));
}

TEST(CooperativeMatrixTactics, TakeTheBuildOfTheExtensionInUse) {
  for (const bool khr : {true, false}) {
    TacticPlanner p = square_matmul_on_a_gpu(256, 48);
    if (!khr) {
      vk::DeviceOptions options;
      options.disable_cooperative_matrix_khr = true;
      vk::apply_switches(p.device(), options);
    }
    const std::string suffix = khr ? "_khr.f16acc32" : ".f16acc32";
    for (const auto& [tactic, shader] : {std::pair{"gemm.coopmat64x64.f16acc32", "gemm/coopmat"},
                                         {"gemm.coopmatv64x64.f16acc32", "gemm/coopmat_vec"}}) {
      std::string why;
      const std::optional<LayerPlan> plan = p.plan(tactic, why);
      ASSERT_TRUE(plan) << tactic << ": " << why;
      EXPECT_EQ(plan->dispatches.at(0).shader, shader + suffix) << tactic;
      EXPECT_EQ(plan->dispatches.at(0).subgroup_size, 32u) << tactic;
    }
  }
}

// A device whose subgroups cannot be 32 wide (Intel's 8 to 16): the tensor-core GEMMs number their
// subgroups at its default size, pinned, and gemm/coopmat_vec takes that size as kLanes.
TEST(CooperativeMatrixTactics, PlanAtTheDevicesSubgroupSizeWhereItCannotBe32) {
  TacticPlanner p = square_matmul_on_a_gpu(256, 64);
  p.device().subgroup_size = 16;
  p.device().min_subgroup_size = 8;
  p.device().max_subgroup_size = 16;
  for (const char* tactic : {"gemm.coopmat64x64.f16acc32", "gemm.coopmatv64x64.f16acc32", "gemm.coopmatv128x128.f16acc32"}) {
    std::string why;
    const std::optional<LayerPlan> plan = p.plan(tactic, why);
    ASSERT_TRUE(plan) << tactic << ": " << why;
    const Dispatch& d = plan->dispatches.at(0);
    EXPECT_EQ(d.subgroup_size, 16u) << tactic;
    const uint32_t subgroups = std::string(tactic).find("64x64") != std::string::npos ? 4 : 8;
    EXPECT_EQ(d.spec.at(0), (SpecValue{0, subgroups * 16})) << tactic;  // the workgroup
    if (d.shader.find("coopmat_vec") != std::string::npos) {
      EXPECT_NE(std::find(d.spec.begin(), d.spec.end(), SpecValue{12, 16}), d.spec.end()) << tactic;
    }
  }
}

// The emulated fragments (common/coopmat.glsl) hold two of their 16 rows per invocation: a device
// with subgroups of 4 (SwiftShader's) would leave rows out, so the tactics decline there.
TEST(CooperativeMatrixTactics, EmulatedOnesNeedSubgroupsOfEight) {
  TacticPlanner p = square_matmul_on_a_gpu(64, 64);
  p.device().cooperative_matrix_emulated = true;
  p.device().subgroup_size = p.device().min_subgroup_size = p.device().max_subgroup_size = 4;
  for (const char* tactic : {"gemm.coopmat64x64.f16acc32", "gemm.coopmatv64x64.f16acc32"}) {
    std::string why;
    EXPECT_FALSE(p.plan(tactic, why)) << tactic;
    EXPECT_EQ(why, "the emulated cooperative matrices need subgroups of 8 or more") << tactic;
  }
  p.device().subgroup_size = p.device().min_subgroup_size = p.device().max_subgroup_size = 8;
  std::string why;
  EXPECT_TRUE(p.plan("gemm.coopmatv64x64.f16acc32", why)) << why;
}

TEST(CooperativeMatrixEngines, NeedTheExtensionTheyWereBuiltFor) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  EXPECT_EQ(vk::cooperative_matrix_need(builtin_shader("gemm/coopmat_vec.f16")), vk::CooperativeMatrixNeed::Nv);
  EXPECT_EQ(vk::cooperative_matrix_need(builtin_shader("gemm/smem.f32")), vk::CooperativeMatrixNeed::None);
  for (const char* shader : {"gemm/coopmat.f16", "gemm/coopmat_khr.f16"}) {
    if (!has_builtin_shader(shader)) continue;  // the KHR build where configured with its tools
    Engine engine;  // as an engine file from a GPU would hold it: the shader's words
    const auto words = builtin_shader(shader);
    engine.spirv[shader] = std::vector<uint32_t>(words.begin(), words.end());
    const DeviceInfo& d = ctx->device().info();
    const bool khr = std::string(shader).find("_khr") != std::string::npos;
    if (d.cooperative_matrix && d.cooperative_matrix_khr == khr) {  // a GPU with that extension in use
      EXPECT_NO_THROW(vk::EngineExecutor(ctx->device(), engine)) << shader;
      continue;
    }
    try {
      vk::EngineExecutor executor(ctx->device(), engine);
      ADD_FAILURE() << shader << ": an engine needing cooperative matrices ran on " << d.name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("the engine's shader '") + shader + "' uses VK_"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("build the engine on this device"), std::string::npos) << e.what();
    }
  }
}

TEST(CooperativeMatrixProfile, TheTestDeviceReportsWhatItHas) {
  std::string why;
  vk::Context* ctx = test_vk_context(&why);
  if (ctx == nullptr) VKG_NO_VULKAN(why);
  const DeviceInfo& d = ctx->device().info();
  EXPECT_EQ(d.cooperative_matrix_khr, d.cooperative_matrix && !d.cooperative_matrix_khr_properties.empty() &&
                                          d.cooperative_matrix_shapes == vk::fp16_shapes(d.cooperative_matrix_khr_properties))
      << vkg::format_device_info(d);
  if (d.driver_name == "llvmpipe") {  // CI's device: no cooperative matrices of either kind
    EXPECT_FALSE(d.cooperative_matrix);
    EXPECT_TRUE(d.cooperative_matrix_khr_properties.empty());
    EXPECT_TRUE(d.cooperative_matrix_nv_shapes.empty());
  }
}

}  // namespace
}  // namespace vkg::test
