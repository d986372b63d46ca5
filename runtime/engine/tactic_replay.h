// Tactic replay files (--save-tactics / --load-tactics): for every layer, the
// tactic and precision the builder chose and the measurements of every
// candidate. Loading forces those choices, so a replay makes a build
// repeatable. Replays are user input: loading fails loudly. Format: docs/tactic-files.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/layer_signature.h"

namespace vkg {

// One candidate tactic the builder tried for a layer: its timing, or why it could not run.
struct CandidateTiming {
  std::string tactic;  // "gemm.tile4x4.f32"
  Precision precision = Precision::FP32;
  double median_ns = 0;              // meaningful only without an error
  std::vector<double> samples_ns;    // every timed sample, in the order measured
  std::optional<std::string> error;  // set when the candidate failed to build or run, or was rejected
  // --validate-tactics: the candidate's error against the reference on the
  // layer's real inputs (tactic_validation.h), and whether that rejected it.
  std::optional<double> validation_error{};
  bool rejected = false;
  // Validated but not timed (random selection, optimization level 0, a single
  // candidate left, or beyond the level's budget): no median_ns or samples_ns.
  bool untimed = false;
  // Measured time of the reformats this candidate's precision would add before
  // it (inputs held in the other precision); the builder ranks median + this.
  double reformat_ns = 0;

  // What the builder ranks candidates by.
  double cost_ns() const { return median_ns + reformat_ns; }

  bool operator==(const CandidateTiming&) const = default;
};

// The builder's choice for one layer.
struct TacticChoice {
  std::string name;       // layer name, unique in a replay: the node's, or "conv1+bn1" for fused nodes
  std::string op;         // op type, for readers
  std::string signature;  // LayerSignature::key() of the layer when it was built
  std::string tactic;     // the chosen tactic
  Precision precision = Precision::FP32;
  std::vector<CandidateTiming> candidates;  // may be empty (untimed builds, hand-written files)
  std::vector<std::string> nodes;           // the ONNX nodes the layer runs (empty, or absent in a file: just `name`)

  bool operator==(const TacticChoice&) const = default;
};

struct TacticReplay {
  DeviceIdentity device;             // where the choices were made (informational)
  std::vector<TacticChoice> layers;  // in build order

  // The choice for layer `layer`, or nullptr when the replay does not name it.
  const TacticChoice* find(const std::string& layer) const;
  // The choice for a layer named `layer` that runs `nodes` (the first one is the
  // node whose op the layer runs, `op`): by layer name, else the entry of the
  // same op that holds that node (a replay of a build with other fusions).
  const TacticChoice* find(const std::string& layer, const std::vector<std::string>& nodes,
                           const std::string& op) const;

  bool operator==(const TacticReplay&) const = default;
};

// Reads a replay file. Throws Error naming the file and the JSON path of the
// problem ("'r.json': layers[2].tactic: missing key ...") when the file is
// missing, not JSON, of another format or version, lacks or mistypes a field,
// or names a layer twice.
TacticReplay load_tactic_replay(const std::string& path);

// Writes a replay file whole-or-nothing. Throws Error if it cannot be written
// or if `replay` names a layer twice.
void save_tactic_replay(const std::string& path, const TacticReplay& replay);

// The replay as JSON text (what save_tactic_replay writes).
std::string tactic_replay_to_json_text(const TacticReplay& replay);

// True when `path` is a readable JSON file declaring the tactic replay format
// (any version). Never throws: a cheap filter for folders of mixed artifacts;
// load_tactic_replay still validates the rest.
bool looks_like_tactic_replay(const std::string& path);

}  // namespace vkg
