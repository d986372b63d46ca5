#include "runtime/engine/capability.h"

#include <set>

#include "runtime/core/error.h"

namespace vkg {

namespace {

std::string first_line_of(const std::string& text) { return text.substr(0, text.find('\n')); }

// `node` as a graph of its own, or a reason it cannot be one.
Graph single_node_graph(const Graph& graph, const Node& node) {
  Graph one;
  one.name = graph.name;
  one.ir_version = graph.ir_version;
  one.opset = graph.opset;
  std::vector<std::string> reads;
  for (const std::string& in : node.inputs)
    if (!in.empty()) reads.push_back(in);
  for (const std::string& outer : Graph::outer_scope_reads(node)) reads.push_back(outer);
  std::set<std::string> seen;
  for (const std::string& name : reads) {
    if (!seen.insert(name).second) continue;
    if (auto w = graph.initializers.find(name); w != graph.initializers.end()) {
      one.initializers.emplace(name, w->second);
      continue;
    }
    const ValueInfo* info = graph.find_value_info(name);
    VKG_CHECK(info != nullptr && info->dtype && info->shape,
              "the type or shape of its input '" << name << "' is not known (give --input-shapes)");
    one.inputs.push_back(*info);
    one.value_info.emplace(name, *info);
  }
  for (const std::string& out : node.outputs) {
    if (out.empty()) continue;
    const ValueInfo* info = graph.find_value_info(out);
    one.outputs.push_back(info != nullptr ? *info : ValueInfo{out, std::nullopt, std::nullopt});
    if (info != nullptr) one.value_info.emplace(out, *info);
  }
  one.nodes.push_back(node);
  return one;
}

}  // namespace

NodeCapability node_capability(const Graph& graph, const Node& node, BuilderConfig config,
                               const DeviceProfile& device) {
  config.optimization_level = 0;
  config.progress = false;
  try {
    const Graph one = single_node_graph(graph, node);
    build_engine(one, config, device, device_identity(device), nullptr);
    return {true, ""};
  } catch (const Error& e) {
    return {false, first_line_of(e.what())};
  }
}

}  // namespace vkg
