// The builder's options by name (--fp16-policy, --precision-constraints,
// --layer-precisions patterns), the device identity timings and engines record,
// the ops no tactic serves, and what a PlanTimer does by default. Plain
// functions of runtime/engine/builder.h that the build itself does not need to
// read to be understood.
#include <algorithm>
#include <map>

#include "runtime/core/error.h"
#include "runtime/core/version.h"
#include "runtime/engine/builder.h"

namespace vkg {

std::vector<Tensor> PlanTimer::run(const LayerPlan&, const std::vector<Tensor>&, const std::vector<Buffer>&, bool) {
  VKG_THROW("this device timer cannot run plans on data (needed by --validate-tactics)");
}

void PlanTimer::compile(const std::vector<const LayerPlan*>&) {}

const char* fp16_policy_name(Fp16Policy p) {
  switch (p) {
    case Fp16Policy::Auto:
      return "auto";
    case Fp16Policy::Fastest:
      return "fastest";
    case Fp16Policy::All:
      return "all";
  }
  return "?";
}

std::optional<Fp16Policy> parse_fp16_policy(const std::string& text) {
  for (Fp16Policy p : {Fp16Policy::Auto, Fp16Policy::Fastest, Fp16Policy::All})
    if (text == fp16_policy_name(p)) return p;
  return std::nullopt;
}

const char* precision_constraints_name(PrecisionConstraints c) {
  switch (c) {
    case PrecisionConstraints::None:
      return "none";
    case PrecisionConstraints::Prefer:
      return "prefer";
    case PrecisionConstraints::Obey:
      return "obey";
  }
  return "?";
}

bool is_layer_pattern(const std::string& key) { return key.find_first_of("*?") != std::string::npos; }

bool layer_precision_matches(const std::string& key, const std::string& node) {
  return key == node || (is_layer_pattern(key) && glob_match(key, node));
}

std::optional<PrecisionConstraints> parse_precision_constraints(const std::string& text) {
  if (text == "none") return PrecisionConstraints::None;
  if (text == "prefer") return PrecisionConstraints::Prefer;
  if (text == "obey") return PrecisionConstraints::Obey;
  return std::nullopt;
}

DeviceIdentity device_identity(const DeviceProfile& device) {
  DeviceIdentity id;
  id.device_name = device.name;
  id.vendor_id = device.vendor_id;
  id.device_id = device.device_id;
  id.driver_version = device.driver_info.empty() ? std::to_string(device.driver_version) : device.driver_info;
  id.pipeline_cache_uuid = device.uuid;
  id.vkgraphy_version = VKGRAPHY_VERSION;
  for (const std::string& f : device.switched_off) id.switched_off += (id.switched_off.empty() ? "" : ",") + f;
  return id;
}

namespace {

void collect_unsupported(const Graph& graph, const TacticRegistry& registry,
                         std::map<std::string, std::vector<std::string>>& missing) {
  for (const Node& n : graph.nodes) {
    if (n.op_type == "Constant" || n.op_type == "Shape" || n.op_type == "Size") continue;  // folded
    if (n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop")) {  // the builder adds their subgraphs' layers
      for (const Graph* branch : n.subgraphs()) collect_unsupported(*branch, registry, missing);
      continue;
    }
    if (!n.domain.empty() || registry.for_op(n.op_type).empty()) {
      missing[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type].push_back(n.name);
    }
  }
}

}  // namespace

std::vector<std::string> unsupported_vulkan_ops(const Graph& graph, const TacticRegistry& registry) {
  std::map<std::string, std::vector<std::string>> missing;
  collect_unsupported(graph, registry, missing);
  std::vector<std::string> out;
  for (const auto& [op, names] : missing) {
    std::string line = op + " (";
    for (size_t i = 0; i < names.size() && i < 3; ++i) line += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > 3) line += ", ... " + std::to_string(names.size()) + " in all";
    out.push_back(line + ")");
  }
  return out;
}

}  // namespace vkg
