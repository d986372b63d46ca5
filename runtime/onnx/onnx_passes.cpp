// Graph passes on the ONNX protobuf: shape inference, constant folding, sorting.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
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

// Shape/Size of a statically shaped tensor.
std::optional<Tensor> fold_shape_node(const onnx::GraphProto& g, const Node& node) {
  if (node.op_type != "Shape" && node.op_type != "Size") return std::nullopt;
  const auto shape = static_shape_of(g, node.inputs.at(0));
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

// The nodes that replace an If whose condition is known: the branch taken, its tensors
// renamed "<If name>/<name>" (its initializers join the graph's), its outputs the If's.
std::vector<onnx::NodeProto> inline_if(const onnx::NodeProto& node, bool cond, onnx::GraphProto& graph) {
  const char* attr = cond ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = nullptr;
  for (const auto& a : node.attribute())
    if (a.name() == attr && a.has_g()) branch = &a.g();
  VKG_CHECK(branch, "If '" << node.name() << "' has no " << attr);
  VKG_CHECK(branch->output_size() == node.output_size(), "If '" << node.name() << "': its " << attr << " has "
                                                                << branch->output_size() << " outputs, the node "
                                                                << node.output_size());
  const std::string prefix = (node.name().empty() ? node.output(0) : node.name()) + "/";
  std::map<std::string, std::string> names;
  std::set<std::string> produced;
  for (const auto& n : branch->node())
    for (const auto& o : n.output())
      if (!o.empty()) names[o] = prefix + o, produced.insert(o);
  for (const auto& init : branch->initializer()) names[init.name()] = prefix + init.name();
  // A tensor the branch computes becomes the If's output directly (once); anything else
  // (an outer tensor, an initializer, a repeated output) goes through an Identity.
  std::vector<onnx::NodeProto> identities;
  std::set<std::string> claimed;
  for (int i = 0; i < branch->output_size(); ++i) {
    const std::string& out = branch->output(i).name();
    if (produced.count(out) && !claimed.count(out)) {
      names[out] = node.output(i);
      claimed.insert(out);
      continue;
    }
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name(prefix + "output_" + std::to_string(i));
    id.add_input(out);
    id.add_output(node.output(i));
    identities.push_back(id);
  }
  for (const auto& init : branch->initializer()) {
    onnx::TensorProto* t = graph.add_initializer();
    *t = init;
    t->set_name(names.at(init.name()));
  }
  std::vector<onnx::NodeProto> out;
  for (const auto& n : branch->node()) {
    onnx::NodeProto copy = n;
    copy.set_name(prefix + (n.name().empty() ? n.op_type() + "_" + std::to_string(out.size()) : n.name()));
    rename_tensors(copy, names);
    out.push_back(std::move(copy));
  }
  for (auto& id : identities) {
    if (auto it = names.find(id.input(0)); it != names.end()) id.set_input(0, it->second);
    out.push_back(std::move(id));
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

void infer_shapes(OnnxModel& model, bool strict) {
  register_newer_onnx_schemas();
  OnnxModel copy{std::make_shared<onnx::ModelProto>(*model.proto), model.path};
  clear_inferred_shapes(copy);
  toposort(copy);  // inference reads the nodes in order
  try {
    run_shape_inference(copy, strict);
  } catch (const Error& e) {
    // ONNX lists one problem per line; errors are one line.
    std::string message = e.what();
    for (size_t nl; (nl = message.find('\n')) != std::string::npos;) message.replace(nl, 1, "; ");
    while (message.size() >= 2 && message.compare(message.size() - 2, 2, "; ") == 0) message.resize(message.size() - 2);
    throw Error(message);
  }
  auto* g = model.proto->mutable_graph();
  // Inferred entries replace recorded ones; recorded ones that inference could not
  // find (after a failed lenient inference, or past data-dependent ops) stay.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info = copy.proto->graph().value_info();
  std::set<std::string> inferred_names;
  for (const auto& vi : value_info) inferred_names.insert(vi.name());
  for (const auto& vi : g->value_info())
    if (!inferred_names.count(vi.name())) *value_info.Add() = vi;
  g->mutable_value_info()->Swap(&value_info);
  for (int i = 0; i < g->output_size(); ++i) {
    auto* declared = g->mutable_output(i);
    const onnx::TypeProto& inferred = copy.proto->graph().output(i).type();
    const bool typed = declared->type().has_tensor_type() && declared->type().tensor_type().elem_type() != 0;
    if (!typed) {
      *declared->mutable_type() = inferred;
      continue;
    }
    if (!inferred.has_tensor_type() || !inferred.tensor_type().has_shape()) continue;
    const auto& shape_in = inferred.tensor_type().shape();
    auto* tt = declared->mutable_type()->mutable_tensor_type();
    if (!tt->has_shape() || tt->shape().dim_size() != shape_in.dim_size()) {
      if (tt->has_shape())
        VKG_WARNING("model '" << model.path << "': output '" << declared->name() << "' is declared with rank "
                              << tt->shape().dim_size() << " but has rank " << shape_in.dim_size()
                              << "; using the inferred shape");
      *tt->mutable_shape() = shape_in;
      continue;
    }
    // Same rank: inferred values fill the dimensions the declaration leaves open.
    for (int d = 0; d < shape_in.dim_size(); ++d) {
      auto* dim = tt->mutable_shape()->mutable_dim(d);
      if (!(dim->has_dim_value() && dim->dim_value() >= 0) && shape_in.dim(d).has_dim_value())
        dim->set_dim_value(shape_in.dim(d).dim_value());
    }
  }
}

size_t fold_constants(OnnxModel& model, const FoldOptions& options) {
  const int64_t opset = default_opset(model);
  size_t folded_total = 0;
  const int rounds = options.max_rounds >= 0 ? std::min(options.max_rounds, 64) : 64;
  for (int round = 0; round < rounds; ++round) {
    auto* g = model.proto->mutable_graph();
    std::map<std::string, Tensor> constants;
    std::set<std::string> runtime_inputs;
    for (const auto& in : g->input()) runtime_inputs.insert(in.name());
    for (const auto& init : g->initializer())
      constants.emplace(init.name(), tensor_from_proto(init));

    std::set<int> folded_nodes;
    std::vector<std::pair<std::string, Tensor>> new_constants;
    std::map<int, std::vector<onnx::NodeProto>> inlined;  // If nodes with a known condition -> their branch
    for (int i = 0; i < g->node_size(); ++i) {
      const onnx::NodeProto& np = g->node(i);
      if (np.op_type() == "If" && (np.domain().empty() || np.domain() == "ai.onnx") && np.input_size() == 1) {
        if (auto c = constants.find(np.input(0)); c != constants.end() && c->second.size() == 1) {
          const bool cond = c->second.get_as_double(0) != 0;
          inlined[i] = inline_if(np, cond, *g);
          VKG_VERBOSE("If '" << np.name() << "': the condition is constant (" << (cond ? "true" : "false")
                             << "), the " << (cond ? "then" : "else") << " branch replaces it");
        }
        continue;
      }
      if (!(np.domain().empty() || np.domain() == "ai.onnx") || is_nondeterministic(np.op_type()) || has_subgraph(np))
        continue;
      const Node node = node_from_proto(np);
      std::vector<Tensor> outs;
      if (auto s = fold_shape_node(*g, node)) {
        outs.push_back(std::move(*s));
      } else {
        std::vector<const Tensor*> ins;
        bool all_const = true;
        for (const auto& in : node.inputs) {
          if (in.empty()) {
            ins.push_back(nullptr);
            continue;
          }
          auto it = constants.find(in);
          if (it == constants.end()) {
            all_const = false;
            break;
          }
          ins.push_back(&it->second);
        }
        if (!all_const || !OpRegistry::reference().find(node.op_type)) continue;
        try {
          outs = run_reference_node(node, opset, ins);
        } catch (const Error& e) {
          VKG_VERBOSE("constant folding skips " << node.describe() << ": " << e.what());
          continue;
        }
      }
      size_t bytes = 0;
      for (const Tensor& t : outs) bytes += t.nbytes();
      if (options.size_threshold >= 0 && int64_t(bytes) > options.size_threshold) {
        VKG_VERBOSE("constant folding skips " << node.describe() << ": its outputs take " << bytes
                                              << " bytes, more than the threshold " << options.size_threshold);
        continue;
      }
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        if (node.outputs[o].empty()) continue;
        constants[node.outputs[o]] = outs[o];
        new_constants.emplace_back(node.outputs[o], std::move(outs[o]));
      }
      folded_nodes.insert(i);
      VKG_EXTRA_VERBOSE("folded " << node.describe());
    }
    if (folded_nodes.empty() && inlined.empty()) break;
    folded_total += folded_nodes.size() + inlined.size();

    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < g->node_size(); ++i) {
      if (auto it = inlined.find(i); it != inlined.end()) {
        for (auto& n : it->second) *kept.Add() = std::move(n);
      } else if (!folded_nodes.count(i)) {
        *kept.Add() = g->node(i);
      }
    }
    g->mutable_node()->Swap(&kept);
    for (auto& [name, t] : new_constants) tensor_to_proto(t, name, g->add_initializer());
    // Folded tensors no longer need value_info entries.
    std::set<std::string> now_const;
    for (const auto& [name, t] : new_constants) now_const.insert(name);
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
    for (const auto& vi : g->value_info())
      if (!now_const.count(vi.name())) *vis.Add() = vi;
    g->mutable_value_info()->Swap(&vis);
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
