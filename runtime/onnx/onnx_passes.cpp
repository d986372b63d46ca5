// Graph passes on the ONNX protobuf: shape inference, constant folding, sorting.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "runtime/core/logger.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/reference/reference_backend.h"

namespace vkg {

namespace {

// ONNX's inference on the model as it is.
void run_shape_inference(OnnxModel& model, bool strict) {
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/strict ? 1 : 0,
                                      /*enable_data_propagation=*/true);
  // Inference replaces value_info; keep a copy so a failure leaves the model as it was.
  onnx::ModelProto copy = *model.proto;
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (strict) VKG_THROW("model '" << model.path << "': shape inference failed: " << msg);
    VKG_WARNING("model '" << model.path << "': shape inference failed, shapes stay unknown: " << msg);
    return;
  }
  *model.proto = std::move(copy);
}

}  // namespace

void toposort(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  const int n = g->node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : g->node(i).output())
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  std::vector<int> pending(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : g->node(i).input())
      if (auto it = producer.find(in); it != producer.end()) deps.insert(it->second);
    for (int d : deps) users[size_t(d)].push_back(i);
    pending[size_t(i)] = int(deps.size());
  }
  // Kahn's algorithm, always taking the lowest original index that is ready: a sorted
  // graph keeps its order.
  std::set<int> ready;
  for (int i = 0; i < n; ++i)
    if (pending[size_t(i)] == 0) ready.insert(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int u : users[size_t(i)])
      if (--pending[size_t(u)] == 0) ready.insert(u);
  }
  if (int(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[size_t(i)] > 0)
        VKG_THROW("model '" << model.path << "' has a cycle through node '" << g->node(i).name() << "' ("
                            << g->node(i).op_type() << ")");
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) *sorted.Add() = g->node(i);
  g->mutable_node()->Swap(&sorted);
}

namespace {

bool is_nondeterministic(const std::string& op) {
  static const std::set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  return ops.count(op) != 0;
}

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

// The static shape of a tensor recorded in the model, if fully known.
std::optional<Shape> static_shape_of(const onnx::GraphProto& g, const std::string& name) {
  auto from = [](const onnx::ValueInfoProto& vi) -> std::optional<Shape> {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return std::nullopt;
    Shape s;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      s.push_back(d.dim_value());
    }
    return s;
  };
  for (const auto& vi : g.input())
    if (vi.name() == name) return from(vi);
  for (const auto& vi : g.value_info())
    if (vi.name() == name) return from(vi);
  for (const auto& vi : g.output())
    if (vi.name() == name) return from(vi);
  return std::nullopt;
}

// Shape/Size of a statically shaped tensor of `scopes` (the graph, then the graphs enclosing it).
std::optional<Tensor> fold_shape_node(const std::vector<const onnx::GraphProto*>& scopes, const Node& node) {
  if (node.op_type != "Shape" && node.op_type != "Size") return std::nullopt;
  std::optional<Shape> shape;
  for (const onnx::GraphProto* g : scopes)
    if ((shape = static_shape_of(*g, node.inputs.at(0)))) break;
  if (!shape) return std::nullopt;
  if (node.op_type == "Size") return Tensor::scalar<int64_t>(num_elements(*shape));
  const int64_t rank = int64_t(shape->size());
  int64_t start = node.attr_int("start", 0), end = node.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return Tensor::from_vector<int64_t>({end - start}, std::vector<int64_t>(shape->begin() + start, shape->begin() + end));
}

// An Identity node `name` copying `input` to `output`.
onnx::NodeProto identity_node(const std::string& name, const std::string& input, const std::string& output) {
  onnx::NodeProto id;
  id.set_op_type("Identity");
  id.set_name(name);
  id.add_input(input);
  id.add_output(output);
  return id;
}

// Renames the tensors `node` (and the subgraphs under it) reads or writes per `names`.
void rename_tensors(onnx::NodeProto& node, const std::map<std::string, std::string>& names) {
  auto rename = [&](std::string* name) {
    if (auto it = names.find(*name); it != names.end()) *name = it->second;
  };
  for (auto& in : *node.mutable_input()) rename(&in);
  for (auto& out : *node.mutable_output()) rename(&out);
  for (auto& a : *node.mutable_attribute()) {
    auto rename_graph = [&](onnx::GraphProto& g) {
      for (auto& n : *g.mutable_node()) rename_tensors(n, names);
      for (auto& o : *g.mutable_output()) rename(o.mutable_name());
    };
    if (a.has_g()) rename_graph(*a.mutable_g());
    for (auto& sub : *a.mutable_graphs()) rename_graph(sub);
  }
}


// The subgraph attribute `name` of `node`; nullptr when it has none.
const onnx::GraphProto* subgraph(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

// Nodes stacking `parts` along a new axis `axis` into `output`: an Unsqueeze of each, then
// a Concat.
void stack_parts(const std::vector<std::string>& parts, int64_t axis, const std::string& name,
                 const std::string& output, int64_t opset, onnx::GraphProto& graph, std::vector<onnx::NodeProto>& out) {
  const std::string axes = name + "/axes";
  if (opset >= 13) tensor_to_proto(Tensor::from_vector<int64_t>({1}, {axis}), axes, graph.add_initializer());
  onnx::NodeProto concat;
  concat.set_op_type("Concat");
  concat.set_name(name);
  auto* a = concat.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
  for (size_t k = 0; k < parts.size(); ++k) {
    onnx::NodeProto unsqueeze;
    unsqueeze.set_op_type("Unsqueeze");
    unsqueeze.set_name(name + "/unsqueeze_" + std::to_string(k));
    unsqueeze.add_input(parts[k]);
    if (opset >= 13) {
      unsqueeze.add_input(axes);
    } else {
      auto* ua = unsqueeze.add_attribute();
      ua->set_name("axes");
      ua->set_type(onnx::AttributeProto::INTS);
      ua->add_ints(axis);
    }
    unsqueeze.add_output(unsqueeze.name());
    concat.add_input(unsqueeze.name());
    out.push_back(std::move(unsqueeze));
  }
  concat.add_output(output);
  out.push_back(std::move(concat));
}

// One copy of `body` (an If branch, an unrolled iteration): its tensors renamed `prefix` +
// name, except those `names` already maps (formal inputs to the tensors they read, outputs
// the caller names), its initializers added to the graph. Returns the names its outputs
// have in the graph.
std::vector<std::string> copy_body(const onnx::GraphProto& body, const std::string& prefix,
                                   std::map<std::string, std::string> names, onnx::GraphProto& graph,
                                   std::vector<onnx::NodeProto>& out) {
  for (const auto& init : body.initializer()) {
    names[init.name()] = prefix + init.name();
    onnx::TensorProto* t = graph.add_initializer();
    *t = init;
    t->set_name(prefix + init.name());
  }
  for (const auto& n : body.node())
    for (const auto& o : n.output())
      if (!o.empty()) names.emplace(o, prefix + o);
  for (const auto& n : body.node()) {
    onnx::NodeProto copy = n;
    copy.set_name(prefix + (n.name().empty() ? n.op_type() + "_" + std::to_string(out.size()) : n.name()));
    rename_tensors(copy, names);
    out.push_back(std::move(copy));
  }
  std::vector<std::string> outputs;
  for (const auto& o : body.output()) {
    auto it = names.find(o.name());
    outputs.push_back(it == names.end() ? o.name() : it->second);
  }
  return outputs;
}

// The nodes that replace an If whose condition is known: the branch taken, its tensors
// renamed "<If name>/<name>" (its initializers join the graph's), its outputs the If's.
std::vector<onnx::NodeProto> inline_if(const onnx::NodeProto& node, bool cond, onnx::GraphProto& graph) {
  const char* attr = cond ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = subgraph(node, attr);
  VKG_CHECK(branch, "If '" << node.name() << "' has no " << attr);
  VKG_CHECK(branch->output_size() == node.output_size(), "If '" << node.name() << "': its " << attr << " has "
                                                                << branch->output_size() << " outputs, the node "
                                                                << node.output_size());
  const std::string prefix = (node.name().empty() ? node.output(0) : node.name()) + "/";
  std::set<std::string> produced;
  for (const auto& n : branch->node())
    for (const auto& o : n.output())
      if (!o.empty()) produced.insert(o);
  // A tensor the branch computes becomes the If's output directly (once); anything else
  // (an outer tensor, an initializer, a repeated output) goes through an Identity.
  std::map<std::string, std::string> names;
  for (int i = 0; i < branch->output_size(); ++i)
    if (produced.count(branch->output(i).name())) names.emplace(branch->output(i).name(), node.output(i));
  std::vector<onnx::NodeProto> out;
  const std::vector<std::string> outputs = copy_body(*branch, prefix, names, graph, out);
  for (int i = 0; i < branch->output_size(); ++i)
    if (outputs[size_t(i)] != node.output(i))
      out.push_back(identity_node(prefix + "output_" + std::to_string(i), outputs[size_t(i)], node.output(i)));
  return out;
}

// Loops unroll into at most this many copies of their body.
constexpr int64_t kMaxUnrolledIterations = 256;

// The nodes that replace a Loop of `trips` iterations whose condition stays true (absent or
// constant, and passed through the body unchanged): `trips` copies of the body, renamed
// "<Loop name>/iter<k>/<name>", each reading the previous one's loop-carried values; scan
// outputs are unsqueezed and concatenated. nullopt when the body computes its condition.
std::optional<std::vector<onnx::NodeProto>> unroll_loop(const onnx::NodeProto& node, int64_t trips, int64_t opset,
                                                        onnx::GraphProto& graph) {
  const onnx::GraphProto* body = subgraph(node, "body");
  const int carried = node.input_size() - 2;
  if (!body || carried < 0 || body->input_size() != 2 + carried || body->output_size() < 1 + carried) return std::nullopt;
  const std::string& cond_in = body->input(1).name();
  const std::string& cond_out = body->output(0).name();
  bool passthrough = cond_out == cond_in;
  for (const auto& n : body->node())
    if (n.op_type() == "Identity" && n.output_size() == 1 && n.output(0) == cond_out && n.input(0) == cond_in)
      passthrough = true;
  if (!passthrough) return std::nullopt;
  const int scans = body->output_size() - 1 - carried;
  const std::string base = node.name().empty() ? node.output(0) : node.name();
  std::vector<std::string> state(node.input().begin() + 2, node.input().end());
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(scans));
  std::vector<onnx::NodeProto> out;
  for (int64_t k = 0; k < trips; ++k) {
    const std::string prefix = base + "/iter" + std::to_string(k) + "/";
    std::map<std::string, std::string> names;
    names[body->input(0).name()] = prefix + "iteration";
    tensor_to_proto(Tensor::scalar<int64_t>(k), prefix + "iteration", graph.add_initializer());
    names[cond_in] = prefix + "condition";
    tensor_to_proto(Tensor::scalar<bool>(true), prefix + "condition", graph.add_initializer());
    for (int c = 0; c < carried; ++c) names[body->input(2 + c).name()] = state[size_t(c)];
    const std::vector<std::string> outs = copy_body(*body, prefix, names, graph, out);
    for (int c = 0; c < carried; ++c) state[size_t(c)] = outs[size_t(1 + c)];
    for (int s = 0; s < scans; ++s) parts[size_t(s)].push_back(outs[size_t(1 + carried + s)]);
  }
  for (int c = 0; c < carried; ++c)
    if (!node.output(c).empty())
      out.push_back(identity_node(base + "/carried_" + std::to_string(c), state[size_t(c)], node.output(c)));
  for (int s = 0; s < scans; ++s)
    if (!node.output(carried + s).empty())
      stack_parts(parts[size_t(s)], 0, base + "/scan_" + std::to_string(s), node.output(carried + s), opset, graph,
                  out);
  return out;
}

// The nodes that replace a Scan (opset 9 and later) over sequences of a static length: one
// copy of the body per step, renamed "<Scan name>/step<t>/<name>", reading the step's
// slices (Gather of one index along the scan axis) and the previous step's states; scan
// outputs are stacked along their axes. nullopt when the length is unknown or too long.
std::optional<std::vector<onnx::NodeProto>> unroll_scan(const onnx::NodeProto& node, int64_t opset,
                                                        onnx::GraphProto& graph) {
  const onnx::GraphProto* body = subgraph(node, "body");
  if (!body || opset < 9) return std::nullopt;
  auto ints = [&](const char* name, int count) {
    std::vector<int64_t> v(static_cast<size_t>(std::max(count, 0)), 0);
    for (const auto& a : node.attribute())
      if (a.name() == name) v.assign(a.ints().begin(), a.ints().end());
    return v;
  };
  int64_t m = 0;
  for (const auto& a : node.attribute())
    if (a.name() == "num_scan_inputs") m = a.i();
  const int n = node.input_size() - int(m);
  const int k = body->output_size() - n;
  if (m < 1 || n < 0 || k < 0 || body->input_size() != n + int(m)) return std::nullopt;
  const std::vector<int64_t> in_axes = ints("scan_input_axes", int(m)), in_dirs = ints("scan_input_directions", int(m));
  const std::vector<int64_t> out_axes = ints("scan_output_axes", k), out_dirs = ints("scan_output_directions", k);
  if (in_axes.size() != size_t(m) || in_dirs.size() != size_t(m) || out_axes.size() != size_t(k) ||
      out_dirs.size() != size_t(k))
    return std::nullopt;
  if (std::any_of(out_axes.begin(), out_axes.end(), [](int64_t a) { return a < 0; })) return std::nullopt;
  int64_t length = -1;
  std::vector<int64_t> axes;
  for (int j = 0; j < int(m); ++j) {
    const std::string& seq = node.input(n + j);
    std::optional<Shape> shape = static_shape_of(graph, seq);
    for (const auto& init : graph.initializer())
      if (init.name() == seq) shape = Shape(init.dims().begin(), init.dims().end());
    if (!shape) return std::nullopt;
    const auto rank = int64_t(shape->size());
    int64_t axis = in_axes[size_t(j)];
    if (axis < -rank || axis >= rank) return std::nullopt;
    if (axis < 0) axis += rank;
    if (length >= 0 && (*shape)[size_t(axis)] != length) return std::nullopt;
    length = (*shape)[size_t(axis)];
    axes.push_back(axis);
  }
  if (length < 1 || length > kMaxUnrolledIterations) return std::nullopt;
  const std::string base = node.name().empty() ? node.output(0) : node.name();
  std::vector<std::string> state(node.input().begin(), node.input().begin() + n);
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(k));
  std::vector<onnx::NodeProto> out;
  for (int64_t t = 0; t < length; ++t) {
    const std::string prefix = base + "/step" + std::to_string(t) + "/";
    std::map<std::string, std::string> names;
    for (int i = 0; i < n; ++i) names[body->input(i).name()] = state[size_t(i)];
    for (int j = 0; j < int(m); ++j) {
      const std::string index = prefix + "index_" + std::to_string(j), slice = prefix + "slice_" + std::to_string(j);
      tensor_to_proto(Tensor::scalar<int64_t>(in_dirs[size_t(j)] ? length - 1 - t : t), index,
                      graph.add_initializer());
      onnx::NodeProto gather;
      gather.set_op_type("Gather");
      gather.set_name(slice);
      gather.add_input(node.input(n + j));
      gather.add_input(index);
      gather.add_output(slice);
      auto* a = gather.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axes[size_t(j)]);
      out.push_back(std::move(gather));
      names[body->input(n + j).name()] = slice;
    }
    const std::vector<std::string> outs = copy_body(*body, prefix, names, graph, out);
    for (int i = 0; i < n; ++i) state[size_t(i)] = outs[size_t(i)];
    for (int o = 0; o < k; ++o) parts[size_t(o)].push_back(outs[size_t(n + o)]);
  }
  for (int i = 0; i < n; ++i)
    if (!node.output(i).empty())
      out.push_back(identity_node(base + "/state_" + std::to_string(i), state[size_t(i)], node.output(i)));
  for (int o = 0; o < k; ++o) {
    if (node.output(n + o).empty()) continue;
    std::vector<std::string> p = parts[size_t(o)];
    if (out_dirs[size_t(o)]) std::reverse(p.begin(), p.end());
    stack_parts(p, out_axes[size_t(o)], base + "/scan_" + std::to_string(o), node.output(n + o), opset, graph, out);
  }
  return out;
}

}  // namespace

void clear_inferred_shapes(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  g->clear_value_info();
  for (auto& out : *g->mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
}

namespace {

// Shapes for the outputs of the graph's Ifs that inference left open because the
// branches' results differ or one is not static at these shapes (it may fail there, as
// Silero VAD's 8 kHz branch does at 16 kHz frame sizes): the first static shape of the
// then and else branches, the one an engine builds (builder/control_flow.cpp, add_if; the other
// branch fails if selected). Adds to `pins`; false when none is new.
bool pin_if_outputs(const onnx::GraphProto& g, std::map<std::string, Shape>& pins) {
  bool added = false;
  for (const auto& n : g.node()) {
    if (n.op_type() != "If" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    for (int o = 0; o < n.output_size(); ++o) {
      const std::string& name = n.output(o);
      if (name.empty() || pins.count(name) || static_shape_of(g, name)) continue;
      std::vector<std::optional<Shape>> shapes;
      for (const char* branch : {"then_branch", "else_branch"}) {
        const onnx::GraphProto* g = subgraph(n, branch);
        if (g != nullptr && o < g->output_size()) shapes.push_back(static_shape_of(*g, g->output(o).name()));
      }
      const auto pin = std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.has_value(); });
      if (pin == shapes.end()) continue;
      pins[name] = **pin;
      added = true;
      VKG_VERBOSE("If '" << n.name() << "': output '" << name << "' takes the shape " << shape_to_string(**pin)
                         << " of its " << (pin == shapes.begin() ? "then" : "else") << " branch");
    }
  }
  return added;
}

void collect_node_inputs(const onnx::GraphProto& g, std::set<std::string>& used);

// Constants of the enclosing graphs that subgraphs (If branches, Loop and Scan bodies) read,
// copied into them as initializers for inference only: ONNX's inference sees the outer
// graph's types in a subgraph but not its values, so a Pad, Reshape or Slice inside a branch
// whose pads, shape or starts come from outside would stay unshaped (Silero VAD's op-18
// model pads its input in both branches). Small tensors only (shape data).
constexpr int64_t kSharedConstantElements = 4096;

std::vector<onnx::GraphProto*> subgraphs_of(onnx::NodeProto& node) {
  std::vector<onnx::GraphProto*> subs;
  for (auto& a : *node.mutable_attribute()) {
    if (a.has_g()) subs.push_back(a.mutable_g());
    for (auto& sub : *a.mutable_graphs()) subs.push_back(&sub);
  }
  return subs;
}

void share_outer_constants(onnx::GraphProto& g, std::map<std::string, const onnx::TensorProto*> outer) {
  for (const auto& init : g.initializer()) {
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    if (n <= kSharedConstantElements) outer[init.name()] = &init;
  }
  for (auto& node : *g.mutable_node()) {
    for (onnx::GraphProto* sub : subgraphs_of(node)) {
      std::set<std::string> defined, read;
      for (const auto& i : sub->initializer()) defined.insert(i.name());
      for (const auto& i : sub->input()) defined.insert(i.name());
      for (const auto& n : sub->node())
        for (const auto& o : n.output()) defined.insert(o);
      collect_node_inputs(*sub, read);
      for (const std::string& name : read) {
        auto it = outer.find(name);
        if (!name.empty() && !defined.count(name) && it != outer.end()) *sub->add_initializer() = *it->second;
      }
      share_outer_constants(*sub, outer);
    }
  }
}

// Removes from the subgraphs of `g` the initializers that an enclosing graph defines (ONNX
// names are unique across scopes, so these are share_outer_constants' copies).
void strip_outer_constants(onnx::GraphProto& g, std::set<std::string> outer) {
  for (const auto& init : g.initializer()) outer.insert(init.name());
  for (auto& node : *g.mutable_node()) {
    for (onnx::GraphProto* sub : subgraphs_of(node)) {
      google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
      for (auto& init : *sub->mutable_initializer())
        if (!outer.count(init.name())) *kept.Add() = std::move(init);
      sub->mutable_initializer()->Swap(&kept);
      strip_outer_constants(*sub, outer);
    }
  }
}

void set_shape(onnx::ValueInfoProto& vi, const Shape& shape) {
  auto* s = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
  s->clear_dim();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

// A copy of `model` with the shapes ONNX infers, in up to five passes, each pinning the If outputs
// the one before left open. Adds the value_info entries it declares for initializers to `entries`.
OnnxModel inferred_copy(const OnnxModel& model, bool strict, std::set<std::string>& entries) {
  std::map<std::string, Shape> pins;
  OnnxModel copy;
  for (int pass = 0;; ++pass) {
    copy = OnnxModel{std::make_shared<onnx::ModelProto>(*model.proto), model.path};
    clear_inferred_shapes(copy);
    auto* cg = copy.proto->mutable_graph();
    for (const auto& [name, shape] : pins) {
      auto out = std::find_if(cg->mutable_output()->begin(), cg->mutable_output()->end(),
                              [&name = name](const onnx::ValueInfoProto& vi) { return vi.name() == name; });
      onnx::ValueInfoProto* vi = out != cg->mutable_output()->end() ? &*out : cg->add_value_info();
      vi->set_name(name);
      set_shape(*vi, shape);
    }
    // Subgraphs see the types of outer tensors through value_info and inputs only:
    // declare the initializers too (their entries are dropped again below).
    std::set<std::string> typed;
    for (const auto& vi : cg->input()) typed.insert(vi.name());
    for (const auto& vi : cg->value_info()) typed.insert(vi.name());
    for (const auto& init : cg->initializer()) {
      if (typed.count(init.name())) continue;
      onnx::ValueInfoProto* vi = cg->add_value_info();
      vi->set_name(init.name());
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(init.data_type());
      set_shape(*vi, Shape(init.dims().begin(), init.dims().end()));
      entries.insert(init.name());
    }
    share_outer_constants(*cg, {});
    toposort(copy);  // inference reads the nodes in order
    try {
      run_shape_inference(copy, strict);
    } catch (const Error& e) {
      // ONNX lists one problem per line; errors are one line.
      std::string message = e.what();
      for (size_t nl; (nl = message.find('\n')) != std::string::npos;) message.replace(nl, 1, "; ");
      while (message.size() >= 2 && message.compare(message.size() - 2, 2, "; ") == 0)
        message.resize(message.size() - 2);
      throw Error(message);
    }
    if (pass == 4 || !pin_if_outputs(copy.proto->graph(), pins)) break;
  }
  return copy;
}

// Graph output `declared` takes the inferred type where it declares none, the inferred shape where
// it declares another rank, and the inferred dimensions it leaves open.
void merge_output_type(onnx::ValueInfoProto* declared, const onnx::TypeProto& inferred, const std::string& path) {
  const bool typed = declared->type().has_tensor_type() && declared->type().tensor_type().elem_type() != 0;
  if (!typed) {
    *declared->mutable_type() = inferred;
    return;
  }
  if (!inferred.has_tensor_type() || !inferred.tensor_type().has_shape()) return;
  const auto& shape_in = inferred.tensor_type().shape();
  auto* tt = declared->mutable_type()->mutable_tensor_type();
  if (!tt->has_shape() || tt->shape().dim_size() != shape_in.dim_size()) {
    if (tt->has_shape())
      VKG_WARNING("model '" << path << "': output '" << declared->name() << "' is declared with rank "
                            << tt->shape().dim_size() << " but has rank " << shape_in.dim_size()
                            << "; using the inferred shape");
    *tt->mutable_shape() = shape_in;
    return;
  }
  // Same rank: inferred values fill the dimensions the declaration leaves open.
  for (int d = 0; d < shape_in.dim_size(); ++d) {
    auto* dim = tt->mutable_shape()->mutable_dim(d);
    if (!(dim->has_dim_value() && dim->dim_value() >= 0) && shape_in.dim(d).has_dim_value())
      dim->set_dim_value(shape_in.dim(d).dim_value());
  }
}

}  // namespace

void infer_shapes(OnnxModel& model, bool strict) {
  register_newer_onnx_schemas();
  std::set<std::string> initializer_entries;
  const OnnxModel copy = inferred_copy(model, strict, initializer_entries);
  auto* g = model.proto->mutable_graph();
  // Inferred entries replace recorded ones; recorded ones that inference could not
  // find (after a failed lenient inference, or past data-dependent ops) stay.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info = copy.proto->graph().value_info();
  value_info.erase(std::remove_if(value_info.begin(), value_info.end(),
                                  [&](const onnx::ValueInfoProto& vi) { return initializer_entries.count(vi.name()); }),
                   value_info.end());
  std::set<std::string> inferred_names;
  for (const auto& vi : value_info) inferred_names.insert(vi.name());
  for (const auto& vi : g->value_info())
    if (!inferred_names.count(vi.name())) *value_info.Add() = vi;
  g->mutable_value_info()->Swap(&value_info);
  // Inference also typed the tensors inside subgraphs (If branches, Loop and Scan
  // bodies): take those subgraphs, found by their node's first output.
  std::map<std::string, const onnx::NodeProto*> inferred_nodes;
  for (const auto& n : copy.proto->graph().node())
    if (has_subgraph(n) && n.output_size() > 0) inferred_nodes[n.output(0)] = &n;
  for (auto& n : *g->mutable_node()) {
    if (!has_subgraph(n) || n.output_size() == 0) continue;
    auto it = inferred_nodes.find(n.output(0));
    if (it == inferred_nodes.end()) continue;
    for (int a = 0; a < n.attribute_size() && a < it->second->attribute_size(); ++a)
      if (n.attribute(a).has_g() && n.attribute(a).name() == it->second->attribute(a).name())
        *n.mutable_attribute(a)->mutable_g() = it->second->attribute(a).g();
  }
  strip_outer_constants(*g, {});
  for (int i = 0; i < g->output_size(); ++i)
    merge_output_type(g->mutable_output(i), copy.proto->graph().output(i).type(), model.path);
}

namespace {

bool in_onnx_domain(const onnx::NodeProto& np) { return np.domain().empty() || np.domain() == "ai.onnx"; }

// The nodes of Loop `np` unrolled, when its trip count is a constant of at most
// kMaxUnrolledIterations and its condition absent or constant true; nullopt otherwise.
std::optional<std::vector<onnx::NodeProto>> unrolled_loop(const onnx::NodeProto& np,
                                                          const std::map<std::string, Tensor>& constants, int64_t opset,
                                                          onnx::GraphProto& g) {
  auto m = constants.find(np.input(0));
  auto c = constants.find(np.input(1));
  const bool cond_true =
      np.input(1).empty() || (c != constants.end() && c->second.size() == 1 && c->second.get_as_double(0) != 0);
  if (m == constants.end() || m->second.size() != 1 || !cond_true) return std::nullopt;
  const int64_t trips = m->second.to_int64s().at(0);
  if (trips < 1 || trips > kMaxUnrolledIterations) return std::nullopt;
  auto nodes = unroll_loop(np, trips, opset, g);
  if (nodes) VKG_VERBOSE("Loop '" << np.name() << "': " << trips << " iterations with a constant trip count, unrolled");
  return nodes;
}

// The outputs of `node` computed now: a shape the scopes tell, or the reference kernel's results
// on constant inputs; nullopt when they are not constant or the kernel fails.
std::optional<std::vector<Tensor>> folded_outputs(const Node& node, const std::vector<const onnx::GraphProto*>& scopes,
                                                  const std::map<std::string, Tensor>& constants, int64_t opset) {
  std::vector<Tensor> outs;
  if (auto s = fold_shape_node(scopes, node)) {
    outs.push_back(std::move(*s));
    return outs;
  }
  std::vector<const Tensor*> ins;
  for (const auto& in : node.inputs) {
    if (in.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    auto it = constants.find(in);
    if (it == constants.end()) return std::nullopt;
    ins.push_back(&it->second);
  }
  if (!OpRegistry::reference().find(node.op_type)) return std::nullopt;
  try {
    return run_reference_node(node, opset, ins);
  } catch (const Error& e) {
    VKG_VERBOSE("constant folding skips " << node.describe() << ": " << e.what());
    return std::nullopt;
  }
}

// Whether the folded outputs of `node` fit FoldOptions::size_threshold; says so when not.
bool within_size_threshold(const Node& node, const std::vector<Tensor>& outs, const FoldOptions& options) {
  size_t bytes = 0;
  for (const Tensor& t : outs) bytes += t.nbytes();
  if (options.size_threshold >= 0 && int64_t(bytes) > options.size_threshold) {
    VKG_VERBOSE("constant folding skips " << node.describe() << ": its outputs take " << bytes
                                          << " bytes, more than the threshold " << options.size_threshold);
    return false;
  }
  return true;
}

// Rewrites `g` with one round's results: inlined nodes replace theirs, folded nodes give way to
// initializers of their outputs.
void apply_folds(onnx::GraphProto& g, std::map<int, std::vector<onnx::NodeProto>>& inlined,
                 const std::set<int>& folded_nodes, const std::vector<std::pair<std::string, Tensor>>& new_constants) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i) {
    if (auto it = inlined.find(i); it != inlined.end()) {
      for (auto& n : it->second) *kept.Add() = std::move(n);
    } else if (!folded_nodes.count(i)) {
      *kept.Add() = g.node(i);
    }
  }
  g.mutable_node()->Swap(&kept);
  for (auto& [name, t] : new_constants) tensor_to_proto(t, name, g.add_initializer());
  // Folded tensors no longer need value_info entries.
  std::set<std::string> now_const;
  for (const auto& [name, t] : new_constants) now_const.insert(name);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
  for (const auto& vi : g.value_info())
    if (!now_const.count(vi.name())) *vis.Add() = vi;
  g.mutable_value_info()->Swap(&vis);
}

// One round of folding in `g`, whose enclosing graphs are `outer` (innermost first) with
// the constants `constants` (g's own initializers are added): Ifs with a known condition
// inlined, Loops and Scans of a known length unrolled, nodes of constant inputs computed,
// and the same, recursively, inside the branches of the Ifs left. Returns the count.
size_t fold_graph_once(onnx::GraphProto& g, std::map<std::string, Tensor> constants,
                       const std::vector<const onnx::GraphProto*>& outer, int64_t opset, const FoldOptions& options) {
  for (const auto& init : g.initializer()) constants.insert_or_assign(init.name(), tensor_from_proto(init));
  std::vector<const onnx::GraphProto*> scopes = {&g};
  scopes.insert(scopes.end(), outer.begin(), outer.end());
  size_t folded_in_branches = 0;

  std::set<int> folded_nodes;
  std::vector<std::pair<std::string, Tensor>> new_constants;
  // If nodes with a known condition -> their branch; Loops with a known trip count -> unrolled.
  std::map<int, std::vector<onnx::NodeProto>> inlined;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& np = g.node(i);
    if (np.op_type() == "If" && in_onnx_domain(np) && np.input_size() == 1) {
      if (auto c = constants.find(np.input(0)); c != constants.end() && c->second.size() == 1) {
        const bool cond = c->second.get_as_double(0) != 0;
        inlined[i] = inline_if(np, cond, g);
        VKG_VERBOSE("If '" << np.name() << "': the condition is constant (" << (cond ? "true" : "false")
                           << "), the " << (cond ? "then" : "else") << " branch replaces it");
        continue;
      }
      // Computed on the device: fold what is constant inside both branches.
      for (auto& a : *g.mutable_node(i)->mutable_attribute())
        if (a.has_g()) folded_in_branches += fold_graph_once(*a.mutable_g(), constants, scopes, opset, options);
      continue;
    }
    if (np.op_type() == "Loop" && in_onnx_domain(np) && np.input_size() >= 2) {
      if (auto nodes = unrolled_loop(np, constants, opset, g)) inlined[i] = std::move(*nodes);
      continue;
    }
    if (np.op_type() == "Scan" && in_onnx_domain(np)) {
      if (auto nodes = unroll_scan(np, opset, g)) {
        inlined[i] = std::move(*nodes);
        VKG_VERBOSE("Scan '" << np.name() << "': sequences of a static length, unrolled");
      }
      continue;
    }
    if (!in_onnx_domain(np) || is_nondeterministic(np.op_type()) || has_subgraph(np)) continue;
    const Node node = node_from_proto(np);
    std::optional<std::vector<Tensor>> outs = folded_outputs(node, scopes, constants, opset);
    if (!outs || !within_size_threshold(node, *outs, options)) continue;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o].empty()) continue;
      constants[node.outputs[o]] = (*outs)[o];
      new_constants.emplace_back(node.outputs[o], std::move((*outs)[o]));
    }
    folded_nodes.insert(i);
    VKG_EXTRA_VERBOSE("folded " << node.describe());
  }
  if (folded_nodes.empty() && inlined.empty()) return folded_in_branches;
  apply_folds(g, inlined, folded_nodes, new_constants);
  return folded_in_branches + folded_nodes.size() + inlined.size();
}

}  // namespace

size_t fold_constants(OnnxModel& model, const FoldOptions& options) {
  const int64_t opset = default_opset(model);
  size_t folded_total = 0;
  const int rounds = options.max_rounds >= 0 ? std::min(options.max_rounds, 64) : 64;
  for (int round = 0; round < rounds; ++round) {
    const size_t folded = fold_graph_once(*model.proto->mutable_graph(), {}, {}, opset, options);
    if (folded == 0) break;
    folded_total += folded;
    remove_unused_initializers(model);
    if (options.shape_inference) infer_shapes(model, /*strict=*/false);
  }
  return folded_total;
}

namespace {

// Every tensor name the nodes of `g` (and of their subgraphs, which may read outer-scope tensors) read.
void collect_node_inputs(const onnx::GraphProto& g, std::set<std::string>& used) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) used.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_node_inputs(a.g(), used);
      for (const auto& sub : a.graphs()) collect_node_inputs(sub, used);
    }
  }
}

}  // namespace

void remove_unused_initializers(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  std::set<std::string> used;
  collect_node_inputs(*g, used);
  for (const auto& o : g->output()) used.insert(o.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  std::set<std::string> removed;
  for (auto& init : *g->mutable_initializer()) {
    if (used.count(init.name())) {
      *kept.Add() = std::move(init);
    } else {
      removed.insert(init.name());
    }
  }
  g->mutable_initializer()->Swap(&kept);
  // Inputs that only existed to give a removed initializer a default (IR < 4) go with it.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (const auto& in : g->input())
    if (!removed.count(in.name())) *inputs.Add() = in;
  g->mutable_input()->Swap(&inputs);
}

}  // namespace vkg
