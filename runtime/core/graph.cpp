#include "runtime/core/graph.h"

#include <set>

namespace vkg {

namespace {
const Attribute* find_attr(const Node& n, const std::string& name, Attribute::Kind kind) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return nullptr;
  VKG_CHECK(it->second.kind == kind, n.describe() << ": attribute '" << name << "' has the wrong type");
  return &it->second;
}
}  // namespace

std::string Node::describe() const { return op_type + " '" + name + "'"; }

int64_t Node::attr_int(const std::string& name) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Int);
  VKG_CHECK(a, describe() << ": required attribute '" << name << "' is missing");
  return a->i;
}

int64_t Node::attr_int(const std::string& name, int64_t def) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Int);
  return a ? a->i : def;
}

float Node::attr_float(const std::string& name, float def) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Float);
  return a ? a->f : def;
}

std::string Node::attr_string(const std::string& name, const std::string& def) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::String);
  return a ? a->s : def;
}

std::vector<int64_t> Node::attr_ints(const std::string& name, const std::vector<int64_t>& def) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Ints);
  return a ? a->ints : def;
}

std::vector<float> Node::attr_floats(const std::string& name, const std::vector<float>& def) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Floats);
  return a ? a->floats : def;
}

const Tensor& Node::attr_tensor(const std::string& name) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Tensor);
  VKG_CHECK(a, describe() << ": required attribute '" << name << "' is missing");
  return a->t;
}

const Graph& Node::attr_graph(const std::string& name) const {
  const Attribute* a = find_attr(*this, name, Attribute::Kind::Graph);
  VKG_CHECK(a && a->g, describe() << ": required subgraph attribute '" << name << "' is missing");
  return *a->g;
}

std::vector<const Graph*> Node::subgraphs() const {
  std::vector<const Graph*> out;
  for (const auto& [name, a] : attrs)
    if (a.kind == Attribute::Kind::Graph && a.g) out.push_back(a.g.get());
  return out;
}

namespace {

// Adds to `reads` the names `g` reads that it does not define itself.
void collect_outer_reads(const Graph& g, std::set<std::string>& reads) {
  std::set<std::string> defined;
  for (const ValueInfo& in : g.inputs) defined.insert(in.name);
  for (const auto& [name, t] : g.initializers) defined.insert(name);
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in)) reads.insert(in);
    for (const Graph* sub : n.subgraphs()) {
      std::set<std::string> inner;
      collect_outer_reads(*sub, inner);
      for (const std::string& name : inner)
        if (!defined.count(name)) reads.insert(name);
    }
    for (const std::string& out : n.outputs) defined.insert(out);
  }
  for (const ValueInfo& out : g.outputs)
    if (!defined.count(out.name)) reads.insert(out.name);
}

}  // namespace

std::vector<std::string> Graph::outer_scope_reads(const Node& node) {
  std::set<std::string> reads;
  for (const Graph* sub : node.subgraphs()) collect_outer_reads(*sub, reads);
  return {reads.begin(), reads.end()};
}

bool ValueInfo::static_shape() const {
  if (!shape) return false;
  for (const Dim& d : *shape)
    if (!d.known()) return false;
  return true;
}

Shape ValueInfo::concrete_shape() const {
  VKG_CHECK(static_shape(), "tensor '" << name << "' has no static shape: " << describe());
  Shape s;
  for (const Dim& d : *shape) s.push_back(d.value);
  return s;
}

std::string ValueInfo::describe() const {
  std::string s = dtype ? dtype_name(*dtype) : "?";
  if (!shape) return s + "[?]";
  s += "[";
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i) s += ",";
    const Dim& d = (*shape)[i];
    s += d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
  }
  return s + "]";
}

const ValueInfo* Graph::find_value_info(const std::string& n) const {
  auto it = value_info.find(n);
  return it == value_info.end() ? nullptr : &it->second;
}

const Node* Graph::find_producer(const std::string& tensor) const {
  for (const Node& n : nodes)
    for (const std::string& o : n.outputs)
      if (o == tensor) return &n;
  return nullptr;
}

std::vector<std::string> Graph::node_outputs() const {
  std::vector<std::string> out;
  for (const Node& n : nodes)
    for (const std::string& o : n.outputs)
      if (!o.empty()) out.push_back(o);
  return out;
}

}  // namespace vkg

namespace vkg {

std::set<std::string> node_names_deep(const Graph& graph) {
  std::set<std::string> names;
  for (const Node& n : graph.nodes) {
    names.insert(n.name);
    for (const Graph* sub : n.subgraphs()) names.merge(node_names_deep(*sub));
  }
  return names;
}

std::vector<std::string> layer_names(const Graph& graph, const std::string& prefix, std::set<std::string>& taken) {
  std::vector<std::string> out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    std::string name = graph.nodes[i].name;
    if (name.empty()) {
      name = prefix + graph.nodes[i].op_type + "_" + std::to_string(i);
      while (!taken.insert(name).second) name += "_";
    }
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace vkg
