// Control flow computed on the device: an If whose condition and a Loop whose
// trip count or condition the engine only knows at run time. The builder adds
// the layers of both branches (or of the body) like any others, then a
// branching or loop layer whose dispatches copy the results of the branch
// taken (or of each iteration) into its outputs; the executor runs the layers
// the condition selects. Branches and bodies see the outer graph's tensors by
// name, and what they make stays inside them.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/builder/builder_impl.h"

namespace vkg::builder_impl {

namespace {

// True when a node of `graph` (or of a subgraph inside it) reads `name`.
bool reads(const Graph& graph, const std::string& name) {
  for (const Node& n : graph.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) return true;
    for (const Graph* sub : n.subgraphs())
      if (reads(*sub, name)) return true;
  }
  return std::any_of(graph.outputs.begin(), graph.outputs.end(), [&](const ValueInfo& o) { return o.name == name; });
}

}  // namespace

// An If whose condition is computed on the device: the layers of both branches,
// then a branching layer that copies the results of the branch taken into its
// outputs (EngineLayer::branch_layers). A branch that cannot be built at the
// engine's shapes (its ops fail there, or its results' shapes differ from the
// other branch's) becomes an error the engine raises when the condition selects
// it, as ONNX Runtime fails only when it runs such a branch.
void Builder::add_if(const Node& node, size_t index, size_t total) {
  progress(index, total, node);
  Engine& engine = result_.engine;
  const std::string& cond_name = node.inputs.at(0);
  VKG_CHECK(constant(cond_name) == nullptr, node.describe() << ": its condition is a constant, but the branch was not "
                                                               "inlined at import");
  const ValueInfo cond = info_of(cond_name, node);
  VKG_CHECK(num_elements(cond.concrete_shape()) == 1, node.describe()
                                                          << ": the condition '" << cond_name << "' has shape "
                                                          << cond.describe() << "; it must hold one element");
  for (const std::string& out : node.outputs) VKG_CHECK(!out.empty(), node.describe() << ": an output is omitted");
  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = {node.name};
  layer.op = node.op_type;
  layer.tactic = "control.if";
  layer.inputs = {tensor_in(cond_name, StorageType::I32)};

  // The outputs take the first buildable branch's results' types and shapes (shape
  // inference leaves dimensions open where the branches could differ).
  const size_t k = node.outputs.size();
  std::vector<EngineTensor> outs;
  const char* branch_names[2] = {"then", "else"};
  const Graph* branches[2] = {&node.attr_graph("then_branch"), &node.attr_graph("else_branch")};
  std::string first_error;
  for (size_t b = 0; b < 2; ++b) {
    const Graph& graph = *branches[b];
    VKG_CHECK(graph.outputs.size() == k, node.describe() << ": its " << branch_names[b] << " branch has "
                                                         << graph.outputs.size() << " outputs, the node " << k);
    // Tensors made in one branch (including reformats of outer tensors) are not
    // there in the other branch, nor after the If.
    const auto tensors = tensors_;
    const auto produced = produced_storage_;
    const size_t first_layer = engine.layers.size(), first_tensor = engine.tensors.size();
    const size_t first_choice = result_.replay.layers.size(), first_dispatch = layer.plan.dispatches.size();
    const size_t first_out = outs.size();
    scopes_.push_back(&graph);
    try {
      add_branch(node, graph, branch_names[b], layer, outs);
      layer.branch_errors.emplace_back();
    } catch (const Error& e) {
      const std::string error = std::string("the ") + branch_names[b] + " branch of " + node.describe() +
                                " cannot run at the engine's shapes: " + e.what();
      VKG_WARNING(error << "; the engine fails if the condition selects it");
      if (first_error.empty()) first_error = error;
      engine.layers.resize(first_layer);
      engine.tensors.resize(first_tensor);
      result_.replay.layers.resize(first_choice);
      layer.plan.dispatches.resize(first_dispatch);
      outs.resize(first_out);
      layer.inputs.resize(1 + b * k);
      layer.inputs.resize(1 + (b + 1) * k, -1);
      layer.branch_errors.push_back(error);
    }
    scopes_.pop_back();
    layer.branch_layers.push_back(uint32_t(engine.layers.size() - first_layer));
    layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size() - first_dispatch));
    tensors_ = tensors;
    produced_storage_ = produced;
  }
  VKG_CHECK(outs.size() == k, first_error);
  if (layer.branch_errors[0].empty() && layer.branch_errors[1].empty()) layer.branch_errors.clear();
  for (const EngineTensor& out : outs) layer.outputs.push_back(add_tensor(out.name, out.dtype, out.shape, out.storage));
  VKG_VERBOSE(node.describe() << ": a condition computed on the device; branches of " << layer.branch_layers[0]
                              << " and " << layer.branch_layers[1]
                              << " layers, the executor runs the one the condition selects");
  engine.layers.push_back(std::move(layer));
  ++result_.stats.layers;
}

void Builder::add_branch(const Node& node, const Graph& graph, const char* branch_name, EngineLayer& layer,
                         std::vector<EngineTensor>& outs) {
  Engine& engine = result_.engine;
  const size_t k = node.outputs.size();
  std::vector<std::string> results;
  for (const ValueInfo& out : graph.outputs) results.push_back(out.name);
  add_block(named_nodes(graph, node.name + "/" + branch_name + "/"), results);
  for (size_t j = 0; j < k; ++j) {
    const std::string& r = results[j];
    const std::string name = resolve(r);
    if (!produced_storage_.count(name)) {
      VKG_CHECK(constant(r) != nullptr, "it never produces '" << r << "'");
      add_constant_output(r);
    }
    const EngineTensor made = engine.tensors[size_t(tensors_.at({name, produced_storage_.at(name)}))];
    if (outs.size() == j) {
      const std::optional<StorageType> storage = storage_for(made.dtype, Precision::FP32);
      VKG_CHECK(storage.has_value(), "its result '" << r << "' is " << dtype_name(made.dtype)
                                                    << ", which the Vulkan backend does not support");
      VKG_CHECK(num_elements(made.shape) > 0, "its result '" << r << "' is empty");
      const ValueInfo* declared = find_info(node.outputs[j]);
      VKG_CHECK(declared == nullptr || !declared->static_shape() || declared->concrete_shape() == made.shape,
                "it gives '" << r << "' the shape " << shape_to_string(made.shape) << ", but output '"
                             << node.outputs[j] << "' is " << declared->describe());
      EngineTensor out = made;
      out.name = node.outputs[j];
      out.storage = *storage;
      outs.push_back(out);
    }
    VKG_CHECK(made.dtype == outs[j].dtype && made.shape == outs[j].shape,
              "it gives output '" << node.outputs[j] << "' the type " << dtype_name(made.dtype)
                                  << shape_to_string(made.shape) << ", the other branch " << dtype_name(outs[j].dtype)
                                  << shape_to_string(outs[j].shape) << " (a Vulkan engine needs one static shape)");
    layer.inputs.push_back(tensor_in(r, outs[j].storage));
    add_copy(layer, outs[j].storage, uint64_t(num_elements(made.shape)),
             BindingRef::input(uint32_t(layer.inputs.size() - 1)), uint32_t(j));
  }
}

void Builder::add_copy(EngineLayer& layer, StorageType storage, uint64_t elements, BindingRef from, uint32_t out) {
  LayerPlan copy = reformat_plan(storage, storage, elements, device_, std::nullopt);
  for (Dispatch& d : copy.dispatches) {
    d.bindings = {from, BindingRef::output(out)};
    layer.plan.dispatches.push_back(std::move(d));
  }
}

// A Loop whose condition or trip count is computed on the device (a constant trip
// count with a constant condition was unrolled at import): the layers of its body,
// then a loop layer (EngineLayer::is_loop) holding the loop state. The body reads
// the state through its inputs; the loop layer sets the state before the first
// iteration and copies the body's results into it after each.
void Builder::add_loop(const Node& node, size_t index, size_t total) {
  progress(index, total, node);
  Engine& engine = result_.engine;
  const Graph& body = node.attr_graph("body");
  VKG_CHECK(node.inputs.size() >= 2 && body.inputs.size() == node.inputs.size() &&
                body.outputs.size() + 1 >= body.inputs.size(),
            node.describe() << ": its body's inputs and outputs do not match the loop's");
  const size_t scans = body.outputs.size() + 1 - body.inputs.size();
  VKG_CHECK(scans == 0, node.describe() << ": its " << scans
                                        << " scan output(s) grow by one slice per iteration, and the iterations are "
                                           "counted at run time; a Vulkan engine needs static shapes (a constant trip "
                                           "count and condition unroll the loop)");
  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = {node.name};
  layer.op = node.op_type;
  layer.tactic = "control.loop";
  const auto [trip_count, first_condition] = loop_control(node, layer);

  // The state: the loop-carried values (named as the Loop's outputs), then the iteration
  // count and the condition where the body reads them. Its initial values: an engine tensor or a weight.
  std::vector<LoopState> state = carried_state(node, body);
  // Nodes the builder adds to the body: the iteration count + 1.
  Graph& counters = synthetic_.emplace_back();
  std::vector<Node> added;
  counter_state(node, body, first_condition, counters, added, state);

  std::vector<int32_t> state_ids;
  for (const LoopState& st : state) {
    state_ids.push_back(add_tensor(st.name, st.dtype, st.shape, st.storage));
    aliases_[st.body_input] = st.name;
    // The body's inputs have the state's types and shapes (whatever the body declares).
    std::vector<Dim> dims;
    for (int64_t d : st.shape) dims.push_back(Dim{d, ""});
    counters.value_info[st.body_input] = ValueInfo{st.body_input, st.dtype, dims};
  }
  const auto tensors = tensors_;
  const auto produced = produced_storage_;
  const size_t first_layer = engine.layers.size();
  scopes_.push_back(&body);
  scopes_.push_back(&counters);
  const auto [results, body_condition] = add_loop_body(node, body, state, std::move(added));
  scopes_.pop_back();
  scopes_.pop_back();
  tensors_ = tensors;
  produced_storage_ = produced;
  layer.branch_layers = {uint32_t(engine.layers.size() - first_layer)};

  layer.inputs = {trip_count, first_condition};
  for (const LoopState& st : state) layer.inputs.push_back(st.initial);
  layer.inputs.insert(layer.inputs.end(), results.begin(), results.end());
  layer.inputs.push_back(body_condition);
  // Outer tensors the body reads stay alive until the loop ends.
  for (const std::string& read : Graph::outer_scope_reads(node)) {
    const std::string name = resolve(read);
    auto p = produced_storage_.find(name);
    if (p != produced_storage_.end()) layer.inputs.push_back(tensors_.at({name, p->second}));
  }
  add_loop_copies(layer, state);
  VKG_CHECK(!layer.plan.dispatches.empty(), node.describe() << ": it carries no values");
  layer.outputs = state_ids;
  VKG_VERBOSE(node.describe() << ": "
                              << (layer.loop_trip_count >= 0 ? "a constant trip count and a condition"
                                                             : "a trip count or condition")
                              << " computed on the device; a body of " << layer.branch_layers[0]
                              << " layers run once per iteration, the condition read back after each");
  engine.layers.push_back(std::move(layer));
  ++result_.stats.layers;
}

std::pair<int32_t, int32_t> Builder::loop_control(const Node& node, EngineLayer& layer) {
  int32_t trip_count = -1, first_condition = -1;
  const std::string& m = node.inputs[0];
  const std::string& cond = node.inputs[1];
  if (!m.empty()) {
    if (const Tensor* c = constant(m)) {
      layer.loop_trip_count = std::max<int64_t>(c->to_int64s().at(0), 0);
    } else {
      VKG_CHECK(num_elements(info_of(m, node).concrete_shape()) == 1, node.describe()
                                                                          << ": its trip count is not one value");
      trip_count = tensor_in(m, StorageType::I32);
    }
  }
  if (!cond.empty()) {
    if (const Tensor* c = constant(cond)) {
      if (c->get_as_double(0) == 0) layer.loop_trip_count = 0;
    } else {
      VKG_CHECK(num_elements(info_of(cond, node).concrete_shape()) == 1, node.describe()
                                                                             << ": its condition is not one value");
      first_condition = tensor_in(cond, StorageType::I32);
    }
  }
  return {trip_count, first_condition};
}

std::vector<LoopState> Builder::carried_state(const Node& node, const Graph& body) {
  const size_t n = node.inputs.size() - 2;  // loop-carried values
  std::vector<LoopState> state;
  for (size_t k = 0; k < n; ++k) {
    const std::string& init = node.inputs[2 + k];
    VKG_CHECK(!init.empty(), node.describe() << ": loop-carried value " << k << " has no initial value");
    LoopState st;
    const ValueInfo vi = info_of(init, node);
    st.dtype = *vi.dtype;
    st.shape = vi.concrete_shape();
    const std::optional<StorageType> storage = storage_for(st.dtype, Precision::FP32);
    VKG_CHECK(storage.has_value(), node.describe()
                                       << ": loop-carried value '" << init << "' is " << dtype_name(st.dtype)
                                       << ", which the Vulkan backend does not support");
    st.storage = *storage;
    st.name = k < node.outputs.size() && !node.outputs[k].empty() ? node.outputs[k]
                                                                  : node.name + "/state" + std::to_string(k);
    st.body_input = body.inputs[2 + k].name;
    st.body_result = body.outputs[1 + k].name;
    if (const Tensor* c = constant(init))
      st.initial_value = to_storage(*c, st.storage, "initial value '" + init + "'");
    else
      st.initial = tensor_in(init, st.storage);
    state.push_back(std::move(st));
  }
  return state;
}

void Builder::counter_state(const Node& node, const Graph& body, int32_t first_condition, Graph& counters,
                            std::vector<Node>& added, std::vector<LoopState>& state) {
  const std::string& iter_name = body.inputs[0].name;
  if (!iter_name.empty() && reads(body, iter_name)) {
    LoopState st{
        node.name + "/iteration",  DType::Int64, {}, StorageType::I32, iter_name, node.name + "/iteration+1", -1,
        Tensor::scalar<int32_t>(0)};
    folded_[node.name + "/one"] = Tensor::scalar<int64_t>(1);
    counters.value_info[st.body_result] = ValueInfo{st.body_result, DType::Int64, std::vector<Dim>{}};
    Node add;
    add.name = node.name + "/iteration+1";
    add.op_type = "Add";
    add.inputs = {iter_name, node.name + "/one"};
    add.outputs = {st.body_result};
    added.push_back(std::move(add));
    state.push_back(std::move(st));
  }
  const std::string& cond_in = body.inputs[1].name;
  if (!cond_in.empty() && reads(body, cond_in)) {
    LoopState st{node.name + "/condition", DType::Bool, {},          StorageType::I32, cond_in,
                 body.outputs[0].name,     -1,          std::nullopt};
    if (first_condition >= 0)
      st.initial = first_condition;
    else
      st.initial_value = Tensor::scalar<int32_t>(1);
    state.push_back(std::move(st));
  }
}

std::pair<std::vector<int32_t>, int32_t> Builder::add_loop_body(const Node& node, const Graph& body,
                                                                const std::vector<LoopState>& state,
                                                                std::vector<Node> added) {
  const Engine& engine = result_.engine;
  std::vector<const Node*> nodes = named_nodes(body, node.name + "/body/");
  for (Node& a : added) {
    names_.insert(a.name);
    nodes_.push_back(std::move(a));
    nodes.push_back(&nodes_.back());
  }
  std::vector<std::string> keep;
  for (const ValueInfo& out : body.outputs) keep.push_back(out.name);
  for (const LoopState& st : state) keep.push_back(st.body_result);
  add_block(nodes, keep);
  // The body's results in the state's storage forms (made now: reformats belong to the body).
  auto produce = [&](const std::string& r) {
    if (!produced_storage_.count(resolve(r))) {
      VKG_CHECK(constant(r) != nullptr, node.describe() << ": its body never produces '" << r << "'");
      add_constant_output(r);
    }
  };
  std::vector<int32_t> results;
  for (const LoopState& st : state) {
    produce(st.body_result);
    const int32_t id = tensor_in(st.body_result, st.storage);
    const EngineTensor& t = engine.tensors[size_t(id)];
    VKG_CHECK(t.shape == st.shape,
              node.describe() << ": its body gives '" << st.body_result << "' the shape " << shape_to_string(t.shape)
                              << ", but the value it carries has " << shape_to_string(st.shape)
                              << " (a Vulkan engine needs loop-carried values of one static shape)");
    results.push_back(id);
  }
  produce(body.outputs[0].name);
  const int32_t body_condition = constant(body.outputs[0].name) && constant(body.outputs[0].name)->get_as_double(0) != 0
                                     ? -1
                                     : tensor_in(body.outputs[0].name, StorageType::I32);
  return {results, body_condition};
}

void Builder::add_loop_copies(EngineLayer& layer, const std::vector<LoopState>& state) {
  const size_t s = state.size();
  for (size_t j = 0; j < s; ++j) {
    const uint64_t elements = uint64_t(num_elements(state[j].shape));
    if (elements == 0) continue;
    BindingRef from = BindingRef::input(uint32_t(2 + j));
    if (state[j].initial_value) from = add_weight(layer.plan, *state[j].initial_value);
    add_copy(layer, state[j].storage, elements, from, uint32_t(j));
  }
  layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size()));
  for (size_t j = 0; j < s; ++j) {
    const uint64_t elements = uint64_t(num_elements(state[j].shape));
    if (elements > 0) add_copy(layer, state[j].storage, elements, BindingRef::input(uint32_t(2 + s + j)), uint32_t(j));
  }
  layer.branch_dispatches.push_back(uint32_t(layer.plan.dispatches.size() - layer.branch_dispatches[0]));
}

}  // namespace vkg::builder_impl
