#include "debug/debug_replay.h"

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/engine/layer_signature.h"

namespace vkg::debug {

namespace {

using Json = nlohmann::ordered_json;
constexpr char kFormat[] = "vkgraphy-debug-replay";
constexpr int kVersion = 1;

}  // namespace

const ReplayEntry* DebugReplay::find(int iteration) const {
  for (const ReplayEntry& e : iterations)
    if (e.iteration == iteration) return &e;
  return nullptr;
}

void DebugReplay::set(const ReplayEntry& entry) {
  for (ReplayEntry& e : iterations) {
    if (e.iteration == entry.iteration) {
      e = entry;
      return;
    }
  }
  iterations.push_back(entry);
}

DebugReplay load_debug_replay(const std::string& path) {
  const std::string text = read_whole_file(path, "debug replay");
  const JsonPlace where{path, ""};
  const Json root = parse_json_text(text, where);
  if (!root.is_object()) where.fail(std::string("expected a JSON object, got ") + root.type_name());
  const std::string format = json_string(root, "format", where);
  if (format != kFormat)
    where.field("format").fail("not a debug replay: format is \"" + format + "\", expected \"" + kFormat + "\"");
  const Json& version = json_member(root, "version", where);
  if (version != kVersion)
    where.field("version").fail("unsupported debug replay version " + version.dump() + " (this vkgraphy reads version " +
                                std::to_string(kVersion) + ")");
  DebugReplay replay;
  replay.tool = json_string(root, "tool", where);
  const Json& list = json_member(root, "iterations", where);
  const JsonPlace list_where = where.field("iterations");
  if (!list.is_array()) list_where.fail(std::string("expected an array, got ") + list.type_name());
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonPlace w = list_where.index(i);
    ReplayEntry e;
    e.iteration = static_cast<int>(json_unsigned(list[i], "iteration", 1u << 30, w));
    const Json& passed = json_member(list[i], "passed", w);
    if (!passed.is_boolean()) w.field("passed").fail("expected true or false");
    e.passed = passed.get<bool>();
    if (list[i].contains("description")) e.description = json_string(list[i], "description", w);
    if (replay.find(e.iteration)) w.field("iteration").fail("iteration " + std::to_string(e.iteration) + " appears twice");
    replay.iterations.push_back(e);
  }
  return replay;
}

void save_debug_replay(const std::string& path, const DebugReplay& replay) {
  Json root = Json::object();
  root["format"] = kFormat;
  root["version"] = kVersion;
  root["tool"] = replay.tool;
  Json list = Json::array();
  for (const ReplayEntry& e : replay.iterations)
    list.push_back(Json{{"iteration", e.iteration}, {"passed", e.passed}, {"description", e.description}});
  root["iterations"] = std::move(list);
  write_file_atomically(path, root.dump(2) + "\n", "debug replay");
}

std::string skip_current_path(const std::string& replay_path) {
  const size_t slash = replay_path.find_last_of('/');
  const size_t dot = replay_path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1)
    return replay_path + "_skip_current";
  return replay_path.substr(0, dot) + "_skip_current" + replay_path.substr(dot);
}

}  // namespace vkg::debug
