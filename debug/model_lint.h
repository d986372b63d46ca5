// `vkgraphy check lint MODEL`: a topological lint of an ONNX model, the checks Polygraphy's
// `check lint` makes with ONNX Runtime made with vkgraphy's own loader, ONNX's checker and the
// reference backend. Duplicate node names, the checker's graph-level findings, then the whole
// model run on the data loader's inputs; when that fails, node by node in graph order, each node
// alone on the values its producers computed (a node whose inputs a failed node should have made
// is not checked), so that independent faulty nodes are all named. Then the nodes and inputs that
// do not affect the outputs. The report is Polygraphy's JSON: {"summary": {"passing": [...],
// "failing": [...]}, "lint_entries": [{"level", "source", "message", "nodes"?}, ...]}.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/data/data_loader.h"
#include "runtime/onnx/onnx_import.h"

namespace vkg::debug {

enum class LintLevel { Exception, Warning, Info };
// Who found it: the protobuf loader, ONNX's checker, the reference backend (import with strict
// shape inference, then the run), or the graph's structure.
enum class LintSource { OnnxLoader, OnnxChecker, Reference, Graph };

struct LintEntry {
  LintLevel level = LintLevel::Exception;
  LintSource source = LintSource::Graph;
  std::string message;
  std::vector<std::string> nodes;  // empty for a finding about the whole model
};

struct LintReport {
  std::vector<LintEntry> entries;
  std::set<std::string> passing;  // nodes checked without an exception
  std::set<std::string> failing;  // nodes with an exception

  // Adds the entry; a node with an exception moves from passing to failing.
  void add(LintEntry entry);
  void pass(const std::string& node);  // a node checked without a finding
  bool valid() const;                  // no exception anywhere
  nlohmann::json to_json() const;
};

struct LintOptions {
  InputShapes input_shapes;       // --input-shapes
  DataLoaderOptions data;         // the inputs of the runs (the first iteration)
  std::string external_data_dir;  // "" = the model's folder
};

// Unnamed nodes get this prefix and their index in graph order.
inline constexpr const char* kUnnamedNodePrefix = "vkgraphy_unnamed_node_";

// Lints the model file at `path`. A file that cannot be read throws Error; one that does not
// parse as ONNX is an onnx_loader exception in the report. Bad options (--input-shapes naming no
// input, unreadable --load-inputs) throw Error.
LintReport lint_model_file(const std::string& path, const LintOptions& options);

const char* lint_level_name(LintLevel level);
const char* lint_source_name(LintSource source);

}  // namespace vkg::debug
