// diff-tactics (Polygraphy's `inspect diff-tactics`): given tactic replays of
// builds that passed a check ("good") and builds that failed it ("bad"), finds
// the tactics to blame: per layer, the (tactic, precision) choices seen in bad
// replays and never in good ones. Replays come from `debug build --save-tactics`
// (sorted into <artifacts>/good and <artifacts>/bad) or from any replay files.
// Everything here is plain data; the tool (tools/diff_tactics.cpp) prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/tactic_replay.h"

namespace vkg::debug {

// One replay file and what it holds.
struct LoadedReplay {
  std::string path;
  TacticReplay replay;
};

// Reads the replays under `paths`, in the order given. A directory is searched
// recursively in sorted path order; inside it, files that are not tactic
// replays (looks_like_tactic_replay) are skipped with a verbose message, and a
// file that claims to be a replay but fails to load is skipped with a warning
// naming the file and the error. A file named directly must be a valid replay:
// otherwise, and for a path that does not exist, throws Error.
std::vector<LoadedReplay> collect_tactic_replays(const std::vector<std::string>& paths);

// The good and the bad replays, and where each set came from (for messages).
struct ReplaySets {
  std::vector<LoadedReplay> good;
  std::vector<LoadedReplay> bad;
  std::string good_source;  // "art/good", "a.json, runs/ok", "art/good (missing)"; empty: no paths given
  std::string bad_source;
};

// --dir: the replays under DIR/good and DIR/bad (the layout `debug build
// --artifacts` writes). One missing subfolder leaves that set empty (diff_tactics
// then says it cannot decide); throws Error when DIR or both subfolders are missing.
ReplaySets collect_replays_from_artifact_dir(const std::string& dir);

// --good/--bad: files and folders as collect_tactic_replays reads them.
ReplaySets collect_replays(const std::vector<std::string>& good_paths, const std::vector<std::string>& bad_paths);

// A tactic seen in bad replays for a layer and in no good replay of that layer.
struct SuspectTactic {
  std::string tactic;
  Precision precision = Precision::FP32;
  size_t bad_replays = 0;  // how many bad replays chose it for the layer
  // The largest error recorded for it on this layer by --validate-tactics in any
  // replay (good or bad), when one was recorded.
  std::optional<double> validation_error{};

  bool operator==(const SuspectTactic&) const = default;
};

// The suspects of one layer, most-used first, then by recorded validation error
// (largest first; none recorded last), then by tactic name.
struct LayerSuspects {
  std::string layer;
  std::string op;
  std::vector<SuspectTactic> suspects;

  bool operator==(const LayerSuspects&) const = default;
};

// What diff_tactics found.
struct TacticDiffReport {
  size_t good_replays = 0;
  size_t bad_replays = 0;
  // Layers with at least one suspect tactic, in the order the bad replays list them.
  // Layers whose bad choices all also appear in a good replay are not listed.
  std::vector<LayerSuspects> layers;
  // Layers in bad replays that no good replay has (the replays come from different
  // models): reported, never counted as suspects.
  std::vector<std::string> layers_only_in_bad;
  // Doubts about the comparison itself: a layer whose signature differs between
  // replays (different models or build options), replays of different devices.
  std::vector<std::string> warnings;
  // A tactic that every bad replay chose for some layer and no good replay chose
  // for any layer: a faulty shader fails every layer that runs it, so the blame can
  // follow the tactic across layers when no single (layer, tactic) explains every failure.
  struct AcrossLayers {
    std::string tactic;
    Precision precision = Precision::FP32;
    std::vector<std::string> layers;  // where bad replays chose it, first-seen order
  };
  std::vector<AcrossLayers> across_layers;
  // Set when no tactic can be blamed, with why: no good or no bad replays, or
  // every bad choice also appears in a good replay.
  std::optional<std::string> undecided;

  // A suspect with the layer it was chosen for.
  struct Blame {
    const LayerSuspects* layer = nullptr;
    const SuspectTactic* tactic = nullptr;
    bool ranked_by_error = false;  // chosen among several by its recorded validation error
  };
  // Suspects that every bad replay chose: each alone explains every failure.
  std::vector<Blame> in_every_bad_replay() const;
  // The tactic the failure follows: the only suspect of all layers, or else the
  // only suspect that every bad replay chose, or else, among those, the only one
  // whose recorded validation error is the largest (ranked_by_error is then set).
  // Unset when that is not one tactic (with few bad replays, another layer's
  // random choice can coincide: run more iterations, or build with --validate-tactics).
  std::optional<Blame> single_suspect() const;
};

// Compares the replay sets (see TacticDiffReport). Never throws for any input.
TacticDiffReport diff_tactics(const ReplaySets& sets);

}  // namespace vkg::debug
