#include "tests/unit/vk_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"

namespace vkg::test {

namespace {

std::vector<std::pair<std::string, VkCaseFactory>>& case_factories() {
  static std::vector<std::pair<std::string, VkCaseFactory>> factories;
  return factories;
}

ValueInfo value_info_of(const std::string& name, const Tensor& t) {
  ValueInfo v;
  v.name = name;
  v.dtype = t.dtype();
  std::vector<Dim> dims;
  for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
  v.shape = dims;
  return v;
}

std::vector<Tensor> reference_outputs(const VkCase& c) {
  std::vector<const Tensor*> inputs;
  for (const std::string& name : c.node.inputs) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const auto& p) { return p.first == name; });
    VKG_CHECK(it != c.inputs.end(), "case '" << c.name << "': no value for input '" << name << "'");
    inputs.push_back(&it->second);
  }
  return run_reference_node(c.node, c.opset, inputs);
}

}  // namespace

bool register_vk_cases(const char* family, VkCaseFactory factory) {
  case_factories().emplace_back(family, std::move(factory));
  return true;
}

std::vector<VkCase> all_vk_cases() {
  std::vector<VkCase> out;
  for (const auto& [family, factory] : case_factories()) {
    for (VkCase c : factory()) {
      c.name = family + "/" + c.name;
      if (c.node.name.empty()) c.node.name = "layer";
      out.push_back(std::move(c));
    }
  }
  return out;
}

vk::Context* test_vk_context(std::string* why) {
  static std::unique_ptr<vk::Context> context;
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    if (std::getenv("VK_DRIVER_FILES") == nullptr && std::getenv("VK_ICD_FILENAMES") == nullptr &&
        std::filesystem::exists(kLavapipeIcd)) {
      setenv("VK_DRIVER_FILES", kLavapipeIcd, 1);
    }
    if (vk::vulkan_available(&failure)) {
      vk::DeviceOptions options;
      options.validation = true;
      context = std::make_unique<vk::Context>(options);
    }
  }
  if (!context && why != nullptr) *why = failure;
  return context.get();
}

Graph case_graph(const VkCase& c) {
  Graph g;
  g.name = c.name;
  g.opset = c.opset;
  g.ir_version = 8;
  g.nodes.push_back(c.node);
  for (const auto& [name, value] : c.inputs) {
    if (c.constants.count(name)) {
      g.initializers[name] = value;
    } else {
      g.inputs.push_back(value_info_of(name, value));
      g.value_info[name] = g.inputs.back();
    }
  }
  const std::vector<Tensor> outs = reference_outputs(c);
  for (size_t i = 0; i < c.node.outputs.size() && i < outs.size(); ++i) {
    if (c.node.outputs[i].empty()) continue;
    g.outputs.push_back(value_info_of(c.node.outputs[i], outs[i]));
    g.value_info[c.node.outputs[i]] = g.outputs.back();
  }
  return g;
}

VkCaseRun run_case_with_tactic(const VkCase& c, const Tactic& tactic) {
  VkCaseRun run;
  vk::Context* ctx = test_vk_context();
  VKG_CHECK(ctx != nullptr, "no Vulkan device");
  const Graph graph = case_graph(c);
  const std::vector<Tensor> ref = reference_outputs(c);
  for (size_t i = 0; i < c.node.outputs.size() && i < ref.size(); ++i) {
    if (!c.node.outputs[i].empty()) run.reference[c.node.outputs[i]] = ref[i];
  }
  bool has_float = false;
  for (const auto& [name, t] : c.inputs) has_float |= is_float_dtype(t.dtype());
  for (const auto& [name, t] : run.reference) has_float |= is_float_dtype(t.dtype());
  if (tactic.precision() == Precision::FP16 && !has_float) {
    run.why_not = "the layer has no float tensors";
    return run;
  }

  BuilderConfig config;
  config.tactics_allow = {tactic.name};
  config.fp16 = tactic.precision() == Precision::FP16;
  config.layer_precisions[c.node.name] = tactic.precision();
  config.constraints = PrecisionConstraints::Obey;
  config.optimization_level = 0;
  const vk::DeviceInfo& info = ctx->device().info();
  BuildResult built;
  try {
    built = build_engine(graph, config, info, device_identity(info), nullptr);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind("no tactic can serve", 0) != 0) throw;
    run.why_not = what;
    return run;
  }
  const bool ran_tactic = std::any_of(built.engine.layers.begin(), built.engine.layers.end(),
                                      [&](const EngineLayer& l) { return l.tactic == tactic.name; });
  VKG_CHECK(ran_tactic, "case '" << c.name << "' was folded at build time: give it a runtime input");
  run.served = true;

  TensorMap inputs;
  for (const auto& [name, value] : c.inputs) {
    if (!c.constants.count(name)) inputs[name] = value;
  }
  vk::EngineExecutor executor(ctx->device(), built.engine);
  run.vulkan = executor.run(inputs);
  ctx->check_validation("case '" + c.name + "' with tactic " + tactic.name);
  return run;
}

std::string compare_case_outputs(const VkCase& c, const VkCaseRun& run, Precision precision) {
  const double atol = precision == Precision::FP16 ? c.atol_fp16 : c.atol;
  const double rtol = precision == Precision::FP16 ? c.rtol_fp16 : c.rtol;
  std::ostringstream out;
  for (const auto& [name, ref] : run.reference) {
    auto it = run.vulkan.find(name);
    if (it == run.vulkan.end()) {
      out << "output '" << name << "' missing; ";
      continue;
    }
    const Tensor& got = it->second;
    if (got.shape() != ref.shape() || got.dtype() != ref.dtype()) {
      out << "output '" << name << "': got " << got.describe() << ", expected " << ref.describe() << "; ";
      continue;
    }
    const bool exact = !is_floating(ref.dtype());
    int reported = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < ref.size(); ++i) {
      const double a = got.get_as_double(i), b = ref.get_as_double(i);
      bool ok;
      if (std::isnan(b))
        ok = std::isnan(a);
      else if (std::isinf(b))
        ok = a == b;
      else
        ok = exact ? a == b : std::abs(a - b) <= atol + rtol * std::abs(b);
      if (ok) continue;
      ++bad;
      if (reported++ < 3) out << "output '" << name << "'[" << i << "]: got " << a << ", expected " << b << "; ";
    }
    if (bad > 0) out << bad << " of " << ref.size() << " elements of '" << name << "' differ; ";
  }
  return out.str();
}

VkCase make_case(std::string name, const std::string& op, std::vector<std::optional<Tensor>> inputs,
                 std::map<std::string, Attribute> attrs, size_t num_outputs, std::set<size_t> constant_inputs) {
  VkCase c;
  c.name = std::move(name);
  c.node = make_named_node("layer", op, inputs.size(), num_outputs, std::move(attrs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      c.node.inputs[i] = "";
      continue;
    }
    c.inputs.emplace_back(c.node.inputs[i], std::move(*inputs[i]));
    if (constant_inputs.count(i)) c.constants.insert(c.node.inputs[i]);
  }
  return c;
}

}  // namespace vkg::test
