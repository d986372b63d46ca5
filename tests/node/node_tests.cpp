// Runs ONNX's own per-operator conformance tests (Debian's libonnx-testdata:
// <dir>/<test>/model.onnx with test_data_set_N/{input,output}_M.pb) through the
// reference backend, or (--backend vk) through a Vulkan engine built in fp32 at
// optimization level 0 on lavapipe (unless VK_DRIVER_FILES names another
// driver) with the validation layer on. A test is in scope when every op of its
// model has a reference kernel (and, for vk, a tactic). Known failures are
// listed, with reasons, in one file per backend.
//
//   vkgraphy_node_tests --dir DIR [--backend ref|vk] [--exceptions FILE] [--filter SUBSTRING] [--verbose]
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "runtime/core/logger.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/engine/builder.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/executor.h"

namespace fs = std::filesystem;
using namespace vkg;

namespace {

onnx::TensorProto read_tensor_pb(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::TensorProto t;
  VKG_CHECK(t.ParseFromString(ss.str()), "cannot parse " << p.string());
  return t;
}

// Same dtype and shape; values within atol + rtol * |expected| (NaN matches NaN).
std::string compare(const Tensor& expected, const Tensor& actual, double rtol, double atol) {
  if (expected.dtype() != actual.dtype())
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
  if (expected.shape() != actual.shape())
    return "shape " + shape_to_string(actual.shape()) + ", expected " + shape_to_string(expected.shape());
  const bool exact = !is_floating(expected.dtype());
  for (int64_t i = 0; i < expected.size(); ++i) {
    const double e = expected.get_as_double(i), a = actual.get_as_double(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;
    if (!exact && std::fabs(e - a) <= atol + rtol * std::fabs(e)) continue;
    std::ostringstream os;
    os << "element " << i << " is " << a << ", expected " << e;
    return os.str();
  }
  return "";
}

// ONNX's test generator stores bfloat16 data as its raw bits in uint16 tensors (numpy
// has no bfloat16): reinterpret them as the model declares.
Tensor as_declared_type(Tensor t, const ValueInfo& declared) {
  if (t.dtype() != DType::UInt16 || declared.dtype != DType::BFloat16) return t;
  Tensor out(DType::BFloat16, t.shape());
  std::memcpy(out.raw(), t.raw(), t.nbytes());
  return out;
}

// Runs graphs on one backend.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual void prepare(const Graph& graph) = 0;
  virtual TensorMap run(const TensorMap& inputs, const std::vector<std::string>& outputs) = 0;
  // Whether inputs may be frozen to build-time values (see freeze_parameter_inputs).
  virtual bool can_freeze() const { return false; }
};

class RefBackend : public Backend {
 public:
  void prepare(const Graph& graph) override { backend_ = std::make_unique<ReferenceBackend>(graph); }
  TensorMap run(const TensorMap& inputs, const std::vector<std::string>& outputs) override {
    return backend_->run(inputs, outputs);
  }

 private:
  std::unique_ptr<ReferenceBackend> backend_;
};

// Thrown when a test needs something the Vulkan backend does not hold (a dtype).
struct OutOfScope : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class VkBackend : public Backend {
 public:
  VkBackend() {
    vk::DeviceOptions options;
    options.validation = true;
    context_ = std::make_unique<vk::Context>(options);
  }
  void prepare(const Graph& graph) override {
    executor_.reset();
    BuilderConfig config;
    config.optimization_level = 0;
    try {
      const vk::DeviceInfo& info = context_->device().info();
      engine_ = build_engine(graph, config, info, device_identity(info), nullptr).engine;
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.find("which the Vulkan backend does not support") != std::string::npos) throw OutOfScope(what);
      throw;
    }
    executor_ = std::make_unique<vk::EngineExecutor>(context_->device(), engine_);
  }
  bool can_freeze() const override { return true; }
  TensorMap run(const TensorMap& inputs, const std::vector<std::string>&) override {
    TensorMap out = executor_->run(inputs);
    context_->check_validation("the node test");
    return out;
  }

 private:
  std::unique_ptr<vk::Context> context_;
  Engine engine_;
  std::unique_ptr<vk::EngineExecutor> executor_;
};

// True when a build failed only because a layer needs the value of a model input
// at build time (a shape, axes, repeats or scales tensor fed as an input).
bool needs_build_time_values(const Error& e) {
  const std::string what = e.what();
  return (what.rfind("no tactic can serve", 0) == 0 && what.find("constant") != std::string::npos) ||
         what.find("the Vulkan builder needs static shapes") != std::string::npos;
}

// Like TensorRT with shape-tensor inputs, a Vulkan engine needs such inputs at
// build time: they are frozen to the data set's values (an initializer each)
// and the model is imported and built again for each data set. Frozen are the
// integer inputs and the inputs no node reads as its first (data) input.
Graph freeze_parameter_inputs(const fs::path& dir, const TensorMap& values, TensorMap& runtime_inputs) {
  OnnxModel model = load_onnx_model((dir / "model.onnx").string());
  onnx::GraphProto* g = model.proto->mutable_graph();
  std::set<std::string> data_inputs;
  for (const auto& n : g->node())
    if (n.input_size() > 0 && n.op_type() != "ConstantOfShape" && n.op_type() != "Range") data_inputs.insert(n.input(0));
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& in : g->input()) {
    auto it = values.find(in.name());
    const bool freeze = it != values.end() && (is_integer(it->second.dtype()) || !data_inputs.count(in.name()));
    if (!freeze) {
      *kept.Add() = in;
      continue;
    }
    tensor_to_proto(it->second, in.name(), g->add_initializer());
    runtime_inputs.erase(in.name());
  }
  g->mutable_input()->Swap(&kept);
  return import_onnx(model);
}

// Runs every data set of one test; returns "" on success or the first failure.
std::string run_test(const fs::path& dir, Backend& backend, int& frozen_tests) {
  OnnxModel model = load_onnx_model((dir / "model.onnx").string());
  Graph graph = import_onnx(model);
  bool freeze = false;
  try {
    backend.prepare(graph);
  } catch (const Error& e) {
    if (!backend.can_freeze() || !needs_build_time_values(e)) throw;
    freeze = true;
    ++frozen_tests;
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test data sets";
  for (const fs::path& set : sets) {
    TensorMap inputs;
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      const fs::path p = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) return "missing " + p.string();
      inputs[graph.inputs[i].name] = as_declared_type(tensor_from_proto(read_tensor_pb(p)), graph.inputs[i]);
    }
    if (freeze) {
      const TensorMap values = inputs;
      backend.prepare(freeze_parameter_inputs(dir, values, inputs));
    }
    std::vector<std::string> names;
    for (const auto& o : graph.outputs) names.push_back(o.name);
    const TensorMap outputs = backend.run(inputs, names);
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const fs::path p = set / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) continue;
      const Tensor expected = as_declared_type(tensor_from_proto(read_tensor_pb(p)), graph.outputs[i]);
      const std::string diff = compare(expected, outputs.at(names[i]), 1e-3, 1e-5);
      if (!diff.empty()) return set.filename().string() + " output '" + names[i] + "': " + diff;
    }
  }
  return "";
}

// Ops of a test model, or nullopt when the model cannot even be read.
std::optional<std::set<std::string>> model_ops(const fs::path& model_path) {
  try {
    OnnxModel m = load_onnx_model(model_path.string());
    std::set<std::string> ops;
    for (const auto& n : m.proto->graph().node())
      ops.insert((n.domain().empty() || n.domain() == "ai.onnx") ? n.op_type() : n.domain() + "::" + n.op_type());
    return ops;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::map<std::string, std::string> read_exceptions(const std::string& path) {
  std::map<std::string, std::string> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  VKG_CHECK(in, "cannot open exceptions file '" << path << "'");
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    std::string name = line.substr(0, hash);
    name.erase(std::remove_if(name.begin(), name.end(), ::isspace), name.end());
    if (name.empty()) continue;
    out[name] = hash == std::string::npos ? "" : line.substr(hash + 1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/usr/share/libonnx-testdata/data/node", exceptions_path, filter, backend_name = "ref";
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--exceptions" && i + 1 < argc) exceptions_path = argv[++i];
    else if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--backend" && i + 1 < argc) backend_name = argv[++i];
    else if (a == "--verbose") verbose = true;
    else {
      std::cerr << "usage: vkgraphy_node_tests [--dir DIR] [--backend ref|vk] [--exceptions FILE] [--filter SUBSTRING] "
                   "[--verbose]\n";
      return 2;
    }
  }
  if (backend_name != "ref" && backend_name != "vk") {
    std::cerr << "--backend must be ref or vk\n";
    return 2;
  }
  const bool vk = backend_name == "vk";
  if (vk) {
    constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    if (std::getenv("VK_DRIVER_FILES") == nullptr && std::getenv("VK_ICD_FILENAMES") == nullptr &&
        fs::exists(kLavapipeIcd))
      setenv("VK_DRIVER_FILES", kLavapipeIcd, 1);
  }
  std::unique_ptr<Backend> backend;
  try {
    backend = vk ? std::unique_ptr<Backend>(new VkBackend) : std::unique_ptr<Backend>(new RefBackend);
  } catch (const Error& e) {
    std::cerr << "cannot open the backend: " << e.what() << "\n";
    return 1;
  }
  const TacticRegistry& tactics = TacticRegistry::builtin();
  Logger::get().set_severity(Severity::Error);
  if (!fs::is_directory(dir)) {
    std::cerr << "ONNX node test directory '" << dir << "' does not exist (install libonnx-testdata)\n";
    return 1;
  }
  const auto exceptions = read_exceptions(exceptions_path);
  const OpRegistry& registry = OpRegistry::reference();

  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());

  int in_scope = 0, passed = 0, failed = 0, known = 0, skipped = 0, out_of_scope = 0, frozen = 0;
  std::vector<std::string> unexpected_passes;
  std::map<std::string, int> skipped_ops;
  for (const fs::path& t : tests) {
    const std::string name = t.filename().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    const auto ops = model_ops(t / "model.onnx");
    bool supported = ops.has_value();
    if (ops)
      for (const auto& op : *ops)
        if (!registry.find(op) || (vk && op != "Constant" && op != "Shape" && op != "Size" && tactics.for_op(op).empty())) {
          supported = false;
          skipped_ops[op]++;
        }
    if (!supported) {
      ++skipped;
      continue;
    }
    ++in_scope;
    std::string failure;
    try {
      failure = run_test(t, *backend, frozen);
    } catch (const OutOfScope& e) {
      --in_scope;
      ++out_of_scope;
      if (verbose) std::cout << "[OUT OF SCOPE] " << name << ": " << e.what() << "\n";
      continue;
    } catch (const std::exception& e) {
      failure = std::string("error: ") + e.what();
    }
    const bool is_known = exceptions.count(name) != 0;
    if (failure.empty()) {
      ++passed;
      if (is_known) unexpected_passes.push_back(name);
      if (verbose) std::cout << "[PASS] " << name << "\n";
    } else if (is_known) {
      ++known;
      if (verbose) std::cout << "[KNOWN] " << name << ": " << failure << " (" << exceptions.at(name) << ")\n";
    } else {
      ++failed;
      std::cout << "[FAIL] " << name << ": " << failure << "\n";
    }
  }
  for (const auto& n : unexpected_passes)
    std::cout << "[NOTE] " << n << " is listed as a known exception but passes: remove it from the list\n";
  if (verbose) {
    std::cout << (vk ? "Ops without a reference kernel or a tactic (tests skipped):" : "Ops without a reference kernel (tests skipped):");
    for (const auto& [op, n] : skipped_ops) std::cout << " " << op << "(" << n << ")";
    std::cout << "\n";
  }
  std::cout << "ONNX node tests (" << (vk ? "Vulkan fp32" : "reference backend") << "): " << in_scope
            << " in scope of " << tests.size() << " (" << skipped << " use ops without a "
            << (vk ? "reference kernel or tactic" : "reference kernel");
  if (vk) std::cout << ", " << out_of_scope << " use dtypes the Vulkan backend does not hold";
  std::cout << "); " << passed << " passed, " << failed << " failed, " << known << " known exceptions";
  if (vk) std::cout << "; " << frozen << " built per data set with shape/parameter inputs frozen";
  std::cout << "\n";
  return failed == 0 ? 0 : 1;
}
