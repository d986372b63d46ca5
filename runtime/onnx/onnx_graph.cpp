// Conversion of a validated ModelProto into the graph IR, and the import pipeline.
#include <onnx/onnx_pb.h>

#include <set>

#include "runtime/core/logger.h"
#include "runtime/onnx/onnx_import.h"

namespace vkg {

namespace {

Graph graph_from_proto(const onnx::GraphProto& g);

Attribute attribute_from_proto(const onnx::AttributeProto& a, const std::string& node_label) {
  Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      out.kind = Attribute::Kind::Float;
      out.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      out.kind = Attribute::Kind::Int;
      out.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      out.kind = Attribute::Kind::String;
      out.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      out.kind = Attribute::Kind::Tensor;
      out.t = tensor_from_proto(a.t());
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = Attribute::Kind::Floats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      out.kind = Attribute::Kind::Ints;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      out.kind = Attribute::Kind::Strings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::GRAPH:
      out.kind = Attribute::Kind::Graph;
      out.g = std::make_shared<const Graph>(graph_from_proto(a.g()));
      break;
    case onnx::AttributeProto::GRAPHS:
    case onnx::AttributeProto::UNDEFINED:
    case onnx::AttributeProto::SPARSE_TENSOR:
    case onnx::AttributeProto::SPARSE_TENSORS:
    case onnx::AttributeProto::TENSORS:
    case onnx::AttributeProto::TYPE_PROTO:
    case onnx::AttributeProto::TYPE_PROTOS:
    default:  // protobuf enums may carry unknown values from newer ONNX versions
      VKG_THROW(node_label << ": attribute '" << a.name() << "' has an unsupported type "
                           << onnx::AttributeProto_AttributeType_Name(a.type()));
  }
  return out;
}

}  // namespace

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& vi) {
  ValueInfo out;
  out.name = vi.name();
  if (!vi.type().has_tensor_type()) return out;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0) out.dtype = dtype_from_onnx(tt.elem_type());
  if (tt.has_shape()) {
    std::vector<Dim> dims;
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.param = d.dim_param();
      dims.push_back(dim);
    }
    out.shape = dims;
  }
  return out;
}

void dims_to_proto(const std::vector<Dim>& dims, onnx::TensorShapeProto* shape) {
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (d.known())
      dim->set_dim_value(d.value);
    else if (!d.param.empty())
      dim->set_dim_param(d.param);
  }
}

Node node_from_proto(const onnx::NodeProto& np) {
  Node n;
  n.name = np.name();
  n.op_type = np.op_type();
  n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  n.inputs.assign(np.input().begin(), np.input().end());
  n.outputs.assign(np.output().begin(), np.output().end());
  for (const auto& a : np.attribute()) n.attrs[a.name()] = attribute_from_proto(a, n.describe());
  return n;
}

namespace {

// A graph or subgraph: inputs, initializers, value_info, outputs and nodes.
Graph graph_from_proto(const onnx::GraphProto& g) {
  Graph graph;
  graph.name = g.name();
  for (const auto& init : g.initializer()) graph.initializers[init.name()] = tensor_from_proto(init);
  for (const auto& in : g.input()) {
    ValueInfo vi = value_info_from_proto(in);
    graph.value_info[in.name()] = vi;
    if (!graph.initializers.count(in.name())) graph.inputs.push_back(vi);
  }
  for (const auto& vi : g.value_info()) graph.value_info[vi.name()] = value_info_from_proto(vi);
  for (const auto& out : g.output()) {
    ValueInfo vi = value_info_from_proto(out);
    // Inference may know more than the declared output.
    if (auto it = graph.value_info.find(out.name()); it != graph.value_info.end() && !vi.shape) vi = it->second;
    graph.value_info[out.name()] = vi;
    graph.outputs.push_back(vi);
  }
  for (const auto& [name, t] : graph.initializers) {
    ValueInfo vi;
    vi.name = name;
    vi.dtype = t.dtype();
    std::vector<Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
    vi.shape = dims;
    graph.value_info[name] = vi;
  }
  for (const auto& np : g.node()) graph.nodes.push_back(node_from_proto(np));
  return graph;
}

}  // namespace

Graph to_graph(const OnnxModel& model) {
  Graph graph = graph_from_proto(model.proto->graph());
  graph.ir_version = model.proto->ir_version();
  graph.opset = default_opset(model);
  return graph;
}

Graph import_onnx(OnnxModel& model, const ImportOptions& options) {
  const std::vector<std::string> unknown = validate_onnx_model(model);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
    if (!options.allow_unknown_ops)
      VKG_THROW("model '" << model.path << "' uses ops that ONNX opset " << default_opset(model)
                          << " does not define: " << list);
    VKG_WARNING("model '" << model.path << "' uses ops unknown to ONNX: " << list);
  }
  toposort(model);
  if (!options.input_shapes.empty()) override_input_shapes(model, options.input_shapes);
  if (options.static_input_shapes) fix_dynamic_input_dims(model);
  const bool strict = !options.allow_unknown_ops;
  if (options.shape_inference) {
    infer_shapes(model, strict);
    const std::string rules = vkgraphy_shape_rules_used(model);
    if (!rules.empty())
      VKG_INFO("model '" << model.path << "': shape inference used vkgraphy's rules for " << rules
                         << " (the installed ONNX 1.12 stops at opset 17), ONNX's for the other nodes");
  }
  if (options.fold_constants) {
    FoldOptions fold;
    fold.shape_inference = options.shape_inference;
    const size_t n = fold_constants(model, fold);
    if (n) VKG_VERBOSE("folded " << n << " constant node(s)");
  }
  return to_graph(model);
}

Graph import_onnx(const std::string& path, const ImportOptions& options) {
  OnnxModel model = load_onnx_model(path, options.load_external_data, options.external_data_dir);
  return import_onnx(model, options);
}

}  // namespace vkg
