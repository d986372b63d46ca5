#include "runtime/onnx/surgeon_insert.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "runtime/core/error.h"
#include "runtime/onnx/surgeon.h"

namespace vkg {

namespace {

std::string trimmed_text(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// One scalar of an attribute value: an int64, else a float, else a string (Python's int(), float()).
struct Scalar {
  enum Kind { Int, Float, String };
  Kind kind = String;
  int64_t i = 0;
  float f = 0;
  std::string s;
};

Scalar parse_scalar(const std::string& text) {
  const std::string t = trimmed_text(text);
  Scalar out;
  if (!t.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(t.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) {
      out.kind = Scalar::Int;
      out.i = int64_t(i);
      return out;
    }
    const float f = std::strtof(t.c_str(), &end);
    if (*end == '\0' && t.find_first_of("xX") == std::string::npos) {
      out.kind = Scalar::Float;
      out.f = f;
      return out;
    }
  }
  // Not a number: a string, its quotes removed.
  const size_t first = t.find_first_not_of("\"'");
  out.s = first == std::string::npos ? "" : t.substr(first, t.find_last_not_of("\"'") - first + 1);
  return out;
}

// The top-level graph and every graph inside its nodes' attributes.
template <class F> void for_each_graph(onnx::GraphProto* g, const F& f) {
  f(g);
  for (auto& node : *g->mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_graph(attr.mutable_g(), f);
      for (auto& sub : *attr.mutable_graphs()) for_each_graph(&sub, f);
    }
}

// Node inputs named `from` read `to` instead, in every graph, except those of `skip`.
void redirect_readers(onnx::GraphProto* top, const std::string& from, const std::string& to,
                      const onnx::NodeProto* skip) {
  for_each_graph(top, [&](onnx::GraphProto* g) {
    for (auto& node : *g->mutable_node()) {
      if (&node == skip) continue;
      for (auto& in : *node.mutable_input())
        if (in == from) in = to;
    }
  });
}

onnx::ValueInfoProto* graph_output(onnx::GraphProto* g, const std::string& name) {
  for (auto& v : *g->mutable_output())
    if (v.name() == name) return &v;
  return nullptr;
}

// The input tensor `name` is renamed `name` + suffix everywhere it is defined or described, so that
// `name` (a graph output) becomes the new node's output; the nodes reading `name` then read that.
void rename_definition(onnx::GraphProto* g, const GraphIndex& index, const std::string& name,
                       const std::string& renamed) {
  onnx::ValueInfoProto described;
  described.set_name(renamed);
  if (const onnx::ValueInfoProto* out = graph_output(g, name)) *described.mutable_type() = out->type();
  for (auto& v : *g->mutable_input())
    if (v.name() == name) v.set_name(renamed);
  for (auto& t : *g->mutable_initializer())
    if (t.name() == name) t.set_name(renamed);
  bool has_info = false;
  for (auto& v : *g->mutable_value_info())
    if (v.name() == name) v.set_name(renamed), has_info = true;
  if (auto p = index.producer.find(name); p != index.producer.end()) {
    for (auto& out : *g->mutable_node(p->second)->mutable_output())
      if (out == name) out = renamed;
  }
  if (!has_info && described.has_type()) *g->add_value_info() = described;
  onnx::ValueInfoProto* out = graph_output(g, name);
  if (out != nullptr && out->type().has_tensor_type()) out->mutable_type()->mutable_tensor_type()->clear_shape();
}

}  // namespace

bool is_onnx_op(const OnnxModel& model, const std::string& op) {
  return onnx::OpSchemaRegistry::Schema(op, int(default_opset(model)), "") != nullptr;
}

onnx::AttributeProto parse_node_attribute(const std::string& name, const std::string& value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  const std::string t = trimmed_text(value);
  const size_t open = t.find_first_not_of('['), close = t.find_last_not_of(']');
  if (!t.empty() && (open != 0 || close + 1 != t.size())) {  // brackets at either end: a list
    const std::string body = open == std::string::npos ? "" : t.substr(open, close - open + 1);
    std::vector<Scalar> items;
    for (size_t start = 0;;) {
      const size_t comma = body.find(',', start);
      items.push_back(parse_scalar(body.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    const bool strings = std::all_of(items.begin(), items.end(), [](const Scalar& s) { return s.kind == Scalar::String; });
    const bool ints = std::all_of(items.begin(), items.end(), [](const Scalar& s) { return s.kind == Scalar::Int; });
    const bool numbers = std::none_of(items.begin(), items.end(), [](const Scalar& s) { return s.kind == Scalar::String; });
    VKG_CHECK(strings || numbers, "attribute '" << name << "': the list " << value << " mixes strings and numbers");
    attr.set_type(strings ? onnx::AttributeProto::STRINGS : ints ? onnx::AttributeProto::INTS : onnx::AttributeProto::FLOATS);
    for (const Scalar& s : items) {
      if (strings) attr.add_strings(s.s);
      else if (ints) attr.add_ints(s.i);
      else attr.add_floats(s.kind == Scalar::Int ? float(s.i) : s.f);
    }
    return attr;
  }
  const Scalar s = parse_scalar(t);
  if (s.kind == Scalar::Int) attr.set_type(onnx::AttributeProto::INT), attr.set_i(s.i);
  else if (s.kind == Scalar::Float) attr.set_type(onnx::AttributeProto::FLOAT), attr.set_f(s.f);
  else attr.set_type(onnx::AttributeProto::STRING), attr.set_s(s.s);
  return attr;
}

size_t insert_node(OnnxModel& model, const InsertNodeSpec& spec) {
  VKG_CHECK(!spec.op.empty(), "surgeon insert: no op given");
  VKG_CHECK(!spec.outputs.empty(), "surgeon insert: the new node needs at least one output");
  onnx::GraphProto* g = model.proto->mutable_graph();
  // Node indices stay valid until the new node goes in; renamed tensors keep their producers.
  const GraphIndex index(*g);
  for (const std::vector<std::string>* names : {&spec.inputs, &spec.outputs})
    for (const std::string& name : *names) VKG_CHECK(index.has(name), "tensor '" << name << "' does not exist in the model");
  std::vector<std::string> inputs = spec.inputs, outputs;
  std::vector<std::pair<std::string, std::string>> redirects;  // readers of .first read .second
  for (const std::string& name : spec.outputs) {
    const bool also_input = std::find(spec.inputs.begin(), spec.inputs.end(), name) != spec.inputs.end();
    if (also_input) {
      const std::string suffixed = name + kInsertOutputSuffix;
      if (graph_output(g, name) != nullptr) {
        rename_definition(g, index, name, suffixed);
        std::replace(inputs.begin(), inputs.end(), name, suffixed);
        outputs.push_back(name);
      } else {
        redirects.emplace_back(name, suffixed);
        outputs.push_back(suffixed);
      }
      continue;
    }
    VKG_CHECK(index.producer.count(name) != 0,
              "'" << name << "' is a graph input or initializer; the new node cannot write it");
    auto* outs = g->mutable_node(index.producer.at(name))->mutable_output();
    for (auto& out : *outs)
      if (out == name) out.clear();  // an optional output left out; the slots after it keep their places
    while (!outs->empty() && outs->rbegin()->empty()) outs->RemoveLast();
    outputs.push_back(name);
  }

  // After the last producer of its inputs.
  int position = 0;
  for (const std::string& name : spec.inputs)
    if (auto p = index.producer.find(name); p != index.producer.end()) position = std::max(position, p->second + 1);
  onnx::NodeProto node;
  node.set_op_type(spec.op);
  if (!spec.name.empty()) node.set_name(spec.name);
  for (const std::string& name : inputs) node.add_input(name);
  for (const std::string& name : outputs) node.add_output(name);
  for (const auto& [attr_name, value] : spec.attrs) *node.add_attribute() = parse_node_attribute(attr_name, value);
  *g->add_node() = std::move(node);
  for (int i = g->node_size() - 1; i > position; --i) g->mutable_node()->SwapElements(i, i - 1);
  for (const auto& [from, to] : redirects) redirect_readers(g, from, to, &g->node(position));
  return remove_dead_nodes(model);
}

}  // namespace vkg
