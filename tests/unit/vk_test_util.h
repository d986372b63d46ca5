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
  double atol = 1e-4, rtol = 1e-4;            // fp32 tactics
  double atol_fp16 = 2e-2, rtol_fp16 = 2e-2;  // fp16 tactics (storage rounding at 2^-11 relative, per layer)
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

// The one-node graph of a case, with shapes and dtypes of every tensor filled
// from a reference run.
Graph case_graph(const VkCase& c);

struct VkCaseRun {
  bool served = false;     // false: the tactic declined the layer
  std::string why_not;     // its reason
  TensorMap vulkan;        // the node's outputs on Vulkan
  TensorMap reference;     // the node's outputs on the reference backend
};

// Builds the case as a one-layer engine forced to `tactic` (in the tactic's
// precision), runs it on test_vk_context() and the reference backend.
VkCaseRun run_case_with_tactic(const VkCase& c, const Tactic& tactic);

// Empty when every output of `run` matches within the case's tolerances for
// `precision`; otherwise a description of the first mismatches.
std::string compare_case_outputs(const VkCase& c, const VkCaseRun& run, Precision precision);

// Uniform random integers in [lo, hi] as a tensor of T, reproducible from `seed`.
template <class T> Tensor integers(const Shape& shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(size_t(num_elements(shape)));
  for (T& x : v) x = T(dist(rng));
  return Tensor::from_vector<T>(shape, v);
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

}  // namespace vkg::test
