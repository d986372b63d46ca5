#include "runtime/core/graph.h"

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
