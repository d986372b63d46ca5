// Runs ONNX's own per-operator conformance tests (Debian's libonnx-testdata:
// <dir>/<test>/model.onnx with test_data_set_N/{input,output}_M.pb) through the
// reference backend, or (--backend vk) through a Vulkan engine built in fp32 at
// optimization level 0 on lavapipe (unless VK_DRIVER_FILES names another
// driver) with the validation layer on. A test is in scope when every op of its
// model has a reference kernel (and, for vk, a tactic).
//
// Known failures are listed in one file per backend, each with the failure
// reason expected as a substring of the error. A listed test that fails for
// another reason, passes, or does not exist fails the run: the list can only
// shrink. On Vulkan, a test whose engine holds nothing but build-time constants
// (the builder folded every node) is counted as "folded", not as passed on Vulkan.
//
//   vkgraphy_node_tests --dir DIR [--backend ref|vk] [--exceptions FILE] [--filter SUBSTRING]... [--verbose]
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
  // Prepares to run `graph`; true when nothing of it is left to compute at run
  // time (a Vulkan engine whose layers only copy build-time constants).
  virtual bool prepare(const Graph& graph) = 0;
  virtual TensorMap run(const TensorMap& inputs, const std::vector<std::string>& outputs) = 0;
  // Whether inputs may be frozen to build-time values (see freeze_parameter_inputs).
  virtual bool can_freeze() const { return false; }
};

class RefBackend : public Backend {
 public:
  bool prepare(const Graph& graph) override {
    backend_ = std::make_unique<ReferenceBackend>(graph);
    return false;
  }
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
  bool prepare(const Graph& graph) override {
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
    return std::all_of(engine_.layers.begin(), engine_.layers.end(),
                       [](const EngineLayer& l) { return l.tactic == "constant.copy"; });
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
// at build time (a shape, axes, repeats or scales tensor fed as an input, an If's
// condition, a Loop's trip count, the size of a window function).
bool needs_build_time_values(const Error& e) {
  const std::string what = e.what();
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"})  // fold-only ops
    if (what.find(std::string("the Vulkan backend has no tactic for these ops: ") + op) != std::string::npos)
      return true;
  return (what.rfind("no tactic can serve", 0) == 0 && what.find("constant") != std::string::npos) ||
         what.find("the Vulkan builder needs static shapes") != std::string::npos ||
         what.find("the Vulkan backend has no tactic for these ops: If") != std::string::npos ||
         what.find("the Vulkan backend has no tactic for these ops: Loop") != std::string::npos;
}

// The inputs of an op that a Vulkan engine takes at build time, by position:
// shape tensors (TensorRT's term: values that decide output shapes, such as
// Reshape's shape or Slice's starts) and parameters the tactics fold into their
// plans (Clip's bounds, quantization scales and zero points, inference
// BatchNormalization's statistics). Every other input is data and stays a
// runtime input.
const std::map<std::string, std::set<size_t>>& build_time_inputs() {
  static const std::map<std::string, std::set<size_t>> table = [] {
    std::map<std::string, std::set<size_t>> t = {
        {"AffineGrid", {1}},
        {"BatchNormalization", {1, 2, 3, 4}},
        {"BlackmanWindow", {0}},
        {"CenterCropPad", {1}},
        {"Clip", {1, 2}},
        {"Compress", {1}},  // the condition decides the output shape
        {"ConstantOfShape", {0}},
        {"CumSum", {1}},
        {"DFT", {1, 2}},     // dft_length, axis (opset 20)
        {"Dropout", {1, 2}},
        {"Expand", {1}},
        {"HammingWindow", {0}},
        {"HannWindow", {0}},
        {"If", {0}},         // the condition: the branch taken is folded in
        {"Loop", {0, 1}},    // trip count and condition: the loop is unrolled
        {"MaxUnpool", {2}},
        {"MelWeightMatrix", {0, 1, 2, 3, 4}},  // computed at build time (no tactic)
        {"OneHot", {1, 2}},
        {"Pad", {1, 2, 3}},
        {"QLinearConv", {1, 2, 4, 5, 6, 7}},
        {"QLinearMatMul", {1, 2, 4, 5, 6, 7}},
        {"Range", {0, 1, 2}},
        {"Reshape", {1}},
        {"Resize", {1, 2, 3}},
        {"Slice", {1, 2, 3, 4}},
        {"Split", {1}},
        {"Squeeze", {1}},
        {"STFT", {1, 3}},    // frame_step, frame_length
        {"Tile", {1}},
        {"TopK", {1}},
        {"Trilu", {1}},
        {"Unsqueeze", {1}},
        {"Upsample", {1}},
    };
    for (const char* reduce : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                               "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"})
      t[reduce] = {1};
    return t;
  }();
  return table;
}

// Graph inputs whose values reach a build-time input of some node, directly or
// through the nodes that compute it. Shape and Size read only their input's
// shape, so the search stops there: data that is only measured stays data.
std::set<std::string> build_time_graph_inputs(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) producer[o] = &n;
  std::vector<std::string> pending;
  for (const auto& n : g.node()) {
    auto it = build_time_inputs().find(n.op_type());
    if (it == build_time_inputs().end()) continue;
    for (size_t i : it->second)
      if (int(i) < n.input_size() && !n.input(int(i)).empty()) pending.push_back(n.input(int(i)));
  }
  std::set<std::string> reached;
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (!reached.insert(name).second) continue;
    auto p = producer.find(name);
    if (p == producer.end() || p->second->op_type() == "Shape" || p->second->op_type() == "Size") continue;
    for (const auto& in : p->second->input())
      if (!in.empty()) pending.push_back(in);
  }
  std::set<std::string> out;
  for (const auto& in : g.input())
    if (reached.count(in.name())) out.insert(in.name());
  return out;
}

// Like TensorRT with shape-tensor inputs, a Vulkan engine needs such inputs at
// build time: they are frozen to the data set's values (an initializer each)
// and the model is imported and built again for each data set. Data inputs are
// never frozen, so the engine still computes on them.
Graph freeze_build_time_inputs(const fs::path& dir, const TensorMap& values, TensorMap& runtime_inputs,
                               std::vector<std::string>& frozen) {
  OnnxModel model = load_onnx_model((dir / "model.onnx").string());
  onnx::GraphProto* g = model.proto->mutable_graph();
  const std::set<std::string> to_freeze = build_time_graph_inputs(*g);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  frozen.clear();
  for (const auto& in : g->input()) {
    auto it = values.find(in.name());
    if (it == values.end() || !to_freeze.count(in.name())) {
      *kept.Add() = in;
      continue;
    }
    tensor_to_proto(it->second, in.name(), g->add_initializer());
    runtime_inputs.erase(in.name());
    frozen.push_back(in.name());
  }
  g->mutable_input()->Swap(&kept);
  return import_onnx(model);
}

// Model inputs that are not tensors (sequences, optionals, maps): vkgraphy
// values are tensors only. Throws Error naming the first one.
void require_tensor_inputs(const OnnxModel& model) {
  for (const auto& in : model.proto->graph().input()) {
    const auto& type = in.type();
    if (type.has_tensor_type()) continue;
    const char* kind = type.has_sequence_type() ? "a sequence" : type.has_optional_type() ? "an optional" :
                       type.has_map_type() ? "a map" : "not a tensor";
    VKG_THROW("model input '" << in.name() << "' is " << kind << " value; vkgraphy values are tensors only");
  }
}

// What running one test found: "" when every data set matched, else the first failure.
struct TestOutcome {
  std::string failure;
  bool folded = false;          // vk: every engine held only build-time constants
  bool frozen = false;          // vk: built per data set with build-time inputs frozen
  std::vector<std::string> frozen_inputs;
};

// Runs every data set of one test.
TestOutcome run_test(const fs::path& dir, Backend& backend) {
  TestOutcome outcome;
  OnnxModel model = load_onnx_model((dir / "model.onnx").string());
  require_tensor_inputs(model);
  Graph graph = import_onnx(model);
  bool folded = true;
  try {
    folded = backend.prepare(graph);
  } catch (const Error& e) {
    if (!backend.can_freeze() || !needs_build_time_values(e)) throw;
    outcome.frozen = true;
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    outcome.failure = "no test data sets";
    return outcome;
  }
  for (const fs::path& set : sets) {
    TensorMap inputs;
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      const fs::path p = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) {
        outcome.failure = "missing " + p.string();
        return outcome;
      }
      inputs[graph.inputs[i].name] = as_declared_type(tensor_from_proto(read_tensor_pb(p)), graph.inputs[i]);
    }
    if (outcome.frozen) {
      const TensorMap values = inputs;
      folded = backend.prepare(freeze_build_time_inputs(dir, values, inputs, outcome.frozen_inputs)) && folded;
    }
    std::vector<std::string> names;
    for (const auto& o : graph.outputs) names.push_back(o.name);
    const TensorMap outputs = backend.run(inputs, names);
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const fs::path p = set / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) continue;
      const Tensor expected = as_declared_type(tensor_from_proto(read_tensor_pb(p)), graph.outputs[i]);
      const std::string diff = compare(expected, outputs.at(names[i]), 1e-3, 1e-5);
      if (!diff.empty()) {
        outcome.failure = set.filename().string() + " output '" + names[i] + "': " + diff;
        return outcome;
      }
    }
  }
  outcome.folded = backend.can_freeze() && folded;
  return outcome;
}

// Ops of a test model, or nullopt when the model cannot even be read.
// What a test's model needs: its ops, and why it is beyond what vkgraphy holds ("" when
// it is not): an opset newer than vkgraphy follows, a dtype vkgraphy has no type for
// (float8, int4, float4, string, complex), a value that is not a tensor.
struct ModelNeeds {
  std::set<std::string> ops;
  std::string beyond;
};

std::optional<ModelNeeds> model_needs(const fs::path& model_path) {
  try {
    OnnxModel m = load_onnx_model(model_path.string());
    ModelNeeds needs;
    if (default_opset(m) > kMaxSupportedOpset) needs.beyond = "opset " + std::to_string(default_opset(m));
    auto need_dtype = [&](int onnx_type, const std::string& where) {
      if (needs.beyond.empty() && onnx_type != 0 && !dtype_from_onnx(onnx_type))
        needs.beyond = "ONNX data type " + std::to_string(onnx_type) + " (" + where + ")";
    };
    const auto& g = m.proto->graph();
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& vi : *list) {
        if (!vi.type().has_tensor_type()) {
          if (needs.beyond.empty()) needs.beyond = "'" + vi.name() + "' is not a tensor";
          continue;
        }
        need_dtype(vi.type().tensor_type().elem_type(), vi.name());
      }
    for (const auto& init : g.initializer()) need_dtype(init.data_type(), init.name());
    for (const auto& n : g.node()) {
      needs.ops.insert((n.domain().empty() || n.domain() == "ai.onnx") ? n.op_type() : n.domain() + "::" + n.op_type());
      for (const auto& a : n.attribute()) {
        if (a.has_t()) need_dtype(a.t().data_type(), n.op_type() + " " + a.name());
        if (n.op_type() == "Cast" && a.name() == "to") need_dtype(int(a.i()), "Cast to");
      }
    }
    return needs;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// One known exception: the test and a substring its failure message must contain.
struct KnownException {
  std::string reason;
  int line = 0;
  bool seen = false;
};

// Reads "[ref|vk] <test>  <expected reason substring>  # comment" lines; a line that
// names a backend applies to that backend only, one without to both. A line without a
// reason, or a test listed twice for the same backend, is an error: every entry must say why.
std::map<std::string, KnownException> read_exceptions(const std::string& path, const std::string& backend) {
  std::map<std::string, KnownException> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  VKG_CHECK(in, "cannot open exceptions file '" << path << "'");
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = line.substr(0, line.find('#'));
    const auto trim = [](std::string t) {
      const auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
    };
    text = trim(text);
    if (text.empty()) continue;
    if (text.rfind("[ref]", 0) == 0 || text.rfind("[vk]", 0) == 0) {
      const std::string only = text.substr(1, text.find(']') - 1);
      text = trim(text.substr(only.size() + 2));
      if (only != backend) continue;
    }
    const auto space = text.find_first_of(" \t");
    const std::string name = text.substr(0, space);
    const std::string reason = space == std::string::npos ? "" : trim(text.substr(space));
    VKG_CHECK(!reason.empty(), path << ":" << number << ": '" << name
                                    << "' needs the expected failure reason (a substring of the error) after its name");
    VKG_CHECK(!out.count(name), path << ":" << number << ": '" << name << "' is listed twice");
    out[name] = KnownException{reason, number, false};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/usr/share/libonnx-testdata/data/node", exceptions_path, backend_name = "ref";
  std::vector<std::string> filters;  // substrings; a test runs when it contains any
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--exceptions" && i + 1 < argc) exceptions_path = argv[++i];
    else if (a == "--filter" && i + 1 < argc) filters.push_back(argv[++i]);
    else if (a == "--backend" && i + 1 < argc) backend_name = argv[++i];
    else if (a == "--verbose") verbose = true;
    else {
      std::cerr << "usage: vkgraphy_node_tests [--dir DIR] [--backend ref|vk] [--exceptions FILE] [--filter SUBSTRING]... "
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
    std::cerr << "ONNX node test directory '" << dir << "' does not exist (Debian's libonnx-testdata installs ONNX 1.12's tests; ./setup.sh installs the onnx wheel's into .venv)\n";
    return 1;
  }
  std::map<std::string, KnownException> exceptions;
  try {
    exceptions = read_exceptions(exceptions_path, backend_name);
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  const OpRegistry& registry = OpRegistry::reference();

  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());

  int in_scope = 0, passed = 0, folded = 0, failed = 0, known = 0, skipped = 0, out_of_scope = 0, frozen = 0;
  int beyond = 0;  // opsets, dtypes or values vkgraphy does not hold
  std::map<std::string, int> beyond_reasons;
  std::vector<std::string> list_errors;
  std::map<std::string, int> skipped_ops;
  for (const fs::path& t : tests) {
    const std::string name = t.filename().string();
    if (!filters.empty() && std::none_of(filters.begin(), filters.end(), [&](const std::string& f) {
          return name.find(f) != std::string::npos;
        }))
      continue;
    auto listed = exceptions.find(name);
    if (listed != exceptions.end()) listed->second.seen = true;
    const auto needs = model_needs(t / "model.onnx");
    if (needs && !needs->beyond.empty()) {
      ++beyond;
      beyond_reasons[needs->beyond.substr(0, needs->beyond.find(" ("))]++;
      if (listed != exceptions.end())
        list_errors.push_back(name + " is listed as a known exception but needs " + needs->beyond +
                              ", which vkgraphy does not hold: remove it from the list");
      continue;
    }
    bool supported = needs.has_value();
    if (needs) {
      for (const auto& op : needs->ops) {
        // Ops without tactics that the builder folds: control flow folds an If of a known
        // condition and unrolls Loops and Scans of a known length, or the build says it cannot;
        // the window functions and MelWeightMatrix take only build-time inputs.
        const bool folds = op == "Constant" || op == "Shape" || op == "Size" || op == "If" || op == "Loop" ||
                           op == "Scan" || op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow" ||
                           op == "MelWeightMatrix";
        if (!registry.find(op) || (vk && !folds && tactics.for_op(op).empty())) {
          supported = false;
          skipped_ops[op]++;
        }
      }
    }
    if (!supported) {
      ++skipped;
      if (listed != exceptions.end())
        list_errors.push_back(name + " is listed as a known exception but is not in scope (an op without a " +
                              (vk ? "reference kernel or tactic" : "reference kernel") + "): remove it from the list");
      continue;
    }
    ++in_scope;
    TestOutcome outcome;
    try {
      outcome = run_test(t, *backend);
    } catch (const OutOfScope& e) {
      --in_scope;
      ++out_of_scope;
      if (verbose) std::cout << "[OUT OF SCOPE] " << name << ": " << e.what() << "\n";
      if (listed != exceptions.end())
        list_errors.push_back(name + " is listed as a known exception but is out of scope: remove it from the list");
      continue;
    } catch (const std::exception& e) {
      outcome.failure = std::string("error: ") + e.what();
    }
    frozen += outcome.frozen ? 1 : 0;
    std::string frozen_note;
    if (outcome.frozen) {
      frozen_note = " (frozen:";
      for (const auto& in : outcome.frozen_inputs) frozen_note += " " + in;
      frozen_note += ")";
    }
    if (listed != exceptions.end()) {
      const std::string& reason = listed->second.reason;
      if (outcome.failure.empty()) {
        ++failed;
        std::cout << "[FAIL] " << name << ": listed as a known exception (\"" << reason
                  << "\") but passes: remove it from the list\n";
      } else if (outcome.failure.find(reason) == std::string::npos) {
        ++failed;
        std::cout << "[FAIL] " << name << ": " << outcome.failure << " (listed as a known exception for \"" << reason
                  << "\", but it failed for another reason)\n";
      } else {
        ++known;
        if (verbose) std::cout << "[KNOWN] " << name << ": " << outcome.failure << "\n";
      }
    } else if (!outcome.failure.empty()) {
      ++failed;
      std::cout << "[FAIL] " << name << ": " << outcome.failure << frozen_note << "\n";
    } else if (outcome.folded) {
      ++folded;
      if (verbose) std::cout << "[FOLDED] " << name << frozen_note << "\n";
    } else {
      ++passed;
      if (verbose) std::cout << "[PASS] " << name << frozen_note << "\n";
    }
  }
  if (filters.empty())
    for (const auto& [name, e] : exceptions)
      if (!e.seen)
        list_errors.push_back(exceptions_path + ":" + std::to_string(e.line) + ": '" + name +
                              "' names no test in " + dir);
  for (const auto& e : list_errors) std::cout << "[FAIL] " << e << "\n";
  failed += int(list_errors.size());
  if (verbose) {
    std::cout << (vk ? "Ops without a reference kernel or a tactic (tests skipped):" : "Ops without a reference kernel (tests skipped):");
    for (const auto& [op, n] : skipped_ops) std::cout << " " << op << "(" << n << ")";
    std::cout << "\nBeyond what vkgraphy holds (tests skipped):";
    for (const auto& [why, n] : beyond_reasons) std::cout << " " << why << "(" << n << ")";
    std::cout << "\n";
  }
  std::cout << "ONNX node tests (" << (vk ? "Vulkan fp32" : "reference backend") << "): " << in_scope
            << " in scope of " << tests.size() << " (" << skipped << " use ops without a "
            << (vk ? "reference kernel or tactic" : "reference kernel") << ", " << beyond
            << " need opsets or data types vkgraphy does not hold";
  if (vk) std::cout << ", " << out_of_scope << " use dtypes the Vulkan backend does not hold";
  std::cout << "); " << (vk ? "ran on Vulkan: " : "") << passed << " passed";
  if (vk) std::cout << ", " << folded << " folded to constants at build time";
  std::cout << ", " << failed << " failed, " << known << " expected failures (known exceptions)";
  if (vk) std::cout << "; " << frozen << " built per data set with shape/parameter inputs frozen";
  std::cout << "\n";
  return failed == 0 ? 0 : 1;
}
