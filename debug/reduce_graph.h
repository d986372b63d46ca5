// The model side of `debug reduce`: a prepared ONNX model whose candidate
// subgraphs are named by their boundary tensors, as Polygraphy's reduce marks
// graph inputs and outputs, and turned into standalone models for the check.
// Tensors a candidate needs from outside its boundary are frozen to the values
// the reference backend computes on the whole model ("Freezing tensor ... to
// eliminate branches"), so a candidate computes what it computed in the model.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/data/data_loader.h"
#include "runtime/onnx/onnx_import.h"

namespace vkg::debug {

struct ReducePrepOptions {
  InputShapes input_shapes;     // --model-input-shapes: override the model's input shapes first
  bool shape_inference = true;  // false: --no-shape-inference (ONNX shape inference is not run)
  // --force-fallback-shape-inference: dtypes and shapes of every tensor from a reference-backend run.
  bool force_fallback = false;
  // Inputs of the reference run (fallback shapes and frozen values), made as `vkgraphy run`
  // makes them with the same options (iteration 0).
  DataLoaderOptions data;
};

// A candidate subgraph named by its boundary tensors. Plain data: prints with
// ReductionGraph::describe, compares with ==.
struct Boundary {
  std::vector<std::string> inputs;   // graph inputs of the candidate
  std::vector<std::string> outputs;  // graph outputs of the candidate
  bool operator==(const Boundary&) const = default;
};

// A model prepared for reduction, and the candidates cut from it. Nodes are
// numbered in topological order. The reference backend runs at most once (on
// the first call that needs values, with iteration 0 of options.data) and every
// tensor it computes is cached; the cache makes a ReductionGraph not safe to
// share between threads.
class ReductionGraph {
 public:
  // Prepares `model` (loaded with its external data): validates it, sorts it,
  // overrides input shapes, lowers Constant nodes into initializers (a Constant's
  // output never becomes a graph input), infers shapes (ONNX's inference, lenient:
  // failures are warnings) and, with force_fallback, takes the dtype and shape of
  // every tensor from a reference run. Throws Error for an invalid model, or when a
  // forced fallback cannot run.
  ReductionGraph(OnnxModel model, const ReducePrepOptions& options);

  // Nodes after lowering Constants, in topological order.
  size_t num_nodes() const { return reads_.size(); }
  const std::string& node_name(size_t i) const;  // may be "" for an unnamed node
  // What node i reads that is not constant: no initializers, no omitted ("") inputs,
  // no repeats; tensors its sub-graphs read from outside come last.
  std::vector<std::string> node_inputs(size_t i) const;
  std::vector<std::string> node_outputs(size_t i) const;  // without omitted ("") outputs
  // "Add 'node_5'" for messages.
  std::string describe_node(size_t i) const;

  // The model's own graph inputs (initializers excluded) and outputs.
  Boundary whole() const;

  // Nodes (ascending) that the candidate `b` runs: those its outputs need, walking
  // back from b.outputs and stopping at b.inputs and initializers. Original graph
  // inputs the walk reaches that are not in b.inputs are frozen; kept nodes that
  // compute only from frozen values and initializers are folded away and not listed.
  // Throws Error naming a tensor the model lacks, a repeated name, an initializer
  // given as an input, or an empty b.outputs.
  std::vector<size_t> nodes_of(const Boundary& b) const;

  // The standalone model of `b`: the nodes of nodes_of(b) in order; graph inputs
  // b.inputs with dtype and shape; graph outputs b.outputs with dtype (and shape
  // when known); the initializers they read; the source's opset imports, IR
  // version and metadata. Frozen tensors, and the outputs of folded nodes that are
  // still read, become initializers holding reference values. A kept node that also
  // produces one of b.inputs has that output renamed ("<name>_reduce_unused"), so
  // the input is not defined twice. Dtypes or shapes of boundary tensors that
  // preparation left unknown come from the reference run, as do the concrete shapes
  // of intermediate tensors with dynamic dimensions that become graph inputs (when
  // the reference backend can run the model). `frozen` receives the
  // frozen original graph inputs (nodes_of's sense), in model order. The result
  // passes ONNX's checker (onnx_checker_problem) when the source model does.
  OnnxModel materialize(const Boundary& b, std::vector<std::string>* frozen = nullptr) const;

  // Prune steps (vkgraphy goes beyond Polygraphy here): `b` without one node at its edge.
  // without_sink: `node` is in nodes_of(b) and no other such node reads its outputs.
  //   Its outputs leave b.outputs (its inputs produced by nodes of b that no other node
  //   of b reads take their place), and b.inputs only it read leave b.inputs. nullopt
  //   when `node` is not such a sink or no output would remain.
  // without_source: `node` is in nodes_of(b) and everything it reads is a b.input, an
  //   initializer or frozen. Its outputs that nodes of b read become graph inputs (in
  //   place of the b.inputs only it read). nullopt when it is not such a source, or when
  //   one of its outputs is in b.outputs.
  std::optional<Boundary> without_sink(const Boundary& b, size_t node) const;
  std::optional<Boundary> without_source(const Boundary& b, size_t node) const;

  // "inputs [a, b] -> outputs [c] (3 nodes)" for logs and the debug replay.
  std::string describe(const Boundary& b) const;

  // Whether some graph input or node output has an unknown dtype, rank or
  // dimension after preparation (reduce warns: candidates may then need the fallback).
  bool has_dynamic_shapes() const;

  // The prepared model (Constants lowered, sorted, shapes inferred).
  const OnnxModel& model() const { return model_; }

 private:
  struct Selection {
    std::vector<size_t> nodes;             // kept and not folded, ascending
    std::vector<std::string> frozen;       // original graph inputs cut off, in model order
    std::map<std::string, bool> constant;  // frozen tensors and folded outputs -> read by `nodes`
  };
  Selection select(const Boundary& b) const;
  // Nodes among `nodes` that read `tensor`.
  std::vector<size_t> readers(const std::string& tensor, const std::vector<size_t>& nodes) const;
  void index_model();
  // The reference values of every tensor (graph inputs and node outputs), computed once;
  // `why` says what needs them in the error when the reference backend cannot run.
  const TensorMap& reference_values(const std::string& why) const;
  // What is known of `tensor`, completed from the reference run when its dtype (or,
  // with `need_shape`, its shape) is unknown.
  ValueInfo info_of(const std::string& tensor, bool need_shape) const;

  OnnxModel model_;
  ReducePrepOptions options_;
  std::vector<std::vector<std::string>> reads_;    // per node: node_inputs
  std::vector<std::vector<std::string>> outputs_;  // per node: node_outputs
  std::map<std::string, size_t> producer_;
  std::set<std::string> initializers_;
  std::vector<std::string> graph_inputs_;   // initializers excluded, in model order
  std::map<std::string, ValueInfo> infos_;  // what preparation knows of each tensor
  mutable std::optional<TensorMap> reference_;
  mutable std::string reference_error_;
};

// Writes a reduced model whole or not at all: validate_onnx_model, ONNX's
// checker (a problem is a warning: the source may not have passed it), then
// save_onnx_model. Throws Error naming `path` when it cannot be written.
void save_reduced_model(const OnnxModel& model, const std::string& path);

}  // namespace vkg::debug
