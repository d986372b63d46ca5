// The graph IR: what the importer produces and every backend consumes.
// Plain data: nodes refer to tensors by name, exactly as ONNX does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace vkg {

struct Graph;

struct Attribute {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph };
  Kind kind = Kind::Int;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  vkg::Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  // Kind::Graph: a subgraph (If's branches, Loop's and Scan's body), which may read
  // tensors of the graphs that enclose it by name.
  std::shared_ptr<const Graph> g;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attrs;

  bool has_attr(const std::string& name) const { return attrs.count(name) != 0; }
  // Typed attribute getters; the ones without a default throw Error naming the node when absent.
  int64_t attr_int(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& def = {}) const;
  std::vector<float> attr_floats(const std::string& name, const std::vector<float>& def = {}) const;
  const Tensor& attr_tensor(const std::string& name) const;
  const Graph& attr_graph(const std::string& name) const;
  // The node's subgraphs (nullptr-free), in attribute-name order.
  std::vector<const Graph*> subgraphs() const;
  // "Conv 'conv1'" for messages.
  std::string describe() const;
};

// One dimension of a declared shape: a known value or a symbolic/unknown one.
struct Dim {
  int64_t value = -1;  // -1 when unknown
  std::string param;   // dim_param name, if any
  bool known() const { return value >= 0; }
};

struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;  // nullopt when unknown or unsupported
  std::optional<std::vector<Dim>> shape;  // nullopt when even the rank is unknown

  bool static_shape() const;
  Shape concrete_shape() const;  // requires static_shape()
  // "float32[1,3,height,width]"
  std::string describe() const;
};

struct Graph {
  std::string name;
  int64_t ir_version = 0;
  int64_t opset = 0;  // version of the default ONNX domain
  std::vector<ValueInfo> inputs;   // runtime inputs only (initializers excluded)
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;  // weights and folded constants
  std::vector<Node> nodes;                     // topologically sorted
  std::map<std::string, ValueInfo> value_info; // known types/shapes of every tensor

  const ValueInfo* find_value_info(const std::string& name) const;
  const Node* find_producer(const std::string& tensor) const;
  // Names of all tensors produced by nodes, in execution order.
  std::vector<std::string> node_outputs() const;
  // Names the graph's subgraphs (at any depth) read from outside themselves: the
  // outer-scope tensors a node with subgraphs depends on beyond its inputs.
  static std::vector<std::string> outer_scope_reads(const Node& node);
};

// The node names set in `graph` and its subgraphs, at any depth ("" included when a node has none).
std::set<std::string> node_names_deep(const Graph& graph);

// The name each node of `graph` goes by in engines, replays and --layer-precisions:
// its own, or "<prefix><Op>_<index in the graph>" for an unnamed one, with "_" appended
// until it is not in `taken`. Adds the names it makes to `taken`.
std::vector<std::string> layer_names(const Graph& graph, const std::string& prefix, std::set<std::string>& taken);

}  // namespace vkg
