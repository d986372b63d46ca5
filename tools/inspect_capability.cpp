// `vkgraphy inspect capability MODEL`: which nodes the Vulkan builder can take on the selected
// device (Polygraphy's `inspect capability --with-partitioning`, for vkgraphy's builder instead of
// TensorRT's parser). The model's nodes, in file order, are split into runs of supported and
// unsupported nodes; each run is saved as an ONNX model, `supported_subgraph-nodes-A-B.onnx` or
// `unsupported_subgraph-nodes-A-B.onnx` (A and B node indices, inclusive), and results.txt holds
// the table of unsupported ops with their reasons and node ranges.
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/engine/capability.h"
#include "runtime/onnx/surgeon.h"
#include "tools/args_builder.h"
#include "tools/args_model.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct CapabilityArgs {
  ModelArgs model;
  bool fp16 = false;
  std::string output_dir = "vkgraphy_capability_dumps";
};

// A run of consecutive nodes [begin, end) that are all supported or all not.
struct NodeRun {
  int begin = 0, end = 0;
  bool supported = false;
};

// The capability of each node of `model` (file order). A node import folded into constants is
// supported: the builder computes it at build time.
std::vector<NodeCapability> capabilities(const OnnxModel& model, const CapabilityArgs& args) {
  OnnxModel copy{std::make_shared<onnx::ModelProto>(*model.proto), model.path};
  ImportOptions options = args.model.builder_import_options();
  options.allow_unknown_ops = true;
  const Graph graph = import_onnx(copy, options);
  std::map<std::string, const Node*> by_name;
  for (const Node& n : graph.nodes) by_name.emplace(n.name, &n);
  std::unique_ptr<vk::Context> ctx = open_vulkan();
  BuilderConfig config;
  config.fp16 = args.fp16;
  // Each node's build is quiet: only its verdict is reported.
  const ScopedSeverity quiet(Severity::Error);
  std::vector<NodeCapability> caps;
  for (const auto& proto : model.proto->graph().node()) {
    auto it = by_name.find(proto.name());
    caps.push_back(it == by_name.end() ? NodeCapability{true, ""}
                                       : node_capability(graph, *it->second, config, ctx->device().info()));
  }
  return caps;
}

std::vector<NodeRun> runs_of(const std::vector<NodeCapability>& caps) {
  std::vector<NodeRun> runs;
  for (int i = 0; i < int(caps.size()); ++i) {
    if (runs.empty() || runs.back().supported != caps[size_t(i)].supported)
      runs.push_back({i, i, caps[size_t(i)].supported});
    runs.back().end = i + 1;
  }
  return runs;
}

// The nodes [run.begin, run.end) of `base` as a model of their own: inputs are the tensors they
// read and do not compute, outputs those they compute that other nodes or the graph's outputs read.
void save_run(const OnnxModel& base, const NodeRun& run, const std::string& path) {
  const onnx::GraphProto& g = base.proto->graph();
  const GraphIndex index(g);
  auto computed_in_run = [&](const std::string& tensor) {
    auto p = index.producer.find(tensor);
    return p != index.producer.end() && p->second >= run.begin && p->second < run.end;
  };
  std::set<std::string> read_outside;
  for (int i = 0; i < g.node_size(); ++i) {
    if (i >= run.begin && i < run.end) continue;
    for (const std::string& in : node_reads(g.node(i))) read_outside.insert(in);
  }
  for (const auto& out : g.output()) read_outside.insert(out.name());
  std::vector<TensorSpec> inputs, outputs, unread;
  std::set<std::string> seen;
  for (int i = run.begin; i < run.end; ++i) {
    for (const std::string& in : node_reads(g.node(i)))  // subgraphs' outer reads too
      if (!computed_in_run(in) && !index.initializers.count(in) && seen.insert(in).second)
        inputs.push_back({in, std::nullopt, std::nullopt});
    for (const auto& out : g.node(i).output()) {
      if (out.empty()) continue;
      (read_outside.count(out) ? outputs : unread).push_back({out, std::nullopt, std::nullopt});
    }
  }
  if (outputs.empty()) outputs = unread;  // a run whose results nothing reads: all of them
  OnnxModel sub{std::make_shared<onnx::ModelProto>(*base.proto), base.path};
  extract_subgraph(sub, inputs, outputs);
  check_model_before_saving(sub, "subgraph '" + path + "'", false);
  save_onnx_model(sub, path);
}

// Polygraphy's table: operator, count, reason, node ranges ([begin, end) of each unsupported run).
std::string summary_table(const onnx::GraphProto& g, const std::vector<NodeCapability>& caps,
                          const std::vector<NodeRun>& runs) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> rows;  // op -> reason -> ranges
  std::vector<std::string> op_order;
  size_t op_width = 9, reason_width = 6;
  for (const NodeRun& run : runs) {
    if (run.supported) continue;
    std::string reason;
    for (int i = run.begin; i < run.end; ++i)
      if (reason.find(caps[size_t(i)].reason) == std::string::npos)
        reason += (reason.empty() ? "" : " | ") + caps[size_t(i)].reason;
    const std::string& op = g.node(run.begin).op_type();
    if (!rows.count(op)) op_order.push_back(op);
    rows[op][reason].push_back("[" + std::to_string(run.begin) + ", " + std::to_string(run.end) + "]");
    op_width = std::max(op_width, op.size());
    reason_width = std::max(reason_width, reason.size());
  }
  auto pad = [](std::string s, size_t width) { return s.append(width > s.size() ? width - s.size() : 0, ' '); };
  const std::string header = pad("Operator", op_width) + "| Count   | " + pad("Reason", reason_width) + " | Nodes\n";
  std::string out = "===== Summary =====\n" + header + std::string(header.size(), '-') + "\n";
  for (const std::string& op : op_order) {
    for (const auto& [reason, ranges] : rows[op]) {
      std::string list;
      for (const std::string& r : ranges) list += (list.empty() ? "" : ", ") + r;
      out += pad(op, op_width) + "| " + pad(std::to_string(ranges.size()), 7) + " | " + pad(reason, reason_width) +
             " | [" + list + "]\n";
    }
  }
  return out;
}

void inspect_capability(const CapabilityArgs& args) {
  OnnxModel model = load_onnx_model(args.model.path, true, args.model.external_data_dir);
  // Every node gets a name ("<op>_<index>" for unnamed ones), so that it can be found again after import.
  name_unnamed_nodes(*model.proto->mutable_graph(),
                     [](int i, const onnx::NodeProto& n) { return n.op_type() + "_" + std::to_string(i); });
  const std::vector<NodeCapability> caps = capabilities(model, args);
  const std::vector<NodeRun> runs = runs_of(caps);
  if (runs.size() <= 1 && (runs.empty() || runs[0].supported)) {
    VKG_INFO("Graph is fully supported by the Vulkan builder; will not generate subgraphs.");
    return;
  }
  // The saved subgraphs carry the shapes inference finds (their inputs' types come from them).
  OnnxModel base{std::make_shared<onnx::ModelProto>(*model.proto), model.path};
  const InputShapes shapes = args.model.shapes();
  if (!shapes.empty()) override_input_shapes(base, shapes);
  infer_shapes(base, /*strict=*/false);
  std::filesystem::create_directories(args.output_dir);
  for (const NodeRun& run : runs) {
    const std::string name = std::string(run.supported ? "supported" : "unsupported") + "_subgraph-nodes-" +
                             std::to_string(run.begin) + "-" + std::to_string(run.end - 1) + ".onnx";
    save_run(base, run, (std::filesystem::path(args.output_dir) / name).string());
  }
  const std::string summary = summary_table(model.proto->graph(), caps, runs);
  VKG_INFO(summary);
  write_file_atomically((std::filesystem::path(args.output_dir) / "results.txt").string(), summary, "results");
  VKG_INFO("Saved " << runs.size() << " subgraph(s) and results.txt to " << args.output_dir);
}

}  // namespace

void add_inspect_capability(CLI::App& inspect) {
  auto args = std::make_shared<CapabilityArgs>();
  CLI::App* cmd = inspect.add_subcommand(
      "capability", "Find the nodes the Vulkan builder can take on this device, and save the supported and "
                    "unsupported subgraphs");
  cmd->fallthrough();
  args->model.add_to(*cmd, "--input-shapes", false);
  cmd->add_flag("--fp16", args->fp16, "Ask whether the builder takes each node with fp16 allowed");
  cmd->add_option("-o,--output", args->output_dir, "Folder of the subgraphs and results.txt")
      ->capture_default_str();
  cmd->callback([args] { inspect_capability(*args); });
}

}  // namespace vkg::tools
