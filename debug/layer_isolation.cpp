#include "debug/layer_isolation.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/data/array_stats.h"
#include "runtime/engine/layer_signature.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::debug {

namespace {

// The reference's name for an engine tensor: its own, or for a copy the builder
// made in another storage ("x:f16") the tensor it copies. "" when the graph has none.
std::string reference_name(const std::string& name, const std::set<std::string>& known) {
  if (known.count(name)) return name;
  for (StorageType s : {StorageType::F32, StorageType::F16, StorageType::I32}) {
    const std::string suffix = std::string(":") + storage_type_name(s);
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string base = name.substr(0, name.size() - suffix.size());
      if (known.count(base)) return base;
    }
  }
  return "";
}

// The larger of two errors, NaN winning (a NaN error is the worst).
double worse(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return std::max(a, b);
}

struct Measured {
  double abs = 0, rel = 0;
  bool passed = true;
};

void add(Measured& m, const OutputComparison& c) {
  m.abs = worse(m.abs, c.failure.empty() ? c.required_atol : INFINITY);
  m.rel = worse(m.rel, c.failure.empty() ? c.required_rtol : INFINITY);
  m.passed = m.passed && c.passed;
}

// Isolation runs the layers through the engine's own executor, so control flow that the
// device evaluates (branch layers) cannot be isolated.
void check_no_device_branches(const Engine& engine) {
  for (const EngineLayer& layer : engine.layers)
    VKG_CHECK(!layer.is_branch(), "--isolate-layers: layer '"
                                      << layer.name << "' (" << layer.op
                                      << ") has control flow evaluated on the device, which isolation does not "
                                         "support; build with --freeze-inputs so that it folds, or compare "
                                         "every layer output with --vk-outputs mark layers");
}

// The reference's name of each engine tensor (see reference_name), by tensor index.
std::vector<std::string> reference_names(const Graph& graph, const Engine& engine) {
  std::set<std::string> known;
  for (const ValueInfo& in : graph.inputs) known.insert(in.name);
  for (const std::string& name : graph.node_outputs()) known.insert(name);
  for (const auto& [name, t] : graph.initializers) known.insert(name);
  std::vector<std::string> ref(engine.tensors.size());
  for (size_t t = 0; t < engine.tensors.size(); ++t) ref[t] = reference_name(engine.tensors[t].name, known);
  return ref;
}

// How many times each reference tensor will be released: once per layer that reads or writes it.
std::map<std::string, int> reference_holds(const Engine& engine, const std::vector<std::string>& ref) {
  std::map<std::string, int> holds;
  for (const EngineLayer& layer : engine.layers) {
    for (int32_t t : layer.inputs)
      if (t >= 0 && !ref[size_t(t)].empty()) ++holds[ref[size_t(t)]];
    for (int32_t t : layer.outputs)
      if (t >= 0 && !ref[size_t(t)].empty()) ++holds[ref[size_t(t)]];
  }
  return holds;
}

void write_engine_inputs(const Engine& engine, vk::EngineExecutor& executor, const TensorMap& inputs) {
  for (int32_t t : engine.inputs) {
    const EngineTensor& et = engine.tensors[size_t(t)];
    auto it = inputs.find(et.name);
    VKG_CHECK(it != inputs.end(), "input '" << et.name << "' of the engine was not provided");
    executor.write_tensor(t, it->second);
  }
}

// What every layer's isolation works with.
struct IsolationRun {
  const Engine& engine;
  vk::EngineExecutor& executor;
  ReferenceStepper& reference;
  const std::vector<std::string>& ref;  // reference_names
  const CompareOptions& options;
};

// The reference's value of engine tensor t; nullptr when the graph has none.
const Tensor* reference_value(const IsolationRun& run, int32_t t) {
  return run.ref[size_t(t)].empty() ? nullptr : run.reference.value(run.ref[size_t(t)]);
}

// Introduced: layer li run on the reference's inputs, its outputs against the reference's.
// Puts the chained run's inputs back afterwards; a missing reference output goes to `note`.
Measured measure_introduced(const IsolationRun& run, size_t li, const std::vector<std::pair<int32_t, Tensor>>& chained,
                            std::string& note) {
  const EngineLayer& layer = run.engine.layers[li];
  Measured introduced;
  for (int32_t t : layer.inputs)
    if (t >= 0) run.executor.write_tensor(t, *run.reference.value(run.ref[size_t(t)]));
  run.executor.run_layer(li);
  for (int32_t t : layer.outputs) {
    if (t < 0) continue;
    const Tensor* expected = reference_value(run, t);
    if (expected == nullptr) {
      note = "no reference value for output '" + run.engine.tensors[size_t(t)].name + "'";
      continue;
    }
    add(introduced,
        measure_output(run.engine.tensors[size_t(t)].name, run.executor.read_tensor(t), *expected, run.options));
  }
  for (const auto& [t, value] : chained) run.executor.write_tensor(t, value);
  return introduced;
}

// Total: layer li as the chained run has it; records each output's total error in `total_error`.
Measured measure_total(const IsolationRun& run, size_t li, std::map<int32_t, double>& total_error) {
  const EngineLayer& layer = run.engine.layers[li];
  run.executor.run_layer(li);
  Measured total;
  for (int32_t t : layer.outputs) {
    if (t < 0) continue;
    const Tensor* expected = reference_value(run, t);
    if (expected == nullptr) continue;
    const OutputComparison c =
        measure_output(run.engine.tensors[size_t(t)].name, run.executor.read_tensor(t), *expected, run.options);
    add(total, c);
    total_error[t] = c.failure.empty() ? c.required_atol : INFINITY;
  }
  return total;
}

// Layer li's row: the error it introduces and its total error. `total_error` holds the total
// error of every engine tensor produced so far.
LayerIsolation isolate_layer(const IsolationRun& run, size_t li, std::map<int32_t, double>& total_error) {
  const EngineLayer& layer = run.engine.layers[li];
  LayerIsolation row;
  row.layer = layer.name;
  row.op = layer.op;
  row.tactic = layer.tactic;
  row.precision = precision_name(layer.precision);

  // The reference's inputs and the layer's chained inputs, kept while the layer runs.
  std::vector<std::pair<int32_t, Tensor>> chained;
  bool have_reference = true;
  for (int32_t t : layer.inputs) {
    if (t < 0) continue;
    row.inherited = worse(row.inherited, total_error.count(t) ? total_error[t] : 0.0);
    const Tensor* value = reference_value(run, t);
    if (value == nullptr) {
      have_reference = false;
      row.note = "no reference value for input '" + run.engine.tensors[size_t(t)].name + "'";
    }
    chained.emplace_back(t, run.executor.read_tensor(t));
  }
  Measured introduced;
  if (have_reference) introduced = measure_introduced(run, li, chained, row.note);
  chained.clear();
  const Measured total = measure_total(run, li, total_error);
  row.introduced = introduced.abs;
  row.introduced_rel = introduced.rel;
  row.passed = introduced.passed;
  row.total = total.abs;
  row.total_rel = total.rel;
  row.total_passed = total.passed;
  return row;
}

// The reference drops a tensor after the last layer that reads or writes it.
void release_layer_tensors(ReferenceStepper& reference, const EngineLayer& layer, const std::vector<std::string>& ref) {
  for (int32_t t : layer.inputs)
    if (t >= 0 && !ref[size_t(t)].empty()) reference.release(ref[size_t(t)]);
  for (int32_t t : layer.outputs)
    if (t >= 0 && !ref[size_t(t)].empty()) reference.release(ref[size_t(t)]);
}
}  // namespace

IsolationResult isolate_layers(const Graph& graph, const Engine& engine, vk::EngineExecutor& executor,
                               const TensorMap& inputs, const CompareOptions& options) {
  check_no_device_branches(engine);
  // The reference keeps a tensor while a layer still reads or writes it.
  const std::vector<std::string> ref = reference_names(graph, engine);
  ReferenceStepper reference(graph, inputs, reference_holds(engine, ref));
  write_engine_inputs(engine, executor, inputs);

  const IsolationRun run{engine, executor, reference, ref, options};
  IsolationResult result;
  std::map<int32_t, double> total_error;  // engine tensor -> its total absolute error, once produced
  for (size_t li = 0; li < engine.layers.size(); ++li) {
    const EngineLayer& layer = engine.layers[li];
    LayerIsolation row = isolate_layer(run, li, total_error);
    if (!row.passed && result.first_failed < 0) result.first_failed = int(result.layers.size());
    VKG_VERBOSE("isolated layer " << li << " '" << layer.name << "': introduced " << format_g5(row.introduced)
                                  << ", total " << format_g5(row.total));
    result.layers.push_back(std::move(row));
    release_layer_tensors(reference, layer, ref);
  }
  return result;
}

std::string format_isolation_table(const IsolationResult& result) {
  size_t width = 24, tactic_width = 20;
  for (const LayerIsolation& l : result.layers) {
    width = std::max(width, std::min<size_t>(l.layer.size() + 1, 64));
    tactic_width = std::max(tactic_width, std::min<size_t>(l.tactic.size() + 1, 40));
  }
  std::ostringstream s;
  s << std::left << std::setw(5) << "#" << std::setw(int(width)) << "layer" << std::setw(int(tactic_width)) << "tactic"
    << std::setw(6) << "prec" << std::right << std::setw(12) << "introduced" << std::setw(12) << "(rel)"
    << std::setw(12) << "inherited" << std::setw(12) << "total" << std::setw(12) << "(rel)"
    << "  verdict";
  for (size_t i = 0; i < result.layers.size(); ++i) {
    const LayerIsolation& l = result.layers[i];
    const std::string verdict = !l.passed ? "FAILED (introduced)" : !l.total_passed ? "inherited" : "ok";
    s << "\n"
      << std::left << std::setw(5) << i << std::setw(int(width)) << l.layer.substr(0, width - 1)
      << std::setw(int(tactic_width)) << l.tactic.substr(0, tactic_width - 1) << std::setw(6) << l.precision
      << std::right << std::setw(12) << format_g5(l.introduced) << std::setw(12) << format_g5(l.introduced_rel)
      << std::setw(12) << format_g5(l.inherited) << std::setw(12) << format_g5(l.total) << std::setw(12)
      << format_g5(l.total_rel) << "  " << verdict;
    if (!l.note.empty()) s << " (" << l.note << ")";
  }
  return s.str();
}

}  // namespace vkg::debug
