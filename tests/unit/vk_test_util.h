// Vulkan conformance harness: each tests/unit/vk_cases_<family>.cpp registers
// test layers (one node plus its input values) with VKG_VK_CASES; the
// conformance test (test_tactic_conformance.cpp) runs every registered tactic
// on every case of its ops that it can serve, in every precision it has,
// against the reference backend, on lavapipe with the validation layer on.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"
#include "runtime/engine/builder.h"
#include "runtime/engine/tactic.h"
#include "runtime/vulkan/context.h"
#include "tests/unit/op_test_util.h"

namespace vkg::test {

// One test layer: a node, its input values and which inputs are build-time constants.
struct VkCase {
  std::string name;  // unique within the family, e.g. "MatMul 64x32x16 const B"
  Node node;         // inputs/outputs named; "" marks an omitted optional input
  std::vector<std::pair<std::string, Tensor>> inputs;  // name -> value for every present input
  std::set<std::string> constants;                     // inputs fed as initializers
  int64_t opset = 17;
  // Tolerances against the reference: |vk - ref| <= atol + rtol * |ref| elementwise.
  double atol = 1e-4, rtol = 1e-4;  // fp32 tactics
  // fp16 storage, fp32 arithmetic (.f16acc32), compared with the reference run on
  // the inputs rounded to fp16: what is left is the output's rounding to fp16
  // (half an ulp, plus one ulp where fp32 arithmetic lands on the other side of
  // a rounding boundary: 1.5 * 2^-10 relative) and fp32 arithmetic differences
  // (atol, as for fp32). An fp16-accumulating kernel fails this bound on the
  // accumulation cases (F16Acc32Tolerance.RejectsFp16Accumulation).
  double atol_f16acc32 = 1e-4, rtol_f16acc32 = 2e-3;
  // fp16 storage and arithmetic (.f16): every operation rounds to fp16.
  double atol_fp16 = 2e-2, rtol_fp16 = 2e-2;
};

using VkCaseFactory = std::function<std::vector<VkCase>()>;
bool register_vk_cases(const char* family, VkCaseFactory factory);
// Every registered case, with its family in front of its name ("gemm/MatMul 64x32x16").
std::vector<VkCase> all_vk_cases();

// Registers the cases returned by the function body that follows:
//   VKG_VK_CASES(gemm) { std::vector<VkCase> cases; ...; return cases; }
#define VKG_VK_CASES(family)                                                                \
  static std::vector<::vkg::test::VkCase> vkg_vk_cases_##family();                          \
  [[maybe_unused]] static const bool vkg_vk_cases_registered_##family =                     \
      ::vkg::test::register_vk_cases(#family, vkg_vk_cases_##family);                       \
  static std::vector<::vkg::test::VkCase> vkg_vk_cases_##family()

// The Vulkan context of the test process: lavapipe unless VK_DRIVER_FILES names
// a driver, validation on. nullptr (and `why` filled) when no driver is installed.
vk::Context* test_vk_context(std::string* why = nullptr);

inline constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
// Selects lavapipe unless VK_DRIVER_FILES or VK_ICD_FILENAMES already names a driver.
void select_test_vulkan_driver();

// Set (to anything) on a developer's machine that has no Vulkan driver, it turns
// the Vulkan tests into skips. Never set in CI: there, a missing driver fails them.
inline constexpr const char* kNoVulkanEnv = "VKGRAPHY_TEST_NO_VULKAN";
bool no_vulkan_declared();

// Ends the current test when no Vulkan device could be opened (`why` says why):
// a failure, or a skip where the machine is declared to have no Vulkan.
#define VKG_NO_VULKAN(why)                                                                                     \
  do {                                                                                                         \
    if (::vkg::test::no_vulkan_declared()) GTEST_SKIP() << ::vkg::test::kNoVulkanEnv << " is set: " << (why); \
    FAIL() << "no Vulkan device: " << (why) << " (on a machine without Vulkan, set " << ::vkg::test::kNoVulkanEnv \
           << "=1 to skip the Vulkan tests)";                                                                  \
  } while (0)

// The one-node graph of a case, with shapes and dtypes of every tensor filled
// from a reference run.
Graph case_graph(const VkCase& c);

// The classes of a case, derived from its node, shapes and dtypes: what makes
// a tactic serve or decline it. The conformance test checks every decline
// against the classes a tactic says it does not serve (tactic_declines.txt).
//   int           no float tensor (fp16 variants have nothing to compute in fp16)
//   int-data      the first (data) input is an integer tensor
//   empty         a tensor with no elements
//   tail          the output's innermost dimension (a product's N) is not a multiple of 4
//   broadcast     an input's shape differs from the output's
//   runtime-weight a product's second input (B, W) is a runtime input
//   vector        a product with one output row (GEMV)
//   batched       a product with more than one matrix (batch dims)
//   op:<Op>       the op type, for variants that serve only some ops of a family
//   unaligned     a runtime input's or an output's innermost dimension is not a multiple of 4
//   matrix        a product with more than one output row
//   transposed-B  a Gemm with transB
//   parts>8       a Concat of more than 8 inputs, a Split into more than 8 outputs
//   axis-runs>4   a reduction whose reduced and kept axes alternate in more than 4 runs
//   windowed ops: kernel-1x1, kernel-3x3, kernel-other, strided, dilated, padded, grouped,
//                 depthwise / not-depthwise (convolutions), not-2d, spatial>3,
//                 small-window (< 16 taps), wide-span (4 adjacent outputs read > 64
//                 input columns), max (no arithmetic)
//   Resize/Upsample: nearest, linear, cubic, not-whole-factor, outer-axes-resized, rank-1,
//                 coord:<coordinate_transformation_mode>
//   negative-step a Slice with a negative step
//   small-hidden  an RNN, GRU or LSTM of hidden_size <= 64
//   block-not-4   a DepthToSpace/SpaceToDepth whose blocksize is not a multiple of 4
//   operands>4    an Einsum of more than four operands
//   not-matmul-form an Einsum that is no batched matrix product (runtime/core/einsum_equation.h)
//   head>256      an Attention whose Q or V head size is above 256
//   softmax-double an Attention with softmax_precision 11 (double)
//   not-pow2      a DFT or STFT whose transform length is not a power of two (at least 2)
std::set<std::string> case_classes(const VkCase& c);

// Whether a float input of the case holds NaN or an infinity: such cases check what a device keeps
// only where it preserves them (the nan-preserve property; a driver without it may assume finite
// floats).
bool has_nonfinite_input(const VkCase& c);

struct VkCaseRun {
  bool served = false;     // false: the tactic declined the layer
  std::string why_not;     // its reason
  TensorMap vulkan;        // the node's outputs on Vulkan
  TensorMap reference;     // the node's outputs on the reference backend
  TensorMap reference_f16_inputs;  // the same, run on the float inputs rounded to fp16
};

// Builds the case as a one-layer engine forced to `tactic` (in the tactic's
// precision), runs it on test_vk_context() and the reference backend.
// How the shaders with a "_texel" build run (vkgraphy-texel-reads, cmake/shaders.cmake).
enum class TexelBuilds {
  AsPlanned,         // as the planner picks them on the test device
  PlannedWithout,    // planned as on a device without texel buffers (--vk-disable-texel-buffers)
  SwitchedToStorage  // planned with them, then run as their storage-buffer builds, as a fused reformat makes the
                     // builder do
};
VkCaseRun run_case_with_tactic(const VkCase& c, const Tactic& tactic, TexelBuilds texel = TexelBuilds::AsPlanned);

// Empty when every output of `run` matches within the case's tolerances for
// the arithmetic `arith` (its atol widened by `extra_atol`); otherwise a
// description of the first mismatches.
std::string compare_case_outputs(const VkCase& c, const VkCaseRun& run, Arith arith, double extra_atol = 0);

// Uniform random integers in [lo, hi] as a tensor of T, reproducible from `seed`.
template <class T> Tensor integers(const Shape& shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(size_t(num_elements(shape)));
  for (T& x : v) x = T(dist(rng));
  return Tensor::from_vector<T>(shape, v);
}

// Uniform random floats in [-1, 1), reproducible from `seed`.
inline Tensor unit_floats(const Shape& shape, uint32_t seed) { return random_floats(shape, seed, -1.0f, 1.0f); }

// Random small whole numbers in [lo, hi] as floats: many ties, sums exact in fp16.
inline Tensor tied_floats(const Shape& shape, uint32_t seed, int lo = -20, int hi = 20) {
  return integers<float>(shape, seed, lo, hi);
}

// A scalar tensor of T.
template <class T> Tensor scalar_of(T v) { return Tensor::scalar<T>(v); }

// The case at another opset.
inline VkCase at_opset(VkCase c, int64_t opset) {
  c.opset = opset;
  return c;
}

// Random booleans, reproducible from `seed`.
inline Tensor bools(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t(DType::Bool, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<bool>()[i] = (rng() & 1) != 0;
  return t;
}

// Convenience for family tests: a case from one node whose inputs are named in0..
// and outputs out0.., given the input values (nullopt: omitted).
VkCase make_case(std::string name, const std::string& op, std::vector<std::optional<Tensor>> inputs,
                 std::map<std::string, Attribute> attrs = {}, size_t num_outputs = 1,
                 std::set<size_t> constant_inputs = {});

// Plans one layer with a named tactic directly, without Vulkan, on a plain-data
// device profile (limits of a typical GPU, subgroups of 8, fp16) that a test may edit.
class TacticPlanner {
 public:
  TacticPlanner(const std::string& op, int64_t opset, Attrs attrs = {});
  // An input; `constant` makes it a build-time constant.
  void input(DType dtype, Shape shape, std::optional<Tensor> constant = std::nullopt);
  void output(DType dtype, Shape shape);
  vk::DeviceInfo& device() { return device_; }
  // The tactic's plan (storage forms follow its precision); nullopt with why_not filled when it declines.
  std::optional<LayerPlan> plan(const std::string& tactic_name, std::string& why_not);

 private:
  Node node_;
  int64_t opset_;
  vk::DeviceInfo device_;
  std::vector<std::unique_ptr<Tensor>> constants_;
  std::vector<LayerTensor> inputs_, outputs_;
};

}  // namespace vkg::test
