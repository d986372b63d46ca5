#include "debug/model_lint.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "debug/model_lint_graph.h"
#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/onnx/onnx_op_names.h"
#include "runtime/onnx/surgeon.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::debug {

const char* lint_level_name(LintLevel level) {
  switch (level) {
    case LintLevel::Exception: return "exception";
    case LintLevel::Warning: return "warning";
    case LintLevel::Info: return "info";
  }
  return "?";
}

const char* lint_source_name(LintSource source) {
  switch (source) {
    case LintSource::OnnxLoader: return "onnx_loader";
    case LintSource::OnnxChecker: return "onnx_checker";
    case LintSource::Reference: return "reference";
    case LintSource::Graph: return "graph";
  }
  return "?";
}

void LintReport::add(LintEntry entry) {
  for (const std::string& node : entry.nodes) {
    if (entry.level == LintLevel::Exception) {
      failing.insert(node);
      passing.erase(node);
    } else {
      pass(node);
    }
  }
  const Severity severity = entry.level == LintLevel::Exception ? Severity::Error
                            : entry.level == LintLevel::Warning ? Severity::Warning
                                                                : Severity::Info;
  VKG_LOG(severity, "LINT | " << (entry.nodes.size() == 1 ? "Node: " + entry.nodes[0] + " | " : "") << entry.message);
  entries.push_back(std::move(entry));
}

void LintReport::pass(const std::string& node) {
  if (!failing.count(node)) passing.insert(node);
}

bool LintReport::valid() const {
  return std::none_of(entries.begin(), entries.end(), [](const LintEntry& e) { return e.level == LintLevel::Exception; });
}

nlohmann::json LintReport::to_json() const {
  nlohmann::json lint_entries = nlohmann::json::array();
  for (const LintEntry& e : entries) {
    nlohmann::json j = {{"level", lint_level_name(e.level)}, {"source", lint_source_name(e.source)},
                        {"message", e.message}};
    if (!e.nodes.empty()) j["nodes"] = e.nodes;
    lint_entries.push_back(std::move(j));
  }
  return {{"summary", {{"passing", passing}, {"failing", failing}}}, {"lint_entries", lint_entries}};
}

namespace {

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// A node's finding without the name of the one-node model it was found in, and of shape
// inference's error the last part (the ones before name the node and the pass).
std::string node_finding(const std::string& what) {
  std::string text = one_line(what);
  for (const std::string prefix : {"model '' is invalid: ", "model '': "})
    if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  if (text.rfind("model '' ", 0) == 0) text = "the node " + text.substr(9);
  const std::string inference = "[ShapeInferenceError] ";
  if (const size_t last = text.rfind(inference); last != std::string::npos)
    text = text.substr(last + inference.size()) + " (shape inference)";
  return text;
}

// Whether a node's error may be a limit of vkgraphy rather than a fault of the model: an error that
// says vkgraphy does not support something, or ONNX's schema check or type inference refusing an
// op that ONNX changed after the version vkgraphy knows (a newer form of it). Such a node is a
// warning, and what reads its outputs is not checked.
bool vkgraphy_limit(const std::string& what, const OnnxModel& model, const onnx::NodeProto& node) {
  if (what.find("not supported") != std::string::npos || what.find("unsupported") != std::string::npos) return true;
  const bool schema_error = what.find("TypeInferenceError") != std::string::npos || what.find(" is invalid: ") != std::string::npos;
  if (!schema_error || !(node.domain().empty() || node.domain() == "ai.onnx")) return false;
  const int64_t opset = default_opset(model);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), int(opset), "");
  return onnx_changed_op_after(node.op_type(), schema ? schema->since_version() : 0, opset);
}

void report_duplicate_names(const onnx::GraphProto& g, LintReport& report) {
  std::map<std::string, std::vector<int>> ids;
  std::vector<std::string> order;
  for (int i = 0; i < g.node_size(); ++i) {
    auto& list = ids[g.node(i).name()];
    if (list.empty()) order.push_back(g.node(i).name());
    list.push_back(i);
  }
  for (const std::string& name : order) {
    const std::vector<int>& list = ids[name];
    if (list.size() < 2) continue;
    std::string text;
    for (int id : list) text += (text.empty() ? "" : ", ") + std::to_string(id);
    report.add({LintLevel::Exception, LintSource::Graph,
                "Duplicate node name: '" + name + "' for nodes with topological IDs: [" + text + "] found.", {name}});
  }
}

// ONNX's checker on the whole model; a node's own problem is left to the node-by-node runs,
// which name the node. True when it passes.
bool checker_passes(const OnnxModel& model, LintReport& report) {
  OnnxModel copy = copy_onnx_model(model);
  for (auto& out : *copy.proto->mutable_graph()->mutable_output())  // outputs may leave their shape to inference
    if (out.type().has_tensor_type() && !out.type().tensor_type().has_shape())
      out.mutable_type()->mutable_tensor_type()->mutable_shape();
  const std::string problem = onnx_checker_problem(copy, CheckerText::Whole);
  if (problem.empty()) return true;
  if (problem.find("Bad node spec for node") == std::string::npos)
    report.add({LintLevel::Exception, LintSource::OnnxChecker, one_line(problem.substr(0, problem.find('\n'))), {}});
  return false;
}

// The data loader's first feed for the model's runtime inputs (each name once). Inputs it cannot
// make data for (sequences, optionals, strings) are left out with a warning: the nodes that read
// them are not run.
TensorMap first_feed(const OnnxModel& model, const LintOptions& options, LintReport& report) {
  std::vector<ValueInfo> inputs;
  std::set<std::string> seen;
  const std::vector<std::string> names = runtime_input_names(model);
  for (const auto& in : model.proto->graph().input())
    if (std::find(names.begin(), names.end(), in.name()) != names.end() && seen.insert(in.name()).second)
      inputs.push_back(value_info_from_proto(in));
  DataLoaderOptions data = options.data;
  data.iterations = 1;
  data.input_shapes = options.input_shapes;
  if (data.load_inputs_paths.empty()) {
    std::vector<ValueInfo> usable;
    for (const ValueInfo& in : inputs) {
      if (in.dtype) {
        usable.push_back(in);
        continue;
      }
      report.add({LintLevel::Warning, LintSource::Reference,
                  "No data for input '" + in.name + "' (not a tensor of a type the data loader makes): the nodes "
                  "that read it are not run",
                  {}});
    }
    inputs = std::move(usable);
  }
  return load_or_generate_inputs(inputs, data).at(0);
}

// The whole model imported (strict shape inference) and run by the reference backend. On success
// what import and the run warned about become warnings and every node passes.
bool whole_model_runs(const OnnxModel& model, const TensorMap& feed, LintReport& report) {
  std::vector<std::pair<Severity, std::string>> said;
  try {
    const LogCapture capture;
    OnnxModel copy = copy_onnx_model(model);
    const Graph graph = import_onnx(copy, ImportOptions{});
    ReferenceBackend(graph).run(feed);
    said = capture.messages();
  } catch (const std::exception& e) {
    VKG_VERBOSE("The whole model does not run on the reference backend (" << one_line(e.what())
                                                                          << "); linting node by node");
    return false;
  }
  for (const auto& [severity, message] : said)
    report.add({LintLevel::Warning, LintSource::Reference, one_line(message), {}});
  for (const auto& node : model.proto->graph().node()) report.pass(node.name());
  return true;
}

// Why a node cannot be checked, if it cannot: an op of another domain without a schema (a custom
// op), or an op ONNX defines that vkgraphy's ONNX does not know (newer than opset 17, without a
// schema of vkgraphy's own). An op of ONNX's domain that ONNX does not define is left to the run.
std::optional<std::string> unknown_op(const OnnxModel& model, const onnx::NodeProto& node) {
  register_newer_onnx_schemas();
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  const auto& imports = model.proto->opset_import();
  auto it = std::find_if(imports.begin(), imports.end(),
                         [&](const auto& op) { return (op.domain() == "ai.onnx" ? "" : op.domain()) == domain; });
  if (domain.empty()) {
    if (it == imports.end() || onnx::OpSchemaRegistry::Schema(node.op_type(), int(it->version()), "") ||
        !onnx_defines_op(node.op_type()))
      return std::nullopt;
    return "ONNX defines " + node.op_type() + " (opset " + std::to_string(it->version()) +
           "), but not the ONNX vkgraphy is built with, nor vkgraphy itself: not checked";
  }
  if (it == imports.end())
    return "No opset import for domain '" + domain + "' of op '" + node.op_type() + "' (a custom op): not checked";
  if (onnx::OpSchemaRegistry::Schema(node.op_type(), int(it->version()), domain)) return std::nullopt;
  return domain + ":" + node.op_type() + "(" + std::to_string(it->version()) +
         ") is not a registered function/op (a custom op): not checked";
}

// Node `node` as a model of its own: the tensors it reads are its inputs (typed by the values
// computed for them) or the model's initializers; its outputs are the model's.
OnnxModel one_node_model(const OnnxModel& model, const onnx::NodeProto& node, const std::vector<std::string>& reads,
                         const TensorMap& values, const std::map<std::string, const onnx::TensorProto*>& initializers) {
  auto proto = std::make_shared<onnx::ModelProto>();
  proto->set_ir_version(model.proto->ir_version());
  *proto->mutable_opset_import() = model.proto->opset_import();
  onnx::GraphProto& g = *proto->mutable_graph();
  g.set_name(node.name());
  for (const std::string& name : reads) {
    if (auto init = initializers.find(name); init != initializers.end()) {
      *g.add_initializer() = *init->second;
      continue;
    }
    const Tensor& value = values.at(name);
    onnx::ValueInfoProto& in = *g.add_input();
    in.set_name(name);
    auto* type = in.mutable_type()->mutable_tensor_type();
    type->set_elem_type(dtype_to_onnx(value.dtype()));
    auto* shape = type->mutable_shape();
    for (int64_t d : value.shape()) shape->add_dim()->set_dim_value(d);
  }
  *g.add_node() = node;
  for (const auto& out : node.output())
    if (!out.empty()) g.add_output()->set_name(out);
  return OnnxModel{proto, ""};
}

// Runs one node alone; throws what import or the run threw. Sets `why_not` instead when the
// reference backend has no kernel for it (a limit of vkgraphy, not a fault of the model).
TensorMap run_one_node(OnnxModel single, const TensorMap& values, std::string& why_not) {
  const LogCapture quiet;  // a one-node model's warnings repeat the whole model's
  ImportOptions options;
  options.fold_constants = false;
  const Graph graph = import_onnx(single, options);
  const std::vector<std::string> unsupported = ReferenceBackend::unsupported_ops(graph);
  if (!unsupported.empty()) {
    why_not = "The reference backend has no kernel for " + unsupported.front() + ": not checked";
    return {};
  }
  TensorMap feed;
  for (const ValueInfo& in : graph.inputs) feed.emplace(in.name, values.at(in.name));
  return ReferenceBackend(graph).run(feed);
}

void lint_node_by_node(const OnnxModel& model, TensorMap values, LintReport& report) {
  const onnx::GraphProto& g = model.proto->graph();
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& init : g.initializer()) initializers.emplace(init.name(), &init);
  std::vector<std::vector<std::string>> reads;  // per node, each tensor once
  std::map<std::string, int> uses;              // node reads left, to free values
  for (const auto& node : g.node()) {
    reads.push_back(node_reads(node));
    for (const std::string& name : reads.back()) ++uses[name];
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    const bool ready = std::all_of(reads[size_t(i)].begin(), reads[size_t(i)].end(), [&](const std::string& name) {
      return initializers.count(name) || values.count(name);
    });
    if (!ready) {
      VKG_VERBOSE("Node '" << node.name() << "' is not checked: a node before it failed");
    } else if (const std::optional<std::string> why = unknown_op(model, node)) {
      report.add({LintLevel::Warning, LintSource::Reference, *why, {node.name()}});
    } else {
      try {
        std::string why_not;
        TensorMap outputs = run_one_node(one_node_model(model, node, reads[size_t(i)], values, initializers), values,
                                         why_not);
        if (!why_not.empty()) report.add({LintLevel::Warning, LintSource::Reference, why_not, {node.name()}});
        else report.pass(node.name());
        for (auto& [name, value] : outputs) values.insert_or_assign(name, std::move(value));
      } catch (const std::exception& e) {
        const bool limit = vkgraphy_limit(e.what(), model, node);
        report.add({limit ? LintLevel::Warning : LintLevel::Exception, LintSource::Reference,
                    node_finding(e.what()) + (limit ? " (a limit of vkgraphy, not a verdict on the model)" : ""),
                    {node.name()}});
      }
    }
    for (const std::string& name : reads[size_t(i)])
      if (--uses[name] == 0) values.erase(name);
  }
}

}  // namespace

LintReport lint_model_file(const std::string& path, const LintOptions& options) {
  LintReport report;
  const std::string bytes = read_whole_file(path, "model file");
  OnnxModel model;
  try {
    model = parse_onnx_model(bytes, path, true, options.external_data_dir, NodeNames::AsInFile);
  } catch (const Error& e) {
    report.add({LintLevel::Exception, LintSource::OnnxLoader, one_line(e.what()), {}});
    return report;
  }
  if (model.proto->graph().node_size() == 0) {
    report.add({LintLevel::Warning, LintSource::OnnxLoader, "ONNX model has no nodes", {}});
    return report;
  }
  if (!options.input_shapes.empty()) override_input_shapes(model, options.input_shapes);
  name_unnamed_nodes(*model.proto->mutable_graph(),
                     [](int i, const onnx::NodeProto&) { return kUnnamedNodePrefix + std::to_string(i); });
  report_duplicate_names(model.proto->graph(), report);
  const bool checker_passed = checker_passes(model, report);
  const TensorMap feed = first_feed(model, options, report);
  const bool whole_ran = checker_passed && whole_model_runs(model, feed, report);
  if (!whole_ran) lint_node_by_node(model, feed, report);
  report_recorded_shapes(model, report);
  const std::vector<std::string> unused = report_unused(model.proto->graph(), report);
  if (whole_ran)  // as Polygraphy: a whole run passes the nodes the outputs need
    for (const std::string& name : unused) report.passing.erase(name);
  report_unread_outputs(model.proto->graph(), report);
  report_disconnected_parts(model.proto->graph(), report);
  return report;
}

}  // namespace vkg::debug
