// Candidate subgraphs of `debug reduce`: preparation, selection, freezing, pruning.
#include "debug/reduce_graph.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <sstream>

#include "runtime/core/logger.h"
#include "runtime/onnx/surgeon.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::debug {

namespace {

ValueInfo info_from_dims(const std::string& name, DType dtype, const Shape& shape) {
  ValueInfo out{name, dtype, std::vector<Dim>{}};
  for (int64_t d : shape) out.shape->push_back(Dim{d, ""});
  return out;
}

void info_to_proto(const ValueInfo& info, onnx::ValueInfoProto* vi) {
  vi->set_name(info.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  if (info.dtype) tt->set_elem_type(dtype_to_onnx(*info.dtype));
  if (info.shape) dims_to_proto(*info.shape, tt->mutable_shape());
}

bool fully_known(const ValueInfo& info) {
  if (!info.dtype || !info.shape) return false;
  return std::all_of(info.shape->begin(), info.shape->end(), [](const Dim& d) { return d.known(); });
}

// Tensors a graph reads from its enclosing scopes.
void collect_outer_references(const onnx::GraphProto& g, std::set<std::string>& refs) {
  std::set<std::string> defined, used;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
    for (const auto& in : n.input())
      if (!in.empty()) used.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_outer_references(a.g(), used);
      for (const auto& sub : a.graphs()) collect_outer_references(sub, used);
    }
  }
  for (const auto& o : g.output()) used.insert(o.name());
  for (const auto& name : used)
    if (!defined.count(name)) refs.insert(name);
}

// Everything a node reads, initializers included: its inputs in order, then what its sub-graphs read.
std::vector<std::string> all_reads(const onnx::NodeProto& n) {
  std::vector<std::string> out;
  for (const auto& in : n.input())
    if (!in.empty() && std::find(out.begin(), out.end(), in) == out.end()) out.push_back(in);
  std::set<std::string> outer;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) collect_outer_references(a.g(), outer);
    for (const auto& sub : a.graphs()) collect_outer_references(sub, outer);
  }
  for (const auto& r : outer)
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Replaces Constant nodes by initializers of their values.
void lower_constants(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  const int64_t opset = default_opset(model);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  size_t lowered = 0;
  for (auto& np : *g->mutable_node()) {
    if (np.op_type() != "Constant" || !(np.domain().empty() || np.domain() == "ai.onnx")) {
      *kept.Add() = std::move(np);
      continue;
    }
    std::vector<Tensor> value;
    try {
      value = run_reference_node(node_from_proto(np), opset, {});
    } catch (const Error& e) {
      VKG_THROW("model '" << model.path << "': cannot turn Constant node '" << np.name()
                          << "' into an initializer: " << e.what());
    }
    tensor_to_proto(value.at(0), np.output(0), g->add_initializer());
    if (model.proto->ir_version() < 4) {  // IR < 4 lists every initializer as a graph input too
      ValueInfo info = info_from_dims(np.output(0), value[0].dtype(), value[0].shape());
      info_to_proto(info, g->add_input());
    }
    ++lowered;
  }
  g->mutable_node()->Swap(&kept);
  if (lowered) VKG_VERBOSE("reduce: turned " << lowered << " Constant node(s) into initializers");
}

// A model with src's IR version, opset imports, metadata and functions, and an empty graph
// named as src's.
std::shared_ptr<onnx::ModelProto> empty_model_like(const onnx::ModelProto& src) {
  const onnx::GraphProto& sg = src.graph();
  auto proto = std::make_shared<onnx::ModelProto>();
  proto->set_ir_version(src.ir_version());
  *proto->mutable_opset_import() = src.opset_import();
  proto->set_producer_name(src.producer_name());
  proto->set_producer_version(src.producer_version());
  proto->set_domain(src.domain());
  proto->set_model_version(src.model_version());
  proto->set_doc_string(src.doc_string());
  *proto->mutable_metadata_props() = src.metadata_props();
  *proto->mutable_functions() = src.functions();
  onnx::GraphProto* g = proto->mutable_graph();
  g->set_name(sg.name());
  g->set_doc_string(sg.doc_string());
  return proto;
}

// The new name of a kept node's output `o` that is also a candidate input (its copy of the
// tensor goes unused): "<o>_reduce_unused", numbered past any name the source model has.
std::string unused_output_name(const std::string& o, const std::map<std::string, size_t>& producer,
                               const std::set<std::string>& initializers,
                               const std::set<std::string>& original_inputs) {
  std::string renamed = o + "_reduce_unused";
  for (int k = 1; producer.count(renamed) || initializers.count(renamed) || original_inputs.count(renamed); ++k)
    renamed = o + "_reduce_unused" + std::to_string(k);
  return renamed;
}

// Copies into g the initializers of sg that the candidate reads (`used`), then the frozen values.
void add_initializers(const onnx::GraphProto& sg, const std::set<std::string>& used,
                      const std::map<std::string, Tensor>& frozen_values, onnx::GraphProto* g) {
  for (const auto& t : sg.initializer())
    if (used.count(t.name())) *g->add_initializer() = t;
  for (const auto& t : sg.sparse_initializer())
    if (used.count(t.values().name())) *g->add_sparse_initializer() = t;
  for (const auto& [name, t] : frozen_values) tensor_to_proto(t, name, g->add_initializer());
}

// The value_info of the tensors the kept nodes produce, as far as `infos` knows their dtypes,
// graph outputs excepted.
void add_value_infos(const std::set<std::string>& produced, const std::set<std::string>& outputs,
                     const std::map<std::string, ValueInfo>& infos, onnx::GraphProto* g) {
  for (const auto& name : produced) {
    auto it = infos.find(name);
    if (it != infos.end() && it->second.dtype && !outputs.count(name)) info_to_proto(it->second, g->add_value_info());
  }
}

// IR < 4 lists every initializer as a graph input too (those not already candidate inputs).
void add_initializer_inputs(const std::set<std::string>& inputs, onnx::GraphProto* g) {
  for (const auto& t : g->initializer()) {
    if (inputs.count(t.name())) continue;
    info_to_proto(info_from_dims(t.name(), *dtype_from_onnx(t.data_type()), Shape(t.dims().begin(), t.dims().end())),
                  g->add_input());
  }
}

}  // namespace

ReductionGraph::ReductionGraph(OnnxModel model, const ReducePrepOptions& options)
    : model_(std::move(model)), options_(options) {
  VKG_CHECK(model_.proto, "reduce: no model given");
  model_.proto = std::make_shared<onnx::ModelProto>(*model_.proto);  // the caller's proto stays as it was
  const std::vector<std::string> unknown = validate_onnx_model(model_);
  if (!unknown.empty())
    VKG_WARNING("model '" << model_.path << "' uses ops unknown to ONNX (" << join(unknown)
                          << "); the reference backend cannot freeze tensors that depend on them");
  toposort(model_);
  if (!options.input_shapes.empty()) {
    override_input_shapes(model_, options.input_shapes);
    clear_inferred_shapes(model_);
  }
  lower_constants(model_);
  if (options.shape_inference) infer_shapes(model_, /*strict=*/false);
  index_model();

  if (options.force_fallback) {
    const TensorMap& values = reference_values("--force-fallback-shape-inference");
    auto* g = model_.proto->mutable_graph();
    g->clear_value_info();
    for (const auto& outs : outputs_) {
      for (const auto& name : outs) {
        const Tensor& t = values.at(name);
        infos_[name] = info_from_dims(name, t.dtype(), t.shape());
        info_to_proto(infos_[name], g->add_value_info());
      }
    }
    for (auto& out : *g->mutable_output()) {
      if (auto it = values.find(out.name()); it != values.end() && out.type().has_tensor_type()) {
        out.clear_type();
        info_to_proto(info_from_dims(out.name(), it->second.dtype(), it->second.shape()), &out);
      }
    }
    VKG_VERBOSE("reduce: took the shapes of " << values.size() << " tensor(s) from the reference backend");
  }
}

void ReductionGraph::index_model() {
  const onnx::GraphProto& g = model_.proto->graph();
  for (const auto& t : g.initializer()) initializers_.insert(t.name());
  for (const auto& t : g.sparse_initializer()) initializers_.insert(t.values().name());
  for (const auto& in : g.input()) {
    if (!initializers_.count(in.name())) graph_inputs_.push_back(in.name());
    infos_[in.name()] = value_info_from_proto(in);
  }
  for (const auto& vi : g.value_info()) infos_[vi.name()] = value_info_from_proto(vi);
  for (const auto& out : g.output()) {
    ValueInfo info = value_info_from_proto(out);
    if ((info.dtype && info.shape) || !infos_.count(out.name())) infos_[out.name()] = info;
  }
  for (const auto& t : g.initializer()) {
    Shape dims(t.dims().begin(), t.dims().end());
    ValueInfo info{t.name(), dtype_from_onnx(t.data_type()), std::vector<Dim>{}};
    for (int64_t d : dims) info.shape->push_back(Dim{d, ""});
    infos_[t.name()] = info;
  }
  for (int i = 0; i < g.node_size(); ++i) {
    std::vector<std::string> reads, outs;
    for (const auto& r : all_reads(g.node(i)))
      if (!initializers_.count(r)) reads.push_back(r);
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      outs.push_back(o);
      producer_[o] = size_t(i);
    }
    reads_.push_back(std::move(reads));
    outputs_.push_back(std::move(outs));
  }
}

const std::string& ReductionGraph::node_name(size_t i) const {
  VKG_CHECK(i < num_nodes(), "reduce: node index " << i << " out of range (" << num_nodes() << " nodes)");
  return model_.proto->graph().node(int(i)).name();
}

std::vector<std::string> ReductionGraph::node_inputs(size_t i) const { return reads_.at(i); }
std::vector<std::string> ReductionGraph::node_outputs(size_t i) const { return outputs_.at(i); }

std::string ReductionGraph::describe_node(size_t i) const {
  const auto& np = model_.proto->graph().node(int(i));
  return np.op_type() + " '" + np.name() + "'";
}

Boundary ReductionGraph::whole() const {
  Boundary b;
  b.inputs = graph_inputs_;
  for (const auto& out : model_.proto->graph().output()) b.outputs.push_back(out.name());
  return b;
}

ReductionGraph::Selection ReductionGraph::select(const Boundary& b) const {
  const std::string where = "model '" + model_.path + "'";
  const std::set<std::string> graph_inputs(graph_inputs_.begin(), graph_inputs_.end());
  auto known = [&](const std::string& t) {
    return producer_.count(t) || initializers_.count(t) || graph_inputs.count(t);
  };
  VKG_CHECK(!b.outputs.empty(), "reduce: a candidate subgraph needs at least one output");
  std::set<std::string> inputs, outputs;
  for (const auto& in : b.inputs) {
    VKG_CHECK(known(in), where << " has no tensor '" << in << "' (given as a candidate input)");
    VKG_CHECK(!initializers_.count(in),
              "tensor '" << in << "' of " << where << " is a constant (initializer); it cannot be a candidate input");
    VKG_CHECK(inputs.insert(in).second, "tensor '" << in << "' is given twice as a candidate input");
  }
  for (const auto& out : b.outputs) {
    VKG_CHECK(known(out), where << " has no tensor '" << out << "' (given as a candidate output)");
    VKG_CHECK(outputs.insert(out).second, "tensor '" << out << "' is given twice as a candidate output");
  }

  std::vector<bool> kept(num_nodes(), false);
  std::set<std::string> visited, cut;
  std::vector<std::string> work(b.outputs.rbegin(), b.outputs.rend());
  while (!work.empty()) {
    const std::string t = work.back();
    work.pop_back();
    if (inputs.count(t) || initializers_.count(t) || !visited.insert(t).second) continue;
    if (auto it = producer_.find(t); it != producer_.end()) {
      kept[it->second] = true;
      work.insert(work.end(), reads_[it->second].begin(), reads_[it->second].end());
    } else {
      cut.insert(t);  // an original graph input the candidate does not take
    }
  }

  Selection s;
  std::set<std::string> constant = cut;
  for (size_t i = 0; i < num_nodes(); ++i) {
    if (!kept[i]) continue;
    bool all_constant = true, depends_on_frozen = false;
    for (const auto& r : reads_[i]) {
      if (constant.count(r))
        depends_on_frozen = true;
      else
        all_constant = false;
    }
    if (all_constant && depends_on_frozen) {
      for (const auto& o : outputs_[i])
        if (!inputs.count(o)) constant.insert(o);
    } else
      s.nodes.push_back(i);
  }
  for (const auto& name : constant) s.constant[name] = outputs.count(name) && !inputs.count(name);
  for (size_t i : s.nodes)
    for (const auto& r : reads_[i])
      if (auto it = s.constant.find(r); it != s.constant.end()) it->second = true;
  for (const auto& in : graph_inputs_)
    if (cut.count(in)) s.frozen.push_back(in);
  return s;
}

std::vector<size_t> ReductionGraph::nodes_of(const Boundary& b) const { return select(b).nodes; }

std::vector<size_t> ReductionGraph::readers(const std::string& tensor, const std::vector<size_t>& nodes) const {
  std::vector<size_t> out;
  for (size_t i : nodes)
    if (contains(reads_[i], tensor)) out.push_back(i);
  return out;
}

const TensorMap& ReductionGraph::reference_values(const std::string& why) const {
  if (reference_) return *reference_;
  if (reference_error_.empty()) {
    try {
      const Graph graph = to_graph(model_);
      DataLoaderOptions data = options_.data;
      data.iterations = 1;
      const std::vector<TensorMap> feeds = load_or_generate_inputs(graph.inputs, data);
      VKG_CHECK(!feeds.empty(), "no input data");
      const ReferenceBackend backend(graph);
      TensorMap values = backend.run(feeds.front(), graph.node_outputs());
      for (const auto& [name, t] : feeds.front()) values.emplace(name, t);
      VKG_VERBOSE("reduce: ran the reference backend on model '" << model_.path << "' (" << why << ")");
      reference_ = std::move(values);
      return *reference_;
    } catch (const Error& e) {
      reference_error_ = std::string("the reference backend cannot run model '") + model_.path + "': " + e.what();
    }
  }
  VKG_THROW(why << ": " << reference_error_);
}

ValueInfo ReductionGraph::info_of(const std::string& tensor, bool need_shape) const {
  ValueInfo info{tensor, std::nullopt, std::nullopt};
  if (auto it = infos_.find(tensor); it != infos_.end()) info = it->second;
  if (info.dtype && (!need_shape || info.shape)) return info;
  const TensorMap& values = reference_values("the " + std::string(info.dtype ? "shape" : "dtype") + " of tensor '" +
                                             tensor + "' is unknown (try shape inference or --model-input-shapes)");
  auto it = values.find(tensor);
  VKG_CHECK(it != values.end(), "the reference backend did not compute tensor '" << tensor << "'");
  return info_from_dims(tensor, it->second.dtype(), it->second.shape());
}

OnnxModel ReductionGraph::materialize(const Boundary& b, std::vector<std::string>* frozen) const {
  const Selection s = select(b);
  const onnx::ModelProto& src = *model_.proto;
  const onnx::GraphProto& sg = src.graph();
  const std::shared_ptr<onnx::ModelProto> proto = empty_model_like(src);
  onnx::GraphProto* g = proto->mutable_graph();

  const std::set<std::string> inputs(b.inputs.begin(), b.inputs.end());
  const std::set<std::string> original_inputs(graph_inputs_.begin(), graph_inputs_.end());
  std::set<std::string> used(b.outputs.begin(), b.outputs.end());  // initializers the candidate reads
  std::set<std::string> produced;
  for (size_t i : s.nodes) {
    onnx::NodeProto* np = g->add_node();
    *np = sg.node(int(i));
    for (const auto& r : all_reads(*np)) used.insert(r);
    for (auto& o : *np->mutable_output()) {
      if (!inputs.count(o)) {
        if (!o.empty()) produced.insert(o);
        continue;
      }
      o = unused_output_name(o, producer_, initializers_, original_inputs);
    }
  }

  for (const auto& in : b.inputs) {
    onnx::ValueInfoProto* vi = g->add_input();
    ValueInfo info = info_of(in, /*need_shape=*/true);
    // An intermediate tensor with dynamic dimensions gets the concrete shape of the reference run,
    // when there is one: the check cannot know what to feed otherwise.
    if (!original_inputs.count(in) && !fully_known(info)) {
      try {
        const Tensor& t = reference_values("input '" + in + "' has a dynamic shape").at(in);
        info = info_from_dims(in, t.dtype(), t.shape());
      } catch (const Error& e) {
        VKG_VERBOSE("reduce: " << e.what() << "; it stays " << info.describe());
      }
    }
    info_to_proto(info, vi);
  }
  std::map<std::string, Tensor> frozen_values;
  for (const auto& [name, needed] : s.constant)
    if (needed) frozen_values[name] = reference_values("tensor '" + name + "' must be frozen").at(name);
  for (const auto& out : b.outputs) {
    ValueInfo info;
    if (auto it = frozen_values.find(out); it != frozen_values.end())
      info = info_from_dims(out, it->second.dtype(), it->second.shape());
    else
      info = info_of(out, /*need_shape=*/false);
    info_to_proto(info, g->add_output());
  }
  add_initializers(sg, used, frozen_values, g);
  const std::set<std::string> outputs(b.outputs.begin(), b.outputs.end());
  add_value_infos(produced, outputs, infos_, g);
  if (proto->ir_version() < 4) add_initializer_inputs(inputs, g);
  if (frozen) *frozen = s.frozen;
  VKG_VERBOSE("reduce: " << describe(b) << (s.frozen.empty() ? "" : ", freezing " + join(s.frozen)));
  return OnnxModel{proto, ""};
}

std::optional<Boundary> ReductionGraph::without_sink(const Boundary& b, size_t node) const {
  const Selection s = select(b);
  if (!std::binary_search(s.nodes.begin(), s.nodes.end(), node)) return std::nullopt;
  std::vector<size_t> others;
  for (size_t i : s.nodes)
    if (i != node) others.push_back(i);
  for (const auto& o : outputs_[node])
    if (!readers(o, others).empty()) return std::nullopt;

  std::vector<std::string> new_outputs;
  for (const auto& r : reads_[node]) {
    auto p = producer_.find(r);
    const bool produced_inside = p != producer_.end() && std::binary_search(others.begin(), others.end(), p->second);
    if (produced_inside && readers(r, others).empty() && !contains(b.outputs, r)) new_outputs.push_back(r);
  }
  Boundary out;
  bool placed = false;
  for (const auto& o : b.outputs) {
    if (!contains(outputs_[node], o)) {
      out.outputs.push_back(o);
    } else if (!placed) {
      out.outputs.insert(out.outputs.end(), new_outputs.begin(), new_outputs.end());
      placed = true;
    }
  }
  if (out.outputs.empty()) return std::nullopt;
  for (const auto& in : b.inputs)
    if (!contains(reads_[node], in) || !readers(in, others).empty() || contains(out.outputs, in))
      out.inputs.push_back(in);
  return out;
}

std::optional<Boundary> ReductionGraph::without_source(const Boundary& b, size_t node) const {
  const Selection s = select(b);
  if (!std::binary_search(s.nodes.begin(), s.nodes.end(), node)) return std::nullopt;
  for (const auto& r : reads_[node])
    if (!contains(b.inputs, r) && !s.constant.count(r)) return std::nullopt;
  for (const auto& o : outputs_[node])
    if (contains(b.outputs, o)) return std::nullopt;
  std::vector<size_t> others;
  for (size_t i : s.nodes)
    if (i != node) others.push_back(i);

  std::vector<std::string> new_inputs;
  for (const auto& o : outputs_[node])
    if (!readers(o, others).empty()) new_inputs.push_back(o);
  Boundary out{{}, b.outputs};
  bool placed = false;
  for (const auto& in : b.inputs) {
    if (!contains(reads_[node], in) || !readers(in, others).empty() || contains(b.outputs, in)) {
      out.inputs.push_back(in);
    } else if (!placed) {
      out.inputs.insert(out.inputs.end(), new_inputs.begin(), new_inputs.end());
      placed = true;
    }
  }
  if (!placed) out.inputs.insert(out.inputs.end(), new_inputs.begin(), new_inputs.end());
  return out;
}

std::string ReductionGraph::describe(const Boundary& b) const {
  std::ostringstream os;
  os << "inputs [" << join(b.inputs) << "] -> outputs [" << join(b.outputs) << "]";
  try {
    const size_t n = nodes_of(b).size();
    os << " (" << n << (n == 1 ? " node)" : " nodes)");
  } catch (const Error& e) {
    os << " (invalid: " << e.what() << ")";
  }
  return os.str();
}

bool ReductionGraph::has_dynamic_shapes() const {
  auto dynamic = [&](const std::string& name) {
    auto it = infos_.find(name);
    return it == infos_.end() || !fully_known(it->second);
  };
  if (std::any_of(graph_inputs_.begin(), graph_inputs_.end(), dynamic)) return true;
  for (const auto& outs : outputs_)
    if (std::any_of(outs.begin(), outs.end(), dynamic)) return true;
  return false;
}

void save_reduced_model(const OnnxModel& model, const std::string& path) {
  check_model_before_saving(model, "reduced model '" + path + "'", /*checker_must_pass=*/false);
  save_onnx_model(model, path);
}

}  // namespace vkg::debug
