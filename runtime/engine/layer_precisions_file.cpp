#include "runtime/engine/layer_precisions_file.h"

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/engine/engine_file.h"
#include "runtime/engine/layer_signature.h"
#include "runtime/engine/tactic_replay.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kPrecisionsFormat[] = "vkgraphy-layer-precisions";
constexpr int kPrecisionsVersion = 1;
constexpr char kPrecisionsWhat[] = "layer-precisions file";

LayerPrecisions from_json(const Json& root, const JsonPlace& where) {
  json_check_header(root, where, kPrecisionsFormat, kPrecisionsVersion, kPrecisionsWhat);
  LayerPrecisions out;
  if (root.contains("precision_constraints")) {
    const std::string text = json_string(root, "precision_constraints", where);
    out.constraints = parse_precision_constraints(text);
    if (!out.constraints) where.field("precision_constraints").fail("'" + text + "' is not none, prefer or obey");
  }
  const Json& layers = json_member(root, "layer_precisions", where);
  const JsonPlace layers_where = where.field("layer_precisions");
  if (!layers.is_object()) layers_where.fail(std::string("expected an object, got ") + layers.type_name());
  for (const auto& [name, value] : layers.items()) out.layers[name] = json_precision(layers, name, layers_where);
  return out;
}

// The precision and arithmetic of each node of another build's layers (name, nodes, tactic, precision).
struct BuiltLayer {
  const std::string& name;
  const std::vector<std::string>& nodes;
  const std::string& tactic;
  Precision precision;
};

void take_built_layer(const BuiltLayer& l, LayerPrecisions& out) {
  const Tactic* t = TacticRegistry::builtin().find(l.tactic);
  const std::vector<std::string> single = {l.name};
  for (const std::string& node : l.nodes.empty() ? single : l.nodes) {
    out.layers[node] = l.precision;
    if (t != nullptr && l.precision == Precision::FP16) out.arith[node] = t->arith;
  }
}

LayerPrecisions from_replay(const std::string& path) {
  LayerPrecisions out;
  for (const TacticChoice& c : load_tactic_replay(path).layers)
    take_built_layer({c.name, c.nodes, c.tactic, c.precision}, out);
  return out;
}

LayerPrecisions from_engine(const std::string& path) {
  LayerPrecisions out;
  for (const EngineLayer& l : load_engine(path).layers)
    if (!l.nodes.empty()) take_built_layer({l.name, l.nodes, l.tactic, l.precision}, out);
  return out;
}

}  // namespace

LayerPrecisions load_layer_precisions(const std::string& path) {
  if (looks_like_engine(path)) return from_engine(path);
  if (looks_like_tactic_replay(path)) return from_replay(path);
  const std::string text = read_whole_file(path, kPrecisionsWhat);
  const JsonPlace where{path, ""};
  const Json root = parse_json_text(text, where);
  try {
    return from_json(root, where);
  } catch (const nlohmann::json::exception& e) {
    where.fail(std::string("malformed layer-precisions file: ") + e.what());
  }
}

void save_layer_precisions(const std::string& path, const LayerPrecisions& precisions) {
  Json root = Json::object();
  root["format"] = kPrecisionsFormat;
  root["version"] = kPrecisionsVersion;
  if (precisions.constraints) root["precision_constraints"] = precision_constraints_name(*precisions.constraints);
  Json layers = Json::object();
  for (const auto& [name, precision] : precisions.layers) layers[name] = precision_name(precision);
  root["layer_precisions"] = std::move(layers);
  write_file_atomically(path, root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n", kPrecisionsWhat);
}

}  // namespace vkg
