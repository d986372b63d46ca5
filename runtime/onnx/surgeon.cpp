// Subgraph extraction, dead-node removal and sanitizing on the ONNX protobuf.
#include "runtime/onnx/surgeon.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>

#include "runtime/core/logger.h"

namespace vkg {

namespace {

bool is_auto(const std::string& text) { return text == "auto"; }

DType parse_dtype(const std::string& text, const std::string& spec) {
  const auto dt = dtype_from_name(text);
  VKG_CHECK(dt, "'" << spec << "': unknown data type '" << text << "' (expected e.g. float32, float16, int64 or auto)");
  return *dt;
}

// "[1,3,height,224]": numbers are fixed dimensions, names are dim_params, "?" or "-1" are unnamed dynamic ones.
std::vector<Dim> parse_dims(const std::string& text, const std::string& spec) {
  VKG_CHECK(text.size() >= 2 && text.front() == '[' && text.back() == ']',
            "'" << spec << "': malformed shape '" << text << "' (expected e.g. [1,3,224,224] or auto)");
  std::vector<Dim> dims;
  const std::string body = text.substr(1, text.size() - 2);
  if (body.find_first_not_of(" ") == std::string::npos) return dims;
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    std::string item = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(std::remove_if(item.begin(), item.end(), [](char c) { return std::isspace((unsigned char)c); }),
               item.end());
    VKG_CHECK(!item.empty(), "'" << spec << "': empty dimension in shape '" << text << "'");
    Dim dim;
    if (std::all_of(item.begin(), item.end(), [](char c) { return std::isdigit((unsigned char)c); })) {
      VKG_CHECK(item.size() < 19, "'" << spec << "': dimension " << item << " is too large");
      dim.value = std::stoll(item);
    } else if (item != "?" && item != "-1") {
      dim.param = item;
    }
    dims.push_back(dim);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return dims;
}

// Tensors a graph reads from its enclosing scopes (node inputs it does not define itself).
void collect_outer_references(const onnx::GraphProto& g, std::set<std::string>& refs) {
  std::set<std::string> defined;
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) defined.insert(o);
  std::set<std::string> used;
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) used.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_outer_references(a.g(), used);
      for (const auto& sub : a.graphs()) collect_outer_references(sub, used);
    }
  }
  for (const auto& name : used)
    if (!defined.count(name)) refs.insert(name);
  for (const auto& o : g.output())
    if (!defined.count(o.name())) refs.insert(o.name());
}

// Marks the nodes needed to compute `targets`, not looking past `stop` tensors. Calls
// `reached_input(target, input)` for every graph input (not in `stop`) a target depends on.
template <class OnInput> std::vector<bool> needed_nodes(const onnx::GraphProto& g, const GraphIndex& index,
                                                        const std::vector<std::string>& targets,
                                                        const std::set<std::string>& stop, OnInput reached_input) {
  std::vector<bool> needed(size_t(g.node_size()), false);
  std::set<std::string> visited;
  for (const auto& target : targets) {
    std::vector<std::string> work = {target};
    while (!work.empty()) {
      const std::string t = work.back();
      work.pop_back();
      if (stop.count(t) || !visited.insert(t).second) continue;
      if (auto it = index.producer.find(t); it != index.producer.end()) {
        needed[size_t(it->second)] = true;
        for (auto& r : node_reads(g.node(it->second))) work.push_back(r);
      } else if (index.graph_inputs.count(t)) {
        reached_input(target, t);
      }
    }
  }
  return needed;
}

void keep_nodes(onnx::GraphProto* g, const std::vector<bool>& needed) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g->node_size(); ++i)
    if (needed[size_t(i)]) *kept.Add() = std::move(*g->mutable_node(i));
  g->mutable_node()->Swap(&kept);
}

// Drops value_info entries of tensors that no node produces any more, or that are graph inputs/outputs.
void prune_value_info(onnx::GraphProto* g) {
  std::set<std::string> produced, io;
  for (const auto& n : g->node())
    for (const auto& o : n.output()) produced.insert(o);
  for (const auto& in : g->input()) io.insert(in.name());
  for (const auto& out : g->output()) io.insert(out.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (auto& vi : *g->mutable_value_info())
    if (produced.count(vi.name()) && !io.count(vi.name())) *kept.Add() = std::move(vi);
  g->mutable_value_info()->Swap(&kept);
}

// IR versions below 4 require every initializer to be listed as a graph input too.
void list_initializers_as_inputs(OnnxModel& model) {
  if (model.proto->ir_version() >= 4) return;
  auto* g = model.proto->mutable_graph();
  std::set<std::string> inputs;
  for (const auto& in : g->input()) inputs.insert(in.name());
  for (const auto& t : g->initializer()) {
    if (inputs.count(t.name())) continue;
    auto* vi = g->add_input();
    vi->set_name(t.name());
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    auto* shape = tt->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
  }
}

// The tensor type of an extracted input or output: what the user gave, the rest from the model.
onnx::TypeProto spec_type(const TensorSpec& spec, const onnx::TypeProto* known, const std::string& role) {
  if (known && !known->has_tensor_type() && !spec.dtype && !spec.shape) return *known;  // e.g. a sequence
  onnx::TypeProto type;
  auto* tt = type.mutable_tensor_type();
  const bool known_tensor = known && known->has_tensor_type();
  if (spec.dtype)
    tt->set_elem_type(dtype_to_onnx(*spec.dtype));
  else if (known_tensor)
    tt->set_elem_type(known->tensor_type().elem_type());
  VKG_CHECK(tt->elem_type() != 0, "the data type of "
                                      << role << " '" << spec.name
                                      << "' is unknown (shape inference cannot tell it): give it explicitly, e.g. "
                                      << spec.name << (role == "input" ? ":auto:float32" : ":float32"));
  if (spec.shape) {
    dims_to_proto(*spec.shape, tt->mutable_shape());
  } else if (known_tensor && known->tensor_type().has_shape()) {
    *tt->mutable_shape() = known->tensor_type().shape();
  } else if (role == "input") {
    VKG_WARNING("the shape of input '" << spec.name << "' is unknown; it is left unspecified in the extracted model");
  }
  return type;
}

std::string join_names(const std::vector<TensorSpec>& specs) {
  std::string out;
  for (const auto& s : specs) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace

GraphIndex::GraphIndex(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& in : g.input()) {
    if (!initializers.count(in.name())) graph_inputs.insert(in.name());
    types[in.name()] = &in.type();
  }
  for (const auto& vi : g.value_info()) types[vi.name()] = &vi.type();
  for (const auto& out : g.output()) {
    const auto& tt = out.type().tensor_type();
    const bool richer = out.type().has_tensor_type() && tt.elem_type() != 0 && tt.has_shape();
    if (richer || !types.count(out.name())) types[out.name()] = &out.type();
  }
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
}

std::vector<std::string> node_reads(const onnx::NodeProto& n) {
  std::set<std::string> refs;
  for (const auto& in : n.input())
    if (!in.empty()) refs.insert(in);
  for (const auto& a : n.attribute()) {
    if (a.has_g()) collect_outer_references(a.g(), refs);
    for (const auto& sub : a.graphs()) collect_outer_references(sub, refs);
  }
  return {refs.begin(), refs.end()};
}

void name_unnamed_nodes(onnx::GraphProto& g, const std::function<std::string(int, const onnx::NodeProto&)>& base) {
  std::set<std::string> names;
  for (const auto& n : g.node()) names.insert(n.name());
  for (int i = 0; i < g.node_size(); ++i) {
    onnx::NodeProto& n = *g.mutable_node(i);
    if (!n.name().empty()) continue;
    std::string name = base(i, n);
    while (names.count(name) != 0) name += "_";
    n.set_name(name);
    names.insert(name);
  }
}

TensorSpec parse_input_spec(const std::string& text) {
  TensorSpec spec;
  std::string rest = text;
  // The shape is the bracketed part, if any; the dtype may follow it.
  if (const size_t open = rest.rfind(":["); open != std::string::npos) {
    const size_t close = rest.find(']', open);
    VKG_CHECK(close != std::string::npos, "'" << text << "': the shape has no closing ']'");
    spec.shape = parse_dims(rest.substr(open + 1, close - open), text);
    const std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      VKG_CHECK(after[0] == ':' && after.size() > 1,
                "'" << text << "': expected name:[shape]:dtype, found '" << after << "' after the shape");
      if (!is_auto(after.substr(1))) spec.dtype = parse_dtype(after.substr(1), text);
    }
    rest = rest.substr(0, open);
  } else {
    // name[:auto[:dtype]]
    const size_t last = rest.rfind(':');
    if (last != std::string::npos && last > 0) {
      const std::string tail = rest.substr(last + 1);
      const size_t prev = rest.rfind(':', last - 1);
      const std::string middle = prev == std::string::npos ? "" : rest.substr(prev + 1, last - prev - 1);
      if (prev != std::string::npos && prev > 0 && is_auto(middle)) {
        if (!is_auto(tail)) spec.dtype = parse_dtype(tail, text);
        rest = rest.substr(0, prev);
      } else if (is_auto(tail)) {
        rest = rest.substr(0, last);
      } else {
        VKG_CHECK(!dtype_from_name(tail), "'" << text
                                              << "': expected name:shape:dtype; give the shape before the dtype, e.g. "
                                              << rest.substr(0, last) << ":auto:" << tail);
      }
    }
  }
  VKG_CHECK(!rest.empty(), "'" << text << "': the tensor name is missing");
  spec.name = rest;
  return spec;
}

TensorSpec parse_output_spec(const std::string& text) {
  TensorSpec spec;
  spec.name = text;
  const size_t last = text.rfind(':');
  if (last != std::string::npos) {
    const std::string tail = text.substr(last + 1);
    if (is_auto(tail) || dtype_from_name(tail)) {
      if (!is_auto(tail)) spec.dtype = parse_dtype(tail, text);
      spec.name = text.substr(0, last);
    }
  }
  VKG_CHECK(!spec.name.empty(), "'" << text << "': the tensor name is missing");
  return spec;
}

int64_t parse_byte_size(const std::string& text) {
  VKG_CHECK(!text.empty(), "empty byte size");
  int64_t scale = 1;
  std::string digits = text;
  switch (std::toupper((unsigned char)text.back())) {
    case 'K':
      scale = int64_t(1) << 10;
      break;
    case 'M':
      scale = int64_t(1) << 20;
      break;
    case 'G':
      scale = int64_t(1) << 30;
      break;
    default:
      break;
  }
  if (scale != 1) digits.pop_back();
  VKG_CHECK(
      !digits.empty() && digits.size() < 16 &&
          std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit((unsigned char)c); }),
      "malformed byte size '" << text << "' (expected a number of bytes with an optional K, M or G suffix, e.g. 16M)");
  return std::stoll(digits) * scale;
}

namespace {

// The names of the subgraph's inputs or outputs (`role`), each checked to be a tensor of the model
// and given once.
std::set<std::string> distinct_spec_names(const std::vector<TensorSpec>& specs, const GraphIndex& index,
                                          const std::string& where, const std::string& role) {
  std::set<std::string> names;
  for (const auto& spec : specs) {
    VKG_CHECK(index.has(spec.name),
              where << " has no tensor '" << spec.name << "' (given as a subgraph " << role << ")");
    VKG_CHECK(names.insert(spec.name).second, "tensor '" << spec.name << "' is given twice as a subgraph " << role);
  }
  return names;
}

// An input whose producer stays would be defined twice.
void check_inputs_not_produced(const onnx::GraphProto& g, const GraphIndex& index,
                               const std::vector<TensorSpec>& inputs, const std::vector<bool>& needed) {
  for (const auto& in : inputs) {
    auto it = index.producer.find(in.name);
    if (it != index.producer.end() && needed[size_t(it->second)]) {
      const auto& node = g.node(it->second);
      VKG_THROW("input '" << in.name << "' is produced by node '" << node.name() << "' (" << node.op_type()
                          << "), which the outputs still need for its other outputs; give those as inputs too");
    }
  }
}

// Inputs nothing reads stay, as unused inputs of the subgraph; the user hears of them.
void warn_unused_inputs(const onnx::GraphProto& g, const std::vector<bool>& needed,
                        const std::vector<TensorSpec>& inputs, const std::set<std::string>& output_names) {
  std::set<std::string> read;
  for (int i = 0; i < g.node_size(); ++i)
    if (needed[size_t(i)])
      for (const auto& r : node_reads(g.node(i))) read.insert(r);
  for (const auto& in : inputs)
    if (!read.count(in.name) && !output_names.count(in.name))
      VKG_WARNING("subgraph input '" << in.name << "' is not used to compute any of the outputs");
}

// The tensor type of each initializer, by name.
std::map<std::string, onnx::TypeProto> initializer_types(const onnx::GraphProto& g) {
  std::map<std::string, onnx::TypeProto> types;
  for (const auto& t : g.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    types[t.name()] = type;
  }
  return types;
}

// The value_info entries of the subgraph's inputs or outputs (`role`), typed by spec_type from what
// the user gave and what the model knows (an initializer's type first).
google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> spec_value_infos(
    const std::vector<TensorSpec>& specs, const std::map<std::string, onnx::TypeProto>& init_types,
    const GraphIndex& index, const std::string& role) {
  auto known = [&](const std::string& name) -> const onnx::TypeProto* {
    if (auto it = init_types.find(name); it != init_types.end()) return &it->second;
    auto it = index.types.find(name);
    return it == index.types.end() ? nullptr : it->second;
  };
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (const auto& spec : specs) {
    auto* vi = infos.Add();
    vi->set_name(spec.name);
    *vi->mutable_type() = spec_type(spec, known(spec.name), role);
  }
  return infos;
}

// Initializers that became inputs are no longer constants.
void drop_initializers_named(onnx::GraphProto* g, const std::set<std::string>& names) {
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  for (auto& t : *g->mutable_initializer())
    if (!names.count(t.name())) *inits.Add() = std::move(t);
  g->mutable_initializer()->Swap(&inits);
}

}  // namespace

ExtractReport extract_subgraph(OnnxModel& model, const std::vector<TensorSpec>& input_specs,
                               const std::vector<TensorSpec>& output_specs) {
  auto* g = model.proto->mutable_graph();
  const GraphIndex index(*g);
  const std::string where = "model '" + model.path + "'";

  std::vector<TensorSpec> inputs = input_specs, outputs = output_specs;
  if (inputs.empty())
    for (const auto& in : g->input())
      if (index.graph_inputs.count(in.name())) inputs.push_back({in.name(), std::nullopt, std::nullopt});
  if (outputs.empty())
    for (const auto& out : g->output()) outputs.push_back({out.name(), std::nullopt, std::nullopt});
  VKG_CHECK(!outputs.empty(), "cannot extract a subgraph without outputs");

  const std::set<std::string> input_names = distinct_spec_names(inputs, index, where, "input");
  const std::set<std::string> output_names = distinct_spec_names(outputs, index, where, "output");

  std::vector<std::string> targets;
  for (const auto& out : outputs) targets.push_back(out.name);
  const std::vector<bool> needed =
      needed_nodes(*g, index, targets, input_names, [&](const std::string& output, const std::string& input) {
        VKG_THROW("output '" << output << "' depends on graph input '" << input
                             << "', which is not among the subgraph inputs (" << join_names(inputs)
                             << "): add it to the inputs or choose other outputs");
      });
  check_inputs_not_produced(*g, index, inputs, needed);
  warn_unused_inputs(*g, needed, inputs, output_names);

  // New inputs and outputs (built before the graph changes: types point into it).
  const std::map<std::string, onnx::TypeProto> init_types = initializer_types(*g);
  auto new_inputs = spec_value_infos(inputs, init_types, index, "input");
  auto new_outputs = spec_value_infos(outputs, init_types, index, "output");

  keep_nodes(g, needed);
  g->mutable_input()->Swap(&new_inputs);
  g->mutable_output()->Swap(&new_outputs);
  drop_initializers_named(g, input_names);
  remove_unused_initializers(model);
  list_initializers_as_inputs(model);
  prune_value_info(g);
  ExtractReport report;
  report.nodes_before = needed.size();
  report.nodes_kept = size_t(g->node_size());
  report.inputs = inputs.size();
  report.outputs = outputs.size();
  return report;
}

size_t remove_dead_nodes(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  const GraphIndex index(*g);
  std::vector<std::string> targets;
  for (const auto& out : g->output()) targets.push_back(out.name());
  const std::vector<bool> needed = needed_nodes(*g, index, targets, {}, [](const std::string&, const std::string&) {});
  const size_t removed = size_t(std::count(needed.begin(), needed.end(), false));
  keep_nodes(g, needed);
  remove_unused_initializers(model);
  list_initializers_as_inputs(model);
  prune_value_info(g);
  return removed;
}

SanitizeReport sanitize_model(OnnxModel& model, const SanitizeOptions& options) {
  SanitizeReport report;
  report.nodes_before = size_t(model.proto->graph().node_size());
  if (options.toposort) toposort(model);
  if (!options.input_shapes.empty()) {
    override_input_shapes(model, options.input_shapes, FixedDimensions::Override);
    clear_inferred_shapes(model);  // old shapes would contradict the new ones
  }
  if (options.shape_inference) infer_shapes(model, /*strict=*/true);
  if (options.cleanup) report.nodes_removed += remove_dead_nodes(model);
  if (options.fold_constants) {
    FoldOptions fold;
    fold.shape_inference = options.shape_inference;
    fold.size_threshold = options.fold_size_threshold;
    fold.max_rounds = options.num_passes;
    try {
      report.nodes_folded = fold_constants(model, fold);
    } catch (const Error& e) {
      VKG_THROW("model '" << model.path << "': cannot fold constants: " << e.what());
    }
    report.nodes_removed += remove_dead_nodes(model);
  }
  list_initializers_as_inputs(model);
  report.nodes_after = size_t(model.proto->graph().node_size());
  return report;
}

std::string onnx_checker_problem(const OnnxModel& model, CheckerText text) {
  const int64_t ir_version = model.proto->ir_version();
  model.proto->set_ir_version(std::min<int64_t>(ir_version, 8));
  std::string problem;
  try {
    onnx::checker::check_model(*model.proto);
  } catch (const std::exception& e) {
    problem = e.what();
    if (auto nl = problem.find('\n'); nl != std::string::npos && text == CheckerText::FirstLine)
      problem = problem.substr(0, nl);
    if (problem.empty()) problem = "unknown problem";
  }
  model.proto->set_ir_version(ir_version);
  return problem;
}

void check_model_before_saving(const OnnxModel& model, const std::string& what, bool checker_must_pass) {
  try {
    validate_onnx_model(model);
  } catch (const Error& e) {
    VKG_THROW(what << " would be invalid: " << e.what());
  }
  const std::string problem = onnx_checker_problem(model);
  if (problem.empty()) return;
  if (checker_must_pass) VKG_THROW(what << " would not pass ONNX's checker: " << problem);
  VKG_WARNING(what << " does not pass ONNX's checker, nor did the original model: " << problem);
}

}  // namespace vkg
