// Debug replay files (--save-debug-replay / --load-debug-replay): the result
// of every checked iteration, so a later session can skip iterations that
// were already decided. Format (docs/debug.md, "Debug replay"):
//   {"format": "vkgraphy-debug-replay", "version": 1, "tool": "reduce",
//    "iterations": [{"iteration": 0, "passed": false, "description": "..."}, ...]}
// `description` says what the iteration checked (a subgraph, a set of layers);
// a replayed entry whose description differs from the current one is not
// trusted: the iteration is checked again.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vkg::debug {

struct ReplayEntry {
  int iteration = 0;
  bool passed = false;
  std::string description;

  bool operator==(const ReplayEntry&) const = default;
};

struct DebugReplay {
  std::string tool;  // the debug tool that wrote it ("build", "reduce", ...)
  std::vector<ReplayEntry> iterations;

  const ReplayEntry* find(int iteration) const;
  // Adds or replaces the entry of `entry.iteration`.
  void set(const ReplayEntry& entry);

  bool operator==(const DebugReplay&) const = default;
};

// Reads a replay. Throws Error naming the file and the problem (missing, not
// JSON, another format or version, a bad field, an iteration listed twice).
DebugReplay load_debug_replay(const std::string& path);
// Writes a replay whole-or-nothing. Throws Error if it cannot be written.
void save_debug_replay(const std::string& path, const DebugReplay& replay);

// "x.json" -> "x_skip_current.json": the replay written before each check,
// with the running iteration marked failed, so a crash can be resumed past.
std::string skip_current_path(const std::string& replay_path);

}  // namespace vkg::debug
