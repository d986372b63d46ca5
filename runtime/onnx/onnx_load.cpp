// Reading, validating and writing ONNX model files.
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>
#include <unordered_map>

#include "runtime/core/logger.h"
#include "runtime/core/file_io.h"
#include "runtime/engine/engine_file.h"
#include "runtime/onnx/onnx_import.h"

namespace fs = std::filesystem;

namespace vkg {

namespace {

constexpr int64_t kMaxIrVersion = 10;

// Replaces external-data references of one tensor with its bytes.
void load_external_tensor(onnx::TensorProto& t, const std::string& base_dir, const std::string& model_path,
                          std::map<std::string, std::string>& file_cache) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      VKG_THROW("model '" << model_path << "': tensor '" << t.name() << "' has a malformed external_data entry '"
                          << kv.key() << "'");
    }
  }
  VKG_CHECK(!location.empty(), "model '" << model_path << "': tensor '" << t.name()
                                         << "' uses external data but names no location");
  const fs::path rel(location);
  VKG_CHECK(rel.is_relative() && location.find("..") == std::string::npos,
            "model '" << model_path << "': tensor '" << t.name() << "' has an unsafe external data location '"
                      << location << "' (must be relative, inside the model's folder)");
  const std::string file = (fs::path(base_dir) / rel).string();
  auto it = file_cache.find(file);
  if (it == file_cache.end()) {
    std::error_code ec;
    VKG_CHECK(fs::exists(file, ec), "model '" << model_path << "': external data file '" << file << "' of tensor '"
                                              << t.name()
                                              << "' does not exist (use --external-data-dir to name its folder)");
    it = file_cache.emplace(file, read_whole_file(file, "external data file")).first;
  }
  const std::string& bytes = it->second;
  if (length < 0) length = int64_t(bytes.size()) - offset;
  VKG_CHECK(offset >= 0 && length >= 0 && offset + length <= int64_t(bytes.size()),
            "model '" << model_path << "': tensor '" << t.name() << "' reads bytes [" << offset << ", "
                      << offset + length << ") of '" << file << "', which has " << bytes.size());
  t.set_raw_data(bytes.substr(size_t(offset), size_t(length)));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
}

void load_external_data(onnx::ModelProto& m, const std::string& base_dir, const std::string& model_path) {
  std::map<std::string, std::string> cache;
  for (auto& init : *m.mutable_graph()->mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL) load_external_tensor(init, base_dir, model_path, cache);
  for (auto& node : *m.mutable_graph()->mutable_node())
    for (auto& attr : *node.mutable_attribute())
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL)
        load_external_tensor(*attr.mutable_t(), base_dir, model_path, cache);
}

// Gives the nodes of `g` (and, graph by graph, of its subgraphs) that share a name with an
// earlier node of the same graph the name "<name>_<k>", k counting that name's uses in graph
// order (2 for the second), plus "_" while that is taken: unique and stable, so that layer
// names, --layer-precisions, replays and debug results can address every node. Appends
// "'old' (k nodes)" per shared name to `renamed`.
void make_node_names_unique(onnx::GraphProto& g, std::vector<std::string>& renamed) {
  std::map<std::string, int> uses;
  std::set<std::string> taken;
  for (const auto& node : g.node()) {
    if (!node.name().empty()) ++uses[node.name()];
    taken.insert(node.name());
  }
  std::map<std::string, int> seen;
  for (auto& node : *g.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) make_node_names_unique(*attr.mutable_g(), renamed);
      for (auto& sub : *attr.mutable_graphs()) make_node_names_unique(sub, renamed);
    }
    if (node.name().empty() || uses[node.name()] < 2) continue;
    const int k = ++seen[node.name()];
    if (k == 1) {
      renamed.push_back("'" + node.name() + "' (" + std::to_string(uses[node.name()]) + " nodes)");
      continue;
    }
    std::string name = node.name() + "_" + std::to_string(k);
    while (!taken.insert(name).second) name += "_";
    node.set_name(name);
  }
}

}  // namespace

OnnxModel load_onnx_model(const std::string& path, bool load_external, const std::string& external_data_dir,
                          NodeNames names) {
  return parse_onnx_model(read_whole_file(path, "model file"), path, load_external, external_data_dir, names);
}

OnnxModel parse_onnx_model(const std::string& bytes, const std::string& source, bool load_external,
                           const std::string& external_data_dir, NodeNames names) {
  const std::string& path = source.empty() ? std::string("<model bytes>") : source;
  VKG_CHECK(!bytes.empty(), "model file '" << path << "' is empty");
  // Files users give by mistake, named for what they are.
  VKG_CHECK(bytes.compare(0, sizeof kEngineMagic, kEngineMagic, sizeof kEngineMagic) != 0,
            "'" << path << "' is a vkgraphy engine file, not an ONNX model: this tool needs the ONNX model (an engine "
                << "runs with `vkgraphy run " << path << " --vk` and shows with `vkgraphy inspect model " << path
                << "`)");
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  VKG_CHECK(first == std::string::npos || (bytes[first] != '{' && bytes[first] != '['),
            "'" << path << "' is a JSON file, not an ONNX model");
  auto proto = std::make_shared<onnx::ModelProto>();
  VKG_CHECK(proto->ParseFromString(bytes),
            "'" << path << "' is not a valid ONNX model: the protobuf cannot be parsed (truncated or not an ONNX file)");
  VKG_CHECK(proto->has_graph() && proto->ir_version() > 0,
            "'" << path << "' is not an ONNX model: " << (proto->has_graph() ? "no ir_version" : "no graph"));
  VKG_CHECK(proto->ir_version() >= 3,
            "model '" << path << "' has IR version " << proto->ir_version() << "; versions 3 to " << kMaxIrVersion
                      << " are supported");
  if (proto->ir_version() > kMaxIrVersion)
    VKG_WARNING("model '" << path << "' has IR version " << proto->ir_version() << ", newer than " << kMaxIrVersion
                          << "; trying anyway");
  std::vector<std::string> renamed;
  if (names == NodeNames::MakeUnique) make_node_names_unique(*proto->mutable_graph(), renamed);
  if (!renamed.empty()) {
    std::string list;
    for (const auto& r : renamed) list += (list.empty() ? "" : ", ") + r;
    VKG_WARNING("model '" << path << "': several nodes share a name: " << list
                          << "; the second and later of each are called '<name>_2', '<name>_3', ... in graph order");
  }
  OnnxModel model{proto, source};
  if (load_external) {
    const std::string dir = external_data_dir.empty() ? fs::path(path).parent_path().string() : external_data_dir;
    load_external_data(*proto, dir, path);
  }
  return model;
}

std::vector<std::string> runtime_input_names(const OnnxModel& model) {
  std::set<std::string> initializers;
  for (const auto& init : model.proto->graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& in : model.proto->graph().input())
    if (!initializers.count(in.name())) names.push_back(in.name());
  return names;
}

OnnxModel copy_onnx_model(const OnnxModel& model) {
  return OnnxModel{std::make_shared<onnx::ModelProto>(*model.proto), model.path};
}

void freeze_inputs(OnnxModel& model, const std::map<std::string, Tensor>& values) {
  auto* g = model.proto->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& in : g->input())
    if (!values.count(in.name())) *kept.Add() = in;
  g->mutable_input()->Swap(&kept);
  for (const auto& [name, value] : values) tensor_to_proto(value, name, g->add_initializer());
}

int64_t default_opset(const OnnxModel& model) {
  for (const auto& op : model.proto->opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  return 0;
}

namespace {

// The model-wide checks: an opset of the default domain is imported where needed (one newer
// than supported only warns), and the graph has a name and outputs.
void check_opsets_and_graph_header(const onnx::ModelProto& m, int64_t opset, const std::string& where,
                                   std::vector<std::string>& problems) {
  const onnx::GraphProto& g = m.graph();
  // ONNX asks for some opset import, and ONNX's own domain's only where its ops are used (a model of
  // ai.onnx.ml ops alone need not import it).
  const bool uses_onnx_ops = std::any_of(g.node().begin(), g.node().end(), [](const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
  });
  if (opset <= 0 && (m.opset_import_size() == 0 || uses_onnx_ops))
    problems.push_back("it imports no opset of the default ONNX domain (opset_import is missing)");
  if (opset > kMaxSupportedOpset)
    VKG_WARNING(where << " uses opset " << opset << "; opsets up to " << kMaxSupportedOpset
                      << " are supported, trying anyway");
  if (g.name().empty()) problems.push_back("its graph has no name (ONNX requires one)");
  if (g.output_size() == 0) problems.push_back("its graph has no outputs");
}

// Checks that every tensor name is defined once (graph inputs, initializers, node outputs) and
// that everything read is defined; returns the defined names.
std::set<std::string> check_tensor_definitions(const onnx::GraphProto& g, std::vector<std::string>& problems) {
  std::set<std::string> defined, initializers, inputs;
  for (const auto& init : g.initializer()) {
    if (!initializers.insert(init.name()).second)
      problems.push_back("initializer '" + init.name() + "' is defined twice");
    defined.insert(init.name());
  }
  for (const auto& in : g.input()) {
    if (in.name().empty()) problems.push_back("a graph input has no name");
    if (!inputs.insert(in.name()).second) problems.push_back("graph input '" + in.name() + "' is declared twice");
    defined.insert(in.name());
  }
  std::set<std::string> node_names;
  for (const auto& node : g.node()) {
    if (!node.name().empty() && !node_names.insert(node.name()).second)
      problems.push_back("node name '" + node.name() + "' is used by more than one node");
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      if (defined.count(out))
        problems.push_back("tensor '" + out + "' is produced twice (again by node '" + node.name() + "')");
      defined.insert(out);
    }
  }
  for (const auto& node : g.node())
    for (const auto& in : node.input())
      if (!in.empty() && !defined.count(in))
        problems.push_back("node '" + node.name() + "' (" + node.op_type() + ") reads tensor '" + in +
                           "', which nothing defines");
  for (const auto& out : g.output())
    if (!defined.count(out.name())) problems.push_back("graph output '" + out.name() + "' is not produced by any node");
  return defined;
}

// A checker message on one line, without trailing blanks.
std::string one_line(std::string msg) {
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  for (size_t nl; (nl = msg.find('\n')) != std::string::npos;) msg.replace(nl, 1, " ");
  return msg;
}

// Checks the nodes of known ops against their schema (inputs, attributes); returns the nodes
// whose op has no schema at the imported opsets.
std::vector<std::string> check_nodes_against_schemas(const onnx::ModelProto& m,
                                                     const std::unordered_map<std::string, int>& opsets,
                                                     const std::set<std::string>& defined,
                                                     std::vector<std::string>& problems) {
  std::vector<std::string> unknown;
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(int(std::min<int64_t>(m.ir_version(), 8)));  // the 1.12 checker refuses IR >= 9
  ctx.set_opset_imports(opsets);
  // Names subgraphs (If/Loop bodies) may read from the outer graph; the graph may not
  // be sorted yet, so that is every name it defines.
  onnx::checker::LexicalScopeContext lex;
  for (const std::string& name : defined) lex.add(name);
  for (const auto& node : m.graph().node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto it = opsets.find(domain);
    const onnx::OpSchema* schema =
        it == opsets.end() ? nullptr : onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, domain);
    const std::string label = node.op_type() + " '" + node.name() + "'";
    if (it == opsets.end()) {
      unknown.push_back(label + " (domain '" + domain + "' is not imported)");
      continue;
    }
    if (!schema) {
      unknown.push_back(label + (domain.empty() ? "" : " (domain '" + domain + "')"));
      continue;
    }
    try {
      onnx::checker::check_node(node, ctx, lex);
    } catch (const std::exception& e) {
      problems.push_back("node " + label + " is invalid: " + one_line(e.what()));
    }
  }
  return unknown;
}

// Throws one Error naming the model and its first eight problems, if there are any.
void throw_if_invalid(const std::string& where, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string text = where + " is invalid: " + problems.front();
  for (size_t i = 1; i < problems.size() && i < 8; ++i) text += "; " + problems[i];
  if (problems.size() > 8) text += "; and " + std::to_string(problems.size() - 8) + " more problems";
  throw Error(text);
}

}  // namespace

std::vector<std::string> validate_onnx_model(const OnnxModel& model) {
  const onnx::ModelProto& m = *model.proto;
  const std::string where = "model '" + model.path + "'";
  register_newer_onnx_schemas();
  std::vector<std::string> problems;

  std::unordered_map<std::string, int> opsets;
  for (const auto& op : m.opset_import()) opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = int(op.version());
  check_opsets_and_graph_header(m, default_opset(model), where, problems);
  const std::set<std::string> defined = check_tensor_definitions(m.graph(), problems);
  std::vector<std::string> unknown;
  if (!opsets.empty()) unknown = check_nodes_against_schemas(m, opsets, defined, problems);
  throw_if_invalid(where, problems);
  return unknown;
}

void override_input_shapes(OnnxModel& model, const InputShapes& shapes, FixedDimensions fixed) {
  auto* g = model.proto->mutable_graph();
  for (const auto& [name, shape] : shapes) {
    onnx::ValueInfoProto* vi = nullptr;
    std::string names;
    for (auto& in : *g->mutable_input()) {
      names += (names.empty() ? "" : ", ") + in.name();
      if (in.name() == name) vi = &in;
    }
    VKG_CHECK(vi, "--input-shapes names '" << name << "', but the model's inputs are: " << names);
    VKG_CHECK(vi->type().has_tensor_type(), "input '" << name << "' is not a tensor");
    // Check the declared rank before mutable_shape() creates an empty (rank-0) shape.
    if (vi->type().tensor_type().has_shape()) {
      const int rank = vi->type().tensor_type().shape().dim_size();
      VKG_CHECK(rank == int(shape.size()), "input '" << name << "' has rank " << rank << " but the given shape "
                                                     << shape_to_string(shape) << " has rank " << shape.size());
    }
    auto* tshape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (int(i) >= tshape->dim_size()) tshape->add_dim();
      auto* d = tshape->mutable_dim(int(i));
      if (shape[i] >= 0) {
        if (d->has_dim_value() && d->dim_value() >= 0 && d->dim_value() != shape[i]) {
          VKG_CHECK(fixed == FixedDimensions::Override,
                    "input '" << name << "' has a fixed dimension " << i << " of " << d->dim_value()
                              << ", the given shape says " << shape[i]);
          VKG_WARNING("Input '" << name << "': fixed dimension " << i << " changes from " << d->dim_value() << " to "
                                << shape[i]);
        }
        d->set_dim_value(shape[i]);
      } else if (!(d->has_dim_value() && d->dim_value() >= 0) && !d->has_dim_param()) {
        d->set_dim_param(name + "_dim" + std::to_string(i));
      }
    }
  }
}

void fix_dynamic_input_dims(OnnxModel& model) {
  auto* g = model.proto->mutable_graph();
  std::set<std::string> initializers;
  for (const auto& t : g->initializer()) initializers.insert(t.name());
  for (auto& in : *g->mutable_input()) {
    if (initializers.count(in.name()) || !in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    std::ostringstream declared, fixed;
    bool dynamic = false;
    for (int i = 0; i < shape->dim_size(); ++i) {
      auto* d = shape->mutable_dim(i);
      const char* sep = i ? "," : "";
      const bool known = d->has_dim_value() && d->dim_value() >= 0;
      declared << sep;
      if (known)
        declared << d->dim_value();
      else
        declared << (d->has_dim_param() ? d->dim_param() : "?");
      if (!known) {
        dynamic = true;
        d->set_dim_value(1);
      }
      fixed << sep << d->dim_value();
    }
    if (dynamic)
      VKG_WARNING("Input tensor: " << in.name() << " [" << declared.str()
                                   << "] has dynamic dimensions | The engine is built for shape [" << fixed.str()
                                   << "].\nIf this is incorrect, please provide its shape with --input-shapes");
  }
}

void save_onnx_model(const OnnxModel& model, const std::string& path) {
  std::string bytes;
  VKG_CHECK(model.proto->ByteSizeLong() < (size_t(1) << 31),
            "cannot write '" << path << "': the model is larger than the 2 GiB protobuf limit");
  VKG_CHECK(model.proto->SerializeToString(&bytes), "cannot serialize the model for '" << path << "'");
  write_file_atomically(path, bytes, "model");
}

}  // namespace vkg
