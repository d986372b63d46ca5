#include "runtime/engine/tactic_replay.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kReplayFormat[] = "vkgraphy-tactic-replay";
constexpr int kReplayVersion = 1;
constexpr char kReplayWhat[] = "tactic replay";

Json candidate_to_json(const CandidateTiming& c) {
  Json j = Json::object();
  j["tactic"] = c.tactic;
  j["precision"] = precision_name(c.precision);
  if (c.validation_error) j["validation_error"] = validation_error_json(*c.validation_error);
  if (c.rejected) j["rejected"] = true;
  if (c.error) {
    j["error"] = *c.error;
  } else if (!c.untimed) {
    j["median_ns"] = c.median_ns;
    j["samples_ns"] = c.samples_ns;
    if (c.reformat_ns > 0) j["reformat_ns"] = c.reformat_ns;
  }
  return j;
}

CandidateTiming candidate_from_json(const Json& j, const JsonPlace& where) {
  CandidateTiming c;
  c.tactic = json_string(j, "tactic", where);
  c.precision = json_precision(j, "precision", where);
  if (j.contains("validation_error")) c.validation_error = json_validation_error(j, "validation_error", where);
  if (j.contains("rejected")) {
    const Json& r = j["rejected"];
    if (!r.is_boolean()) where.field("rejected").fail(std::string("expected true or false, got ") + r.type_name());
    c.rejected = r.get<bool>();
    if (c.rejected && !j.contains("error")) where.field("rejected").fail("a rejected candidate needs its \"error\"");
  }
  if (j.contains("error")) {
    c.error = json_string(j, "error", where);
    return c;
  }
  if (!j.contains("median_ns") && c.validation_error) {  // validated, not timed
    c.untimed = true;
    return c;
  }
  c.median_ns = json_non_negative(j, "median_ns", where);
  if (j.contains("reformat_ns")) c.reformat_ns = json_non_negative(j, "reformat_ns", where);
  const Json& samples = json_member(j, "samples_ns", where);
  const JsonPlace samples_where = where.field("samples_ns");
  if (!samples.is_array()) samples_where.fail(std::string("expected an array, got ") + samples.type_name());
  for (size_t i = 0; i < samples.size(); ++i) {
    const Json& s = samples[i];
    if (!s.is_number() || !(s.get<double>() >= 0)) samples_where.index(i).fail("expected a number >= 0");
    c.samples_ns.push_back(s.get<double>());
  }
  return c;
}

TacticChoice layer_from_json(const Json& j, const JsonPlace& where) {
  TacticChoice layer;
  layer.name = json_string(j, "name", where);
  if (layer.name.empty()) where.field("name").fail("empty layer name");
  layer.op = json_string(j, "op", where);
  layer.nodes = json_optional_strings(j, "nodes", where);
  layer.signature = json_string(j, "signature", where);
  layer.tactic = json_string(j, "tactic", where);
  layer.precision = json_precision(j, "precision", where);
  const Json& candidates = json_member(j, "candidates", where);
  const JsonPlace candidates_where = where.field("candidates");
  if (!candidates.is_array()) candidates_where.fail(std::string("expected an array, got ") + candidates.type_name());
  for (size_t i = 0; i < candidates.size(); ++i) {
    layer.candidates.push_back(candidate_from_json(candidates[i], candidates_where.index(i)));
  }
  return layer;
}

TacticReplay replay_from_json(const Json& root, const JsonPlace& where) {
  json_check_header(root, where, kReplayFormat, kReplayVersion, kReplayWhat);
  TacticReplay replay;
  replay.device = device_identity_from_json(json_member(root, "device", where), where.file, "device");
  const Json& layers = json_member(root, "layers", where);
  const JsonPlace layers_where = where.field("layers");
  if (!layers.is_array()) layers_where.fail(std::string("expected an array, got ") + layers.type_name());
  std::set<std::string> names;
  for (size_t i = 0; i < layers.size(); ++i) {
    const JsonPlace layer_where = layers_where.index(i);
    replay.layers.push_back(layer_from_json(layers[i], layer_where));
    if (!names.insert(replay.layers.back().name).second) {
      layer_where.field("name").fail("layer '" + replay.layers.back().name + "' appears twice");
    }
  }
  return replay;
}

// Stops at the top-level "format" key and remembers its value; parses nothing else.
class FormatSniffer : public Json::json_sax_t {
 public:
  std::string format;

  bool null() override { return value_seen(); }
  bool boolean(bool) override { return value_seen(); }
  bool number_integer(number_integer_t) override { return value_seen(); }
  bool number_unsigned(number_unsigned_t) override { return value_seen(); }
  bool number_float(number_float_t, const string_t&) override { return value_seen(); }
  bool string(string_t& val) override {
    if (depth_ == 1 && at_format_) {
      format = val;
      return false;  // found it: stop parsing
    }
    return value_seen();
  }
  bool binary(binary_t&) override { return value_seen(); }
  bool start_object(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return depth_ > 0 && enter(); }
  bool end_array() override { return leave(); }
  bool key(string_t& val) override {
    at_format_ = depth_ == 1 && val == "format";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  // A top-level value that is not a string ends the search.
  bool value_seen() { return depth_ > 0 && !(depth_ == 1 && at_format_); }
  bool enter() {
    if (depth_ == 1 && at_format_) return false;
    ++depth_;
    return true;
  }
  bool leave() {
    --depth_;
    return depth_ > 0;
  }

  int depth_ = 0;
  bool at_format_ = false;
};

}  // namespace

const TacticChoice* TacticReplay::find(const std::string& layer) const {
  for (const TacticChoice& choice : layers) {
    if (choice.name == layer) return &choice;
  }
  return nullptr;
}

const TacticChoice* TacticReplay::find(const std::string& layer, const std::vector<std::string>& nodes,
                                       const std::string& op) const {
  if (const TacticChoice* exact = find(layer)) return exact;
  if (nodes.empty()) return nullptr;
  for (const TacticChoice& choice : layers) {
    if (choice.op != op) continue;
    if (choice.nodes.empty() ? choice.name == nodes.front()
                             : std::find(choice.nodes.begin(), choice.nodes.end(), nodes.front()) != choice.nodes.end())
      return &choice;
  }
  return nullptr;
}

TacticReplay load_tactic_replay(const std::string& path) {
  const std::string text = read_whole_file(path, kReplayWhat);
  const JsonPlace where{path, ""};
  const Json root = parse_json_text(text, where);
  try {
    return replay_from_json(root, where);
  } catch (const nlohmann::json::exception& e) {
    where.fail(std::string("malformed tactic replay: ") + e.what());
  }
}

std::string tactic_replay_to_json_text(const TacticReplay& replay) {
  Json root = Json::object();
  root["format"] = kReplayFormat;
  root["version"] = kReplayVersion;
  root["device"] = device_identity_to_json(replay.device);
  Json layers = Json::array();
  std::set<std::string> names;
  for (const TacticChoice& layer : replay.layers) {
    VKG_CHECK(names.insert(layer.name).second, "tactic replay: layer '" << layer.name << "' appears twice");
    Json j = Json::object();
    j["name"] = layer.name;
    j["op"] = layer.op;
    if (layer.nodes.size() > 1 || (layer.nodes.size() == 1 && layer.nodes[0] != layer.name)) j["nodes"] = layer.nodes;
    j["signature"] = layer.signature;
    j["tactic"] = layer.tactic;
    j["precision"] = precision_name(layer.precision);
    j["candidates"] = Json::array();
    for (const CandidateTiming& c : layer.candidates) j["candidates"].push_back(candidate_to_json(c));
    layers.push_back(std::move(j));
  }
  root["layers"] = std::move(layers);
  // Invalid UTF-8 in a name is replaced rather than failing the whole save.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void save_tactic_replay(const std::string& path, const TacticReplay& replay) {
  write_file_atomically(path, tactic_replay_to_json_text(replay), kReplayWhat);
}

bool looks_like_tactic_replay(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    FormatSniffer sniffer;
    Json::sax_parse(in, &sniffer);
    return sniffer.format == kReplayFormat;
  } catch (...) {
    return false;
  }
}

}  // namespace vkg
