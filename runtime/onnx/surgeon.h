// Model surgery on the ONNX protobuf, as `vkgraphy surgeon` does it
// (Polygraphy's `surgeon extract` and `surgeon sanitize`): extracting the
// subgraph between chosen tensors, removing dead nodes, folding constants and
// overriding input shapes. Every function works on a model that passed
// validate_onnx_model, keeps it valid ONNX, and throws Error naming the
// tensor or node when the request cannot be met.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/onnx/onnx_import.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TypeProto;
}

namespace vkg {

// A tensor of an extracted subgraph as the user names it. Unset fields are
// "auto": they come from what the model (after shape inference) knows.
struct TensorSpec {
  std::string name;
  std::optional<std::vector<Dim>> shape;  // a Dim without value is dynamic (with its dim_param if named)
  std::optional<DType> dtype;
};

// Parses Polygraphy's `--inputs` syntax "name:shape:dtype", where shape is
// "[1,3,224,224]" (a dimension that is not a number, e.g. "batch", stays dynamic)
// or "auto", and dtype a numpy name ("float32") or "auto". Trailing parts may be
// left out: "name", "name:[1,3]", "name:auto". Throws Error on malformed text.
TensorSpec parse_input_spec(const std::string& text);
// Parses Polygraphy's `--outputs` syntax "name:dtype" or "name" (dtype "auto" or a numpy name).
TensorSpec parse_output_spec(const std::string& text);

// Producers, defined tensors and types of one graph (as it is when indexed).
struct GraphIndex {
  std::map<std::string, int> producer;  // tensor -> node index
  std::set<std::string> graph_inputs;   // runtime inputs (not initializers)
  std::set<std::string> initializers;
  std::map<std::string, const onnx::TypeProto*> types;  // what the model knows of each tensor

  explicit GraphIndex(const onnx::GraphProto& g);
  bool has(const std::string& name) const {
    return producer.count(name) || graph_inputs.count(name) || initializers.count(name);
  }
};

// Everything node `n` reads: its inputs and the tensors its subgraphs (If branches, Loop and Scan
// bodies) read from the graphs around them.
std::vector<std::string> node_reads(const onnx::NodeProto& n);

// Gives each unnamed node of `g` the name `base(index, node)` (index in graph order), with "_"
// appended while another node has it: every node can then be addressed by name.
void name_unnamed_nodes(onnx::GraphProto& g, const std::function<std::string(int, const onnx::NodeProto&)>& base);

// Parses a byte count with an optional K, M or G suffix (KiB, MiB, GiB): "4096", "16M".
int64_t parse_byte_size(const std::string& text);

// Replaces the model's graph by the subgraph that computes `outputs` from
// `inputs` (empty lists keep the model's own inputs or outputs): the nodes
// between them, the initializers they read, and value_info for what stays.
// Auto dtypes and shapes are taken from the model's value_info, so run
// infer_shapes first. Throws Error for a tensor the model does not have, an
// output that needs a graph input that is not among `inputs`, an input whose
// producer would still be needed, or a dtype nobody knows.
struct ExtractReport {
  size_t nodes_before = 0;
  size_t nodes_kept = 0;
  size_t inputs = 0;
  size_t outputs = 0;
};
ExtractReport extract_subgraph(OnnxModel& model, const std::vector<TensorSpec>& inputs,
                               const std::vector<TensorSpec>& outputs);

// Removes the nodes whose outputs reach no graph output (directly or through a
// sub-graph that reads them), then the initializers and value_info nobody uses.
// Graph inputs stay. Returns the number of nodes removed.
size_t remove_dead_nodes(OnnxModel& model);

// Forgets the shapes of every tensor but the graph inputs (value_info and output


struct SanitizeOptions {
  InputShapes input_shapes;     // --override-input-shapes
  bool shape_inference = true;  // run ONNX shape inference (and between folding passes)
  bool fold_constants = false;
  int num_passes = -1;               // folding rounds (-1: until nothing changes)
  int64_t fold_size_threshold = -1;  // do not fold nodes with larger outputs (bytes; -1: no limit)
  bool cleanup = false;              // remove dead nodes (always done after folding)
  bool toposort = false;             // sort the nodes topologically first
};

struct SanitizeReport {
  size_t nodes_before = 0;
  size_t nodes_folded = 0;
  size_t nodes_removed = 0;  // dead nodes removed by cleanup
  size_t nodes_after = 0;
};

// `surgeon sanitize`: sorts, overrides input shapes, infers shapes (strictly: a
// shape error is an Error), removes dead nodes, folds constants, in that order, as
// `options` asks.
SanitizeReport sanitize_model(OnnxModel& model, const SanitizeOptions& options);

// The first problem ONNX's checker (what onnx.checker.check_model runs) finds, ""
// when there is none: its first line, or the whole text, whose context lines say where
// ("Bad node spec for node ..." for a node's problem). Models of IR versions above 8, which
// the checker of ONNX 1.12 refuses, are checked as IR version 8.
enum class CheckerText { FirstLine, Whole };
std::string onnx_checker_problem(const OnnxModel& model, CheckerText text = CheckerText::FirstLine);

// Final check before writing a model: validate_onnx_model, then ONNX's checker.
// A checker problem throws Error when `checker_must_pass` (the source model passed
// it, so the change broke it) and is a warning otherwise. `what` names the model.
void check_model_before_saving(const OnnxModel& model, const std::string& what, bool checker_must_pass);

}  // namespace vkg
