// The Vulkan device layer on lavapipe (or whatever driver VK_DRIVER_FILES names):
// device listing and selection, the add shader against the CPU, timestamps. Every
// test runs with the Khronos validation layer and fails on any validation message.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <spirv-tools/libspirv.hpp>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/compute_pipeline.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/plan_timer.h"
#include "runtime/vulkan/shader_table.h"
#include "runtime/vulkan/spirv_disassembly.h"
#include "tests/unit/vk_test_util.h"

namespace vkg::vk {
namespace {


// Selects lavapipe unless the environment already names a driver; fails when no
// Vulkan device can be opened (skips where VKGRAPHY_TEST_NO_VULKAN says so).
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::select_test_vulkan_driver();
    std::string why;
    if (!vulkan_available(&why)) VKG_NO_VULKAN(why);
  }

  // A context with validation on; the caller asserts zero messages at the end.
  static std::unique_ptr<Context> open(const std::string& selector = "", bool force_staging = false) {
    DeviceOptions options;
    options.device = selector;
    options.validation = true;
    options.force_staging = force_staging;
    return std::make_unique<Context>(options);
  }

  static void expect_no_validation_messages(Context& ctx) {
    const std::vector<std::string> messages = ctx.instance().validation_messages();
    EXPECT_TRUE(messages.empty()) << messages.size() << " validation message(s), first: " << messages.front();
  }
};

DeviceInfo fake_device(uint32_t index, const std::string& name, DeviceType type) {
  DeviceInfo d;
  d.index = index;
  d.name = name;
  d.type = type;
  d.api_version = (1u << 22) | (3u << 12);
  d.has_compute_queue = true;
  return d;
}

TEST(VulkanDeviceSelection, DefaultPrefersDiscreteThenIntegratedThenCpu) {
  std::vector<DeviceInfo> devices = {fake_device(0, "llvmpipe (LLVM 15)", DeviceType::Cpu),
                                     fake_device(1, "Intel UHD 770", DeviceType::Integrated),
                                     fake_device(2, "NVIDIA H100", DeviceType::Discrete)};
  EXPECT_EQ(select_device(devices, ""), 2u);
  devices.pop_back();
  EXPECT_EQ(select_device(devices, ""), 1u);
  devices.pop_back();
  EXPECT_EQ(select_device(devices, ""), 0u);
}

TEST(VulkanDeviceSelection, DefaultSkipsUnsupportedDevices) {
  std::vector<DeviceInfo> devices = {fake_device(0, "llvmpipe", DeviceType::Cpu),
                                     fake_device(1, "Old GPU", DeviceType::Discrete)};
  devices[1].api_version = (1u << 22) | (1u << 12);  // Vulkan 1.1
  EXPECT_EQ(select_device(devices, ""), 0u);
  EXPECT_THROW(select_device(devices, "1"), Error);
  devices.erase(devices.begin());
  EXPECT_THROW(select_device(devices, ""), Error);
}

TEST(VulkanDeviceSelection, ByIndexAndCaseInsensitiveSubstring) {
  const std::vector<DeviceInfo> devices = {fake_device(0, "llvmpipe (LLVM 15)", DeviceType::Cpu),
                                           fake_device(1, "NVIDIA H100", DeviceType::Discrete)};
  EXPECT_EQ(select_device(devices, "0"), 0u);
  EXPECT_EQ(select_device(devices, "1"), 1u);
  EXPECT_EQ(select_device(devices, "LLVMpipe"), 0u);
  EXPECT_EQ(select_device(devices, "h100"), 1u);
}

TEST(VulkanDeviceSelection, BadSelectorIsAClearError) {
  const std::vector<DeviceInfo> devices = {fake_device(0, "llvmpipe (LLVM 15)", DeviceType::Cpu)};
  try {
    select_device(devices, "7");
    FAIL() << "index 7 selected a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no Vulkan device has index 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[0] llvmpipe"), std::string::npos) << e.what();
  }
  try {
    select_device(devices, "radeon");
    FAIL() << "'radeon' selected a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'radeon' matches no Vulkan device"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_device({}, ""), Error);
  EXPECT_THROW(select_device(devices, "99999999999999999999"), Error);
}

TEST(VulkanDeviceSelection, ValidationFromEnvironment) {
  const char* old = std::getenv("VKGRAPHY_VK_VALIDATION");
  const std::string saved = old ? old : "";
  setenv("VKGRAPHY_VK_VALIDATION", "1", 1);
  EXPECT_TRUE(validation_from_env());
  setenv("VKGRAPHY_VK_VALIDATION", "off", 1);
  EXPECT_FALSE(validation_from_env());
  setenv("VKGRAPHY_VK_VALIDATION", "maybe", 1);
  EXPECT_THROW(validation_from_env(), Error);
  unsetenv("VKGRAPHY_VK_VALIDATION");
  EXPECT_FALSE(validation_from_env());
  if (old) setenv("VKGRAPHY_VK_VALIDATION", saved.c_str(), 1);
}

TEST(VulkanDeviceMemory, PathFollowsTheMemoryTypesAndTheSwitch) {
  DeviceInfo d = fake_device(0, "gpu", DeviceType::Discrete);
  EXPECT_EQ(d.memory_path(), MemoryPath::Staging);
  EXPECT_NE(format_device_info(d).find("memory path: staging (device-local memory is not host-visible"),
            std::string::npos);
  d.device_local_host_visible = true;
  EXPECT_EQ(d.memory_path(), MemoryPath::Rebar);
  d.device_local_host_cached = true;
  EXPECT_EQ(d.memory_path(), MemoryPath::Unified);
  DeviceOptions options;
  options.force_staging = true;
  apply_switches(d, options);
  EXPECT_EQ(d.memory_path(), MemoryPath::Staging);
  EXPECT_NE(format_device_info(d).find("memory path: staging (forced by --vk-force-staging"), std::string::npos);
  EXPECT_STREQ(memory_path_name(MemoryPath::Rebar), "resizable-bar");
}

// GPUs warm up before a candidate's samples (their clocks drop while the host prepares it);
// CPU drivers such as lavapipe do not, so CI builds pay nothing for it.
TEST(VulkanPlanTimerWarmup, GpusWarmUpAndCpuDriversDoNot) {
  EXPECT_EQ(VulkanPlanTimer::default_warmup_ms(fake_device(0, "cpu", DeviceType::Cpu)), 0);
  for (DeviceType t : {DeviceType::Discrete, DeviceType::Integrated, DeviceType::Virtual, DeviceType::Other})
    EXPECT_EQ(VulkanPlanTimer::default_warmup_ms(fake_device(0, "gpu", t)), VulkanPlanTimer::kGpuWarmupMs);
}

TEST(VulkanDeviceFeatures, NamedPropertiesAndTheirSwitches) {
  DeviceInfo d = fake_device(0, "gpu", DeviceType::Discrete);
  d.shader_float16 = d.storage_buffer_16bit = true;
  d.subgroup_size = 32;
  d.subgroup_size_control = true;
  d.min_subgroup_size = 32;
  d.max_subgroup_size = 64;
  d.cooperative_matrix = true;
  d.cooperative_matrix_shapes = {{16, 16, 16, false}, {16, 16, 16, true}, {16, 8, 8, true}};
  d.shader_int64 = true;
  d.subgroup_shuffle = true;
  d.texel_buffers = true;
  d.max_texel_buffer_elements = 1u << 27;
  d.nan_preserve = d.nan_preserve_fp16 = true;
  EXPECT_TRUE(d.has_feature("nan-preserve"));
  EXPECT_NE(format_device_info(d).find("NaN/Inf preserved: yes (SignedZeroInfNanPreserve in every pipeline, fp32 and "
                                       "fp16)"),
            std::string::npos);
  EXPECT_TRUE(d.has_feature("texel-buffers"));
  EXPECT_NE(format_device_info(d).find("texel buffers: yes (fp32 and fp16 vec4 reads, up to 134217728 texels)"),
            std::string::npos);
  EXPECT_TRUE(d.has_feature("fp16"));
  EXPECT_TRUE(d.has_feature("int64"));
  EXPECT_TRUE(d.has_feature("subgroup-shuffle"));
  EXPECT_NE(format_device_info(d).find("subgroup size: 32 | subgroup shuffles: yes\n"), std::string::npos);
  EXPECT_TRUE(d.has_feature("subgroup-size-control"));
  EXPECT_TRUE(d.has_feature("cooperative-matrix"));
  EXPECT_THROW(d.has_feature("warp-drive"), Error);
  EXPECT_TRUE(d.cooperative_matrix_shape(16, 16, 16, true));
  EXPECT_FALSE(d.cooperative_matrix_shape(16, 8, 8, false));
  const std::string text = format_device_info(d);
  EXPECT_NE(text.find("subgroup size control: yes (32 to 64, full subgroups)"), std::string::npos) << text;
  EXPECT_NE(text.find("cooperative matrix: yes (VK_NV_cooperative_matrix, fp16 inputs, MxNxK: 16x16x16 fp16 acc, "
                      "16x16x16 fp32 acc, 16x8x8 fp32 acc)"),
            std::string::npos)
      << text;

  DeviceInfo no_fp16 = d;
  DeviceOptions fp16_off;
  fp16_off.disable_fp16 = true;
  apply_switches(no_fp16, fp16_off);  // the tensor-core tactics are fp16: they go with it
  EXPECT_FALSE(no_fp16.has_feature("cooperative-matrix"));
  EXPECT_TRUE(no_fp16.has_feature("subgroup-size-control"));
  EXPECT_EQ(no_fp16.switched_off, std::vector<std::string>{"fp16"});  // named as switched: what the user did

  DeviceOptions options;
  options.disable_subgroup_size_control = true;
  options.disable_cooperative_matrix = true;
  options.disable_int64 = true;
  options.disable_subgroup_shuffle = true;
  options.disable_texel_buffers = true;
  options.disable_nan_preserve = true;
  apply_switches(d, options);
  EXPECT_FALSE(d.has_feature("subgroup-shuffle"));
  EXPECT_NE(format_device_info(d).find("subgroup shuffles: no\n"), std::string::npos);
  EXPECT_FALSE(d.has_feature("nan-preserve"));
  EXPECT_NE(format_device_info(d).find("NaN/Inf preserved: no\n"), std::string::npos);
  EXPECT_FALSE(d.has_feature("texel-buffers"));
  EXPECT_NE(format_device_info(d).find("texel buffers: no\n"), std::string::npos);
  EXPECT_FALSE(d.has_feature("int64"));
  EXPECT_NE(format_device_info(d).find("64-bit integers: no"), std::string::npos);
  EXPECT_FALSE(d.has_feature("subgroup-size-control"));
  EXPECT_FALSE(d.has_feature("cooperative-matrix"));
  EXPECT_FALSE(d.cooperative_matrix_shape(16, 16, 16, true));
  EXPECT_NE(format_device_info(d).find("subgroup size control: no\n    cooperative matrix: no"), std::string::npos);
  EXPECT_EQ(d.switched_off, (std::vector<std::string>{"subgroup-size-control", "cooperative-matrix", "int64",
                                                      "subgroup-shuffle", "texel-buffers", "nan-preserve"}));
  DeviceInfo lacking = fake_device(0, "cpu", DeviceType::Cpu);  // a switch on a feature the device lacks
  apply_switches(lacking, options);
  EXPECT_TRUE(lacking.switched_off.empty());
}

TEST(VulkanShaderTable, EmbedsTheAddShader) {
  const std::span<const uint32_t> words = builtin_shader("elementwise/add.f32");
  ASSERT_GT(words.size(), 5u);
  EXPECT_EQ(words[0], 0x07230203u);  // SPIR-V magic
  EXPECT_FALSE(builtin_shader("elementwise/add.f16").empty());
  EXPECT_THROW(builtin_shader("elementwise/nope.f32"), Error);
}

TEST(VulkanShaderTable, DeclaresNanPreservationOnTheEntryPoint) {
  const std::span<const uint32_t> f32 = builtin_shader("elementwise/unary.f32");
  const std::vector<uint32_t> patched = preserving_nan(f32, true);
  ASSERT_EQ(patched.size(), f32.size() + 2 + 4);  // one capability, one execution mode (no Float16 here)
  const std::string text = disassemble_spirv(patched);
  EXPECT_NE(text.find("OpCapability SignedZeroInfNanPreserve"), std::string::npos) << text.substr(0, 800);
  EXPECT_NE(text.find("OpExecutionMode %main SignedZeroInfNanPreserve 32"), std::string::npos) << text.substr(0, 800);
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  EXPECT_TRUE(tools.Validate(patched));
  EXPECT_EQ(preserving_nan(patched, true), patched);  // declared once

  // An fp16 build declares Float16: 16-bit floats too where the device preserves them.
  const std::span<const uint32_t> f16 = builtin_shader("elementwise/unary.f16");
  const std::string both = disassemble_spirv(preserving_nan(f16, true));
  EXPECT_NE(both.find("OpExecutionMode %main SignedZeroInfNanPreserve 16"), std::string::npos);
  EXPECT_TRUE(tools.Validate(preserving_nan(f16, true)));
  EXPECT_EQ(disassemble_spirv(preserving_nan(f16, false)).find("SignedZeroInfNanPreserve 16"), std::string::npos);
}

TEST(VulkanShaderTable, FindsTheTexelBindingsAndTheirViewFormats) {
  EXPECT_EQ(texel_buffer_bindings(builtin_shader("gemm/block_texel.f32")), 0b11u);  // A and B
  EXPECT_EQ(texel_buffer_bindings(builtin_shader("gemm/block_wide_a.f32")), 0u);
  EXPECT_EQ(texel_buffer_bindings(builtin_shader("gemm/block.f32")), 0u);
  EXPECT_EQ(texel_buffer_bindings(builtin_shader("elementwise/add.f16")), 0u);
  PipelineDesc desc{"gemm/block_texel.f32", 5, 96, {}};
  EXPECT_EQ(texel_view_format(desc, 1), VK_FORMAT_R32G32B32A32_SFLOAT);
  desc.name = "gemm/block_texel.f16acc32";
  EXPECT_EQ(texel_view_format(desc, 1), VK_FORMAT_R16G16B16A16_SFLOAT);
  desc.specialization = {SpecConstant::u32(40, 0b10)};  // a reformat fused into B: fp32 texels
  EXPECT_EQ(texel_view_format(desc, 1), VK_FORMAT_R32G32B32A32_SFLOAT);
  EXPECT_EQ(texel_view_format(desc, 0), VK_FORMAT_R16G16B16A16_SFLOAT);
}

TEST_F(VulkanTest, TexelBindingsNeedTheDeviceFeatureAndFitAView) {
  auto ctx = open();
  Device& device = ctx->device();
  if (!device.info().texel_buffers) GTEST_SKIP() << "no texel buffers on " << device.info().name;
  const PipelineDesc desc{"gemm/block_texel.f32", 5, 96, {SpecConstant::u32(0, 64)}};
  ComputePipeline pipeline(device, builtin_shader(desc.name), desc);
  EXPECT_EQ(pipeline.texel_bindings(), 0b11u);
  Buffer small(device, 16), odd(device, 20);  // odd: its last texel lies in the 16-byte rounding
  const Buffer* buffers[] = {&small, &odd, &small, &small, &small};
  DescriptorSet set(device, pipeline, buffers);

  DeviceInfo& info = const_cast<DeviceInfo&>(device.info());
  const uint32_t limit = info.max_texel_buffer_elements;
  info.max_texel_buffer_elements = 1;  // two texels in `odd` no longer fit one view
  try {
    DescriptorSet(device, pipeline, buffers);
    ADD_FAILURE() << "bound 2 texels to a view of at most 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binding 1 is 2 texels, above the device's maxTexelBufferElements of 1"),
              std::string::npos)
        << e.what();
  }
  info.max_texel_buffer_elements = limit;
  expect_no_validation_messages(*ctx);

  DeviceOptions options;
  options.validation = true;
  options.disable_texel_buffers = true;  // --vk-disable-texel-buffers
  Context off(options);
  try {
    ComputePipeline(off.device(), builtin_shader(desc.name), desc);
    ADD_FAILURE() << "built a texel-buffer pipeline with texel buffers switched off";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("texel buffers unavailable or switched off"), std::string::npos) << e.what();
  }
}

TEST_F(VulkanTest, ListsDevicesWithValidation) {
  DeviceOptions options;
  options.validation = true;
  const std::vector<DeviceInfo> devices = list_devices(options);
  ASSERT_FALSE(devices.empty());
  for (const DeviceInfo& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.max_workgroup_invocations, 0u);
    EXPECT_GT(d.max_storage_buffer_range, 0u);
    EXPECT_FALSE(d.heaps.empty());
    EXPECT_NE(format_device_info(d).find(d.name), std::string::npos);
  }
  // On lavapipe, the facts PLATFORM.md records.
  const std::string driver_files = std::getenv("VK_DRIVER_FILES") ? std::getenv("VK_DRIVER_FILES") : "";
  if (driver_files == test::kLavapipeIcd) {
    ASSERT_EQ(devices.size(), 1u);
    const DeviceInfo& d = devices[0];
    EXPECT_NE(d.name.find("llvmpipe"), std::string::npos);
    EXPECT_EQ(d.type, DeviceType::Cpu);
    EXPECT_EQ(d.driver_name, "llvmpipe");
    EXPECT_TRUE(d.fp16());
    EXPECT_TRUE(d.timestamps());
    EXPECT_GT(d.subgroup_size, 0u);
    EXPECT_TRUE(d.unsupported_reason().empty());
  }
}

TEST_F(VulkanTest, SelectsByIndexAndSubstring) {
  auto by_index = open("0");
  EXPECT_EQ(by_index->device().info().index, 0u);
  expect_no_validation_messages(*by_index);
  by_index.reset();

  DeviceOptions options;
  const std::vector<DeviceInfo> devices = list_devices(options);
  const std::string name = devices[0].name;
  const std::string substring = name.find("llvmpipe") != std::string::npos ? "LLVMPIPE" : name.substr(0, 4);
  auto by_name = open(substring);
  EXPECT_EQ(by_name->device().info().name, name);
  expect_no_validation_messages(*by_name);
}

TEST_F(VulkanTest, BadSelectionIsAClearError) {
  DeviceOptions options;
  options.validation = true;
  options.device = "no-such-gpu";
  try {
    Context ctx(options);
    FAIL() << "selected a device for 'no-such-gpu'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-gpu' matches no Vulkan device"), std::string::npos) << e.what();
  }
  options.device = "42";
  EXPECT_THROW(Context ctx(options), Error);
}

// Runs elementwise/add.<precision> over n elements with the given vector width and
// returns C; T is float or Half.
template <class T>
std::vector<T> run_add(Context& ctx, const std::string& precision, const std::vector<T>& a, const std::vector<T>& b,
                       uint32_t vec_width, uint32_t workgroup_size, double* elapsed_ns = nullptr) {
  Device& device = ctx.device();
  const uint32_t n = uint32_t(a.size());
  const size_t bytes = n * sizeof(T);
  Buffer ba(device, bytes), bb(device, bytes), bc(device, bytes);
  ba.upload(std::span<const T>(a));
  bb.upload(std::span<const T>(b));
  PipelineDesc desc;
  desc.name = "elementwise/add." + precision;
  desc.bindings = 3;
  desc.push_constant_bytes = sizeof(uint32_t);
  desc.specialization = {SpecConstant::u32(0, workgroup_size), SpecConstant::u32(1, vec_width)};
  ComputePipeline pipeline(device, builtin_shader(desc.name), desc);
  const Buffer* buffers[] = {&ba, &bb, &bc};
  DescriptorSet set(device, pipeline, buffers);

  const uint32_t invocations = vec_width == 4 ? n / 4 + n % 4 : n;
  ComputeCommands cmd(device, 2);
  cmd.begin();
  const uint32_t t0 = cmd.write_timestamp();
  cmd.dispatch(pipeline, set, (invocations + workgroup_size - 1) / workgroup_size, 1, 1, &n, sizeof n);
  const uint32_t t1 = cmd.write_timestamp();
  cmd.submit_and_wait();
  if (elapsed_ns != nullptr) *elapsed_ns = cmd.elapsed_ns(t0, t1);
  std::vector<T> c(n);
  bc.download(std::span<T>(c));
  return c;
}

TEST_F(VulkanTest, AddFp32MatchesCpu) {
  auto ctx = open();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (const uint32_t n : {4099u, 4096u, 3u}) {
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = dist(rng);
      b[i] = dist(rng);
    }
    for (const uint32_t vec : {1u, 4u}) {
      const std::vector<float> c = run_add(*ctx, "f32", a, b, vec, 64);
      for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "n=" << n << " vec=" << vec << " i=" << i;
    }
  }
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, AddFp16MatchesCpu) {
  auto ctx = open();
  if (!ctx->device().info().fp16()) GTEST_SKIP() << ctx->device().info().name << " has no fp16 arithmetic/storage";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const uint32_t n = 5003;
  std::vector<Half> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = Half(dist(rng));
    b[i] = Half(dist(rng));
  }
  for (const uint32_t vec : {1u, 4u}) {
    const std::vector<Half> c = run_add(*ctx, "f16", a, b, vec, 128);
    for (uint32_t i = 0; i < n; ++i) {
      // fp16 addition rounds the exact sum once: the CPU's rounded float sum is the answer.
      const float expected = float(Half(float(a[i]) + float(b[i])));
      ASSERT_EQ(float(c[i]), expected) << "vec=" << vec << " i=" << i;
    }
  }
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, TimestampsAreNanoseconds) {
  auto ctx = open();
  if (!ctx->device().info().timestamps()) GTEST_SKIP() << ctx->device().info().name << " has no timestamps";
  std::vector<float> a(1 << 16, 1.0f), b(1 << 16, 2.0f);
  double elapsed = 0;
  const std::vector<float> c = run_add(*ctx, "f32", a, b, 4, 64, &elapsed);
  EXPECT_EQ(c[12345], 3.0f);
  EXPECT_GT(elapsed, 0.0);
  EXPECT_LT(elapsed, 10e9);  // well under the 10 s fence timeout

  ComputeCommands cmd(ctx->device(), 3);
  cmd.begin();
  cmd.write_timestamp();
  cmd.write_timestamp();
  cmd.submit_and_wait();
  const std::vector<uint64_t> ns = cmd.timestamps_ns();
  ASSERT_EQ(ns.size(), 2u);
  EXPECT_GT(ns[0], 0u);
  EXPECT_GE(ns[1], ns[0]);
  EXPECT_THROW(cmd.elapsed_ns(0, 2), Error);
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, ForcedStagingKeepsDeviceMemoryUnmappedAndStillComputes) {
  auto ctx = open("", /*force_staging=*/true);
  Device& device = ctx->device();
  ASSERT_EQ(device.info().memory_path(), MemoryPath::Staging);
  Buffer weights(device, 4096, BufferUse::HostWrite), activations(device, 4096), staging(device, 64, BufferUse::Staging);
  EXPECT_FALSE(weights.host_mapped());
  EXPECT_FALSE(activations.host_mapped());
  EXPECT_TRUE(staging.host_mapped());
  EXPECT_THROW(weights.mapped(), Error);

  // One-off transfers and a batched upload through staging, read back through staging.
  std::vector<float> a(1024), b(1024);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.5f, b[i] = -float(i);
  activations.upload(std::span<const float>(a));
  std::vector<float> back(1024);
  activations.download(std::span<float>(back));
  EXPECT_EQ(back, a);
  StagedUpload upload(device);
  upload.add(weights, b.data(), b.size() * sizeof(float));
  upload.add(activations, a.data(), 16);
  upload.finish();
  EXPECT_EQ(upload.staged_bytes(), b.size() * sizeof(float) + 16);
  weights.download(std::span<float>(back));
  EXPECT_EQ(back, b);

  const std::vector<float> c = run_add(*ctx, "f32", a, b, 4, 64);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, ReusableRecordingIsSubmittedAgainWithNewInputs) {
  for (const bool force_staging : {false, true}) {
    auto ctx = open("", force_staging);
    Device& device = ctx->device();
    const uint32_t n = 256;
    Buffer in(device, n * 4, BufferUse::HostWrite), out(device, n * 4, BufferUse::HostRead);
    Buffer in_staging(device, n * 4, BufferUse::Staging), out_staging(device, n * 4, BufferUse::Staging);
    PipelineDesc desc{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 64), SpecConstant::u32(1, 1)}};
    ComputePipeline pipeline(device, builtin_shader(desc.name), desc);
    const Buffer* buffers[] = {&in, &in, &out};
    DescriptorSet set(device, pipeline, buffers);
    ComputeCommands cmd(device, 2);
    cmd.begin(/*reusable=*/true);
    cmd.copy(in_staging, in, n * 4);
    cmd.barrier();
    const uint32_t t0 = cmd.write_timestamp();
    cmd.dispatch(pipeline, set, n / 64, 1, 1, &n, sizeof n);
    const uint32_t t1 = cmd.write_timestamp();
    cmd.barrier();
    cmd.copy(out, out_staging, n * 4);
    for (int round = 1; round <= 3; ++round) {
      std::vector<float> x(n, float(round)), y(n);
      in_staging.upload(std::span<const float>(x));
      cmd.submit_and_wait();
      out_staging.download(std::span<float>(y));
      EXPECT_EQ(y, std::vector<float>(n, 2.0f * float(round))) << "round " << round << " staging " << force_staging;
      EXPECT_GE(cmd.elapsed_ns(t0, t1), 0.0);
    }
    expect_no_validation_messages(*ctx);
  }
  // A one-time recording is not submitted twice.
  auto ctx = open();
  ComputeCommands once(ctx->device());
  once.begin();
  once.submit_and_wait();
  EXPECT_THROW(once.submit_and_wait(), Error);
}

TEST_F(VulkanTest, MisuseIsAnErrorNotACrash) {
  auto ctx = open();
  Device& device = ctx->device();
  EXPECT_THROW(Buffer(device, 0), Error);
  Buffer buffer(device, 16);
  std::vector<float> big(5);
  EXPECT_THROW(buffer.upload(std::span<const float>(big)), Error);
  EXPECT_THROW(buffer.download(big.data(), 4, 16), Error);

  const uint32_t not_spirv[] = {1, 2, 3};
  EXPECT_THROW(ComputePipeline(device, not_spirv, {"bad", 1, 0, {}}), Error);

  PipelineDesc desc{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 32)}};
  ComputePipeline pipeline(device, builtin_shader(desc.name), desc);
  const Buffer* two[] = {&buffer, &buffer};
  EXPECT_THROW(DescriptorSet(device, pipeline, two), Error);
  const Buffer* three[] = {&buffer, &buffer, &buffer};
  DescriptorSet set(device, pipeline, three);
  ComputeCommands cmd(device);
  EXPECT_THROW(cmd.dispatch(pipeline, set, 1, 1, 1), Error);  // not recording
  cmd.begin();
  const uint32_t n = 4;
  EXPECT_THROW(cmd.dispatch(pipeline, set, 0, 1, 1, &n, 4), Error);     // no workgroups
  EXPECT_THROW(cmd.dispatch(pipeline, set, 1, 1, 1, nullptr, 0), Error);  // missing push constants
  EXPECT_THROW(cmd.write_timestamp(), Error);                             // no query pool
  cmd.submit_and_wait();
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, RequiredSubgroupSizeIsCheckedAndApplied) {
  auto ctx = open();
  Device& device = ctx->device();
  const DeviceInfo& info = device.info();
  if (!info.subgroup_size_control) GTEST_SKIP() << info.name << " has no subgroup size control";
  PipelineDesc desc{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 8 * info.max_subgroup_size)}};
  desc.subgroup_size = info.max_subgroup_size;
  EXPECT_NO_THROW(ComputePipeline(device, builtin_shader(desc.name), desc));
  desc.subgroup_size = info.max_subgroup_size * 2;
  try {
    ComputePipeline(device, builtin_shader(desc.name), desc);
    ADD_FAILURE() << "a subgroup size above the device's range was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot give (subgroup size control from"), std::string::npos) << e.what();
  }
  expect_no_validation_messages(*ctx);
}

TEST_F(VulkanTest, ValidationMessagesAreRecordedAndReported) {
  auto ctx = open();
  // The add shader uses a push constant block; a layout without the range is invalid.
  PipelineDesc desc{"elementwise/add.f32", 3, 0, {}};
  try {
    ComputePipeline pipeline(ctx->device(), builtin_shader(desc.name), desc);
  } catch (const Error&) {
    // A driver may also refuse it; the validation message is what this test is about.
  }
  EXPECT_FALSE(ctx->instance().validation_messages().empty());
  EXPECT_THROW(ctx->check_validation("a bad pipeline"), Error);
  EXPECT_TRUE(ctx->instance().validation_messages().empty());  // reported once, then cleared
}

TEST_F(VulkanTest, FenceTimeoutIsAnErrorNotAHang) {
  auto ctx = open();
  Device& device = ctx->device();
  // 4M elements take milliseconds on lavapipe; a zero timeout expires first.
  const uint32_t n = 1u << 22;
  Buffer a(device, n * 4), b(device, n * 4), c(device, n * 4);
  PipelineDesc desc{"elementwise/add.f32", 3, 4, {SpecConstant::u32(0, 256)}};
  ComputePipeline pipeline(device, builtin_shader(desc.name), desc);
  const Buffer* buffers[] = {&a, &b, &c};
  DescriptorSet set(device, pipeline, buffers);
  ComputeCommands cmd(device);
  cmd.begin();
  for (int i = 0; i < 8; ++i) {
    cmd.dispatch(pipeline, set, n / 256, 1, 1, &n, sizeof n);
    cmd.barrier();
  }
  try {
    cmd.submit_and_wait(std::chrono::milliseconds(0));
    expect_no_validation_messages(*ctx);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within 0 ms"), std::string::npos) << e.what();
    EXPECT_TRUE(device.timed_out());
    EXPECT_THROW(cmd.begin(), Error);
    return;  // ~ComputeCommands waits (bounded) for the work before anything is destroyed
  }
  GTEST_SKIP() << "the work finished before a zero timeout could expire";
}

}  // namespace
}  // namespace vkg::vk
