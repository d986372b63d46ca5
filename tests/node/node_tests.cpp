// Runs ONNX's own per-operator conformance tests (Debian's libonnx-testdata:
// <dir>/<test>/model.onnx with test_data_set_N/{input,output}_M.pb) through the
// reference backend. A test is in scope when every op of its model has a
// reference kernel. Known failures are listed, with reasons, in one file.
//
//   vkgraphy_node_tests --dir DIR [--exceptions FILE] [--filter SUBSTRING] [--verbose]
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
#include "runtime/reference/reference_backend.h"

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

// Runs every data set of one test; returns "" on success or the first failure.
std::string run_test(const fs::path& dir) {
  OnnxModel model = load_onnx_model((dir / "model.onnx").string());
  Graph graph = import_onnx(model);
  ReferenceBackend backend(graph);
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
  std::string dir = "/usr/share/libonnx-testdata/data/node", exceptions_path, filter;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--exceptions" && i + 1 < argc) exceptions_path = argv[++i];
    else if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--verbose") verbose = true;
    else {
      std::cerr << "usage: vkgraphy_node_tests [--dir DIR] [--exceptions FILE] [--filter SUBSTRING] [--verbose]\n";
      return 2;
    }
  }
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

  int in_scope = 0, passed = 0, failed = 0, known = 0, skipped = 0;
  std::vector<std::string> unexpected_passes;
  std::map<std::string, int> skipped_ops;
  for (const fs::path& t : tests) {
    const std::string name = t.filename().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    const auto ops = model_ops(t / "model.onnx");
    bool supported = ops.has_value();
    if (ops)
      for (const auto& op : *ops)
        if (!registry.find(op)) {
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
      failure = run_test(t);
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
    std::cout << "Ops without a reference kernel (tests skipped):";
    for (const auto& [op, n] : skipped_ops) std::cout << " " << op << "(" << n << ")";
    std::cout << "\n";
  }
  std::cout << "ONNX node tests (reference backend): " << in_scope << " in scope of " << tests.size()
            << " (" << skipped << " use ops without a reference kernel); " << passed << " passed, " << failed
            << " failed, " << known << " known exceptions\n";
  return failed == 0 ? 0 : 1;
}
