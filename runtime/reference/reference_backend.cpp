#include "runtime/reference/reference_backend.h"

#include <set>

namespace vkg {

namespace {

void collect_unsupported(const Graph& graph, std::map<std::string, std::vector<std::string>>& missing) {
  const OpRegistry& reg = OpRegistry::reference();
  for (const Node& n : graph.nodes) {
    const std::string key = n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "::" + n.op_type;
    if (!(n.domain.empty() || n.domain == "ai.onnx") || !reg.find(n.op_type)) missing[key].push_back(n.name);
    for (const Graph* sub : n.subgraphs()) collect_unsupported(*sub, missing);
  }
}

// The values visible while a graph runs: its own, then those of the graphs around it.
struct Scope {
  const Graph& graph;
  const std::map<std::string, Tensor>& values;
  const Scope* parent = nullptr;

  const Tensor* find(const std::string& name) const {
    if (auto it = values.find(name); it != values.end()) return &it->second;
    if (auto it = graph.initializers.find(name); it != graph.initializers.end()) return &it->second;
    return parent ? parent->find(name) : nullptr;
  }
};

void execute(const Graph& graph, int64_t opset, std::map<std::string, Tensor>& values, const Scope* parent,
             const std::set<std::string>& keep, const NodeObserver& observer = nullptr);

// Runs `node` reading from `scope`, subgraphs included; the inputs it read go to `read` when given.
std::vector<Tensor> run_in_scope(const Node& node, int64_t opset, const Scope& scope,
                                 std::vector<const Tensor*>* read = nullptr) {
  const SubgraphRunner runner = [&](const Graph& body, const std::vector<Tensor>& inputs) {
    VKG_CHECK(inputs.size() == body.inputs.size(),
              "subgraph '" << body.name << "' takes " << body.inputs.size() << " inputs, given " << inputs.size());
    std::map<std::string, Tensor> local;
    for (size_t i = 0; i < inputs.size(); ++i) local[body.inputs[i].name] = inputs[i];
    std::set<std::string> body_keep;
    for (const ValueInfo& out : body.outputs) body_keep.insert(out.name);
    execute(body, opset, local, &scope, body_keep);
    const Scope body_scope{body, local, &scope};
    std::vector<Tensor> outs;
    for (const ValueInfo& out : body.outputs) {
      const Tensor* t = body_scope.find(out.name);
      VKG_CHECK(t, "subgraph '" << body.name << "': output '" << out.name << "' has no value");
      outs.push_back(*t);
    }
    return outs;
  };
  std::vector<const Tensor*> ins;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    const Tensor* t = scope.find(name);
    VKG_CHECK(t, node.describe() << ": input tensor '" << name << "' has no value");
    ins.push_back(t);
  }
  std::vector<Tensor> outs = run_reference_node(node, opset, ins, node.subgraphs().empty() ? nullptr : &runner);
  if (read) *read = std::move(ins);
  return outs;
}

// Runs the nodes of `graph` on `values` (which hold its inputs), reading what it does not
// define from `parent`. Tensors not in `keep` are freed after their last use.
void execute(const Graph& graph, int64_t opset, std::map<std::string, Tensor>& values, const Scope* parent,
             const std::set<std::string>& keep, const NodeObserver& observer) {
  // Last use of every tensor, subgraphs' reads of enclosing tensors included.
  std::map<std::string, size_t> last_use;
  std::vector<std::vector<std::string>> reads(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    reads[i] = node.inputs;
    for (const std::string& name : Graph::outer_scope_reads(node)) reads[i].push_back(name);
    for (const std::string& in : reads[i])
      if (!in.empty()) last_use[in] = i;
  }
  const Scope scope{graph, values, parent};
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    std::vector<const Tensor*> read;
    std::vector<Tensor> outs = run_in_scope(node, opset, scope, observer ? &read : nullptr);
    if (observer) observer(i, node, read, outs);
    for (size_t o = 0; o < node.outputs.size(); ++o)
      if (!node.outputs[o].empty()) values[node.outputs[o]] = std::move(outs[o]);
    for (const std::string& name : reads[i]) {
      auto lu = last_use.find(name);
      if (lu != last_use.end() && lu->second == i && !keep.count(name)) values.erase(name);
    }
  }
}

// Checks the graph inputs' dtypes and shapes and puts them into `values`.
void bind_inputs(const Graph& graph, const TensorMap& inputs, std::map<std::string, Tensor>& values) {
  for (const ValueInfo& in : graph.inputs) {
    auto it = inputs.find(in.name);
    VKG_CHECK(it != inputs.end(), "missing value for graph input '" << in.name << "'");
    const Tensor& t = it->second;
    if (in.dtype) {
      VKG_CHECK(t.dtype() == *in.dtype, "input '" << in.name << "' has type " << dtype_name(t.dtype())
                                                  << " but the model expects " << dtype_name(*in.dtype));
    }
    if (in.shape) {
      bool ok = in.shape->size() == t.shape().size();
      for (size_t d = 0; ok && d < t.shape().size(); ++d)
        ok = !(*in.shape)[d].known() || (*in.shape)[d].value == t.shape()[d];
      VKG_CHECK(ok, "input '" << in.name << "' has shape " << shape_to_string(t.shape()) << " but the model expects "
                              << in.describe());
    }
    values[in.name] = t;
  }
}

}  // namespace

std::vector<std::string> ReferenceBackend::unsupported_ops(const Graph& graph) {
  std::map<std::string, std::vector<std::string>> missing;
  collect_unsupported(graph, missing);
  std::vector<std::string> out;
  for (const auto& [op, names] : missing) {
    std::string s = op + " (";
    for (size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > 5) s += ", ... " + std::to_string(names.size()) + " nodes";
    out.push_back(s + ")");
  }
  return out;
}

ReferenceBackend::ReferenceBackend(const Graph& graph) : graph_(graph) {
  const auto missing = unsupported_ops(graph);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    VKG_THROW("the reference backend does not support these ops: " << list);
  }
}

std::vector<Tensor> run_reference_node(const Node& node, int64_t opset, const std::vector<const Tensor*>& inputs,
                                       const SubgraphRunner* subgraphs) {
  const RefKernel* kernel = OpRegistry::reference().find(node.op_type);
  VKG_CHECK(kernel, node.describe() << ": op '" << node.op_type << "' is not supported by the reference backend");
  KernelContext ctx{node, opset, inputs, subgraphs};
  std::vector<Tensor> outs;
  try {
    outs = (*kernel)(ctx);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.find(node.describe()) != std::string::npos) throw;
    VKG_THROW(node.describe() << ": " << msg);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    VKG_CHECK(node.outputs[i].empty() || i < outs.size(),
              node.describe() << ": kernel produced " << outs.size() << " outputs, node needs " << node.outputs.size());
  return outs;
}

TensorMap ReferenceBackend::run(const TensorMap& inputs, const std::vector<std::string>& requested,
                                const NodeObserver& observer) const {
  std::vector<std::string> wanted = requested;
  if (wanted.empty())
    for (const ValueInfo& o : graph_.outputs) wanted.push_back(o.name);

  const std::set<std::string> keep(wanted.begin(), wanted.end());
  std::map<std::string, Tensor> values;
  bind_inputs(graph_, inputs, values);
  execute(graph_, graph_.opset, values, nullptr, keep, observer);
  const Scope scope{graph_, values, nullptr};
  auto lookup = [&](const std::string& name) { return scope.find(name); };

  TensorMap result;
  for (const std::string& name : wanted) {
    const Tensor* t = lookup(name);
    VKG_CHECK(t, "requested tensor '" << name << "' is not produced by the graph");
    result[name] = *t;
  }
  return result;
}

ReferenceStepper::ReferenceStepper(const Graph& graph, const TensorMap& inputs, std::map<std::string, int> holds)
    : graph_(graph), uses_(std::move(holds)) {
  ReferenceBackend check(graph);  // throws for unsupported ops
  bind_inputs(graph, inputs, values_);
  reads_.resize(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    std::set<std::string> once(node.inputs.begin(), node.inputs.end());
    for (const std::string& name : Graph::outer_scope_reads(node)) once.insert(name);
    once.erase("");
    reads_[i].assign(once.begin(), once.end());
    for (const std::string& name : reads_[i]) ++uses_[name];
  }
  std::vector<std::string> names;
  for (const auto& [name, t] : values_) names.push_back(name);
  for (const std::string& name : names) drop_if_unused(name);
}

void ReferenceStepper::drop_if_unused(const std::string& name) {
  auto it = uses_.find(name);
  if (it == uses_.end() || it->second <= 0) values_.erase(name);
}

void ReferenceStepper::run_next() {
  const Node& node = graph_.nodes[next_];
  const Scope scope{graph_, values_, nullptr};
  std::vector<Tensor> outs = run_in_scope(node, graph_.opset, scope);
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    values_[node.outputs[o]] = std::move(outs[o]);
    drop_if_unused(node.outputs[o]);
  }
  for (const std::string& name : reads_[next_]) {
    --uses_[name];
    drop_if_unused(name);
  }
  ++next_;
}

const Tensor* ReferenceStepper::value(const std::string& name) {
  if (auto it = graph_.initializers.find(name); it != graph_.initializers.end()) return &it->second;
  while (!values_.count(name) && next_ < graph_.nodes.size()) run_next();
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void ReferenceStepper::release(const std::string& name) {
  auto it = uses_.find(name);
  if (it == uses_.end()) return;
  --it->second;
  drop_if_unused(name);
}

}  // namespace vkg
