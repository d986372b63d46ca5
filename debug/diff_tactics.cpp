#include "debug/diff_tactics.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"

namespace vkg::debug {

namespace fs = std::filesystem;

namespace {

// At most this many per-layer signature warnings; the rest are counted in one line.
constexpr size_t kMaxSignatureWarnings = 5;

std::string join_paths(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

void collect_from_directory(const fs::path& dir, std::vector<LoadedReplay>& out) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  VKG_CHECK(!ec, "'" << dir.string() << "': cannot read directory: " << ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string path = file.string();
    if (!looks_like_tactic_replay(path)) {
      VKG_VERBOSE("skipping '" << path << "': not a tactic replay");
      continue;
    }
    try {
      out.push_back({path, load_tactic_replay(path)});
    } catch (const Error& e) {
      VKG_WARNING("skipping '" << path << "': not a valid tactic replay: " << e.what());
    }
  }
}

}  // namespace

std::vector<LoadedReplay> collect_tactic_replays(const std::vector<std::string>& paths) {
  std::vector<LoadedReplay> out;
  for (const auto& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    VKG_CHECK(fs::exists(status), "'" << path << "': no such file or directory");
    if (fs::is_directory(status)) {
      collect_from_directory(path, out);
      continue;
    }
    VKG_CHECK(looks_like_tactic_replay(path), "'" << path
                                                  << "': not a tactic replay (expected a JSON file with \"format\": "
                                                  << "\"vkgraphy-tactic-replay\", as --save-tactics writes)");
    out.push_back({path, load_tactic_replay(path)});
  }
  return out;
}

ReplaySets collect_replays_from_artifact_dir(const std::string& dir) {
  VKG_CHECK(fs::is_directory(dir), "'" << dir << "': no such directory");
  const std::string good = (fs::path(dir) / "good").string();
  const std::string bad = (fs::path(dir) / "bad").string();
  const bool has_good = fs::is_directory(good);
  const bool has_bad = fs::is_directory(bad);
  VKG_CHECK(has_good || has_bad, "'" << dir << "' has neither a 'good' nor a 'bad' subfolder (missing: '" << good
                                     << "' and '" << bad
                                     << "'); --dir expects the layout of `debug build --artifacts`");
  ReplaySets sets;
  if (has_good) sets.good = collect_tactic_replays({good});
  if (has_bad) sets.bad = collect_tactic_replays({bad});
  sets.good_source = has_good ? good : good + " (missing)";
  sets.bad_source = has_bad ? bad : bad + " (missing)";
  return sets;
}

ReplaySets collect_replays(const std::vector<std::string>& good_paths, const std::vector<std::string>& bad_paths) {
  ReplaySets sets;
  sets.good = collect_tactic_replays(good_paths);
  sets.bad = collect_tactic_replays(bad_paths);
  sets.good_source = join_paths(good_paths);
  sets.bad_source = join_paths(bad_paths);
  return sets;
}

std::vector<TacticDiffReport::Blame> TacticDiffReport::in_every_bad_replay() const {
  std::vector<Blame> out;
  for (const LayerSuspects& layer : layers)
    for (const SuspectTactic& s : layer.suspects)
      if (bad_replays > 0 && s.bad_replays == bad_replays) out.push_back({&layer, &s});
  return out;
}

std::optional<TacticDiffReport::Blame> TacticDiffReport::single_suspect() const {
  if (layers.size() == 1 && layers.front().suspects.size() == 1)
    return Blame{&layers.front(), &layers.front().suspects.front()};
  const std::vector<Blame> every = in_every_bad_replay();
  if (every.size() == 1) return every.front();
  // Several explain every failure: the one validation measured as furthest off, if it stands alone.
  const Blame* top = nullptr;
  bool tie = false;
  for (const Blame& b : every) {
    if (!b.tactic->validation_error) continue;
    if (top == nullptr || *b.tactic->validation_error > *top->tactic->validation_error) {
      top = &b;
      tie = false;
    } else if (*b.tactic->validation_error == *top->tactic->validation_error) {
      tie = true;
    }
  }
  if (top != nullptr && !tie) return Blame{top->layer, top->tactic, true};
  return std::nullopt;
}

namespace {

using TacticKey = std::pair<std::string, Precision>;

// Warns about layers whose signature differs between replays and about replays of different devices.
// A signature covers the layer's precision, so only replays that chose the same precision for a
// layer are compared: a layer in fp16 in one build and in fp32 in another is the same layer.
void check_comparable(const ReplaySets& sets, TacticDiffReport& report) {
  std::vector<TacticKey> layer_order;
  // (layer, precision) -> (signature, file)
  std::map<TacticKey, std::vector<std::pair<std::string, std::string>>> signatures;
  std::vector<std::pair<DeviceIdentity, std::string>> devices;                         // distinct, with a file
  for (const auto* set : {&sets.good, &sets.bad}) {
    for (const auto& loaded : *set) {
      if (std::none_of(devices.begin(), devices.end(), [&](const auto& d) { return d.first == loaded.replay.device; }))
        devices.emplace_back(loaded.replay.device, loaded.path);
      for (const auto& layer : loaded.replay.layers) {
        const TacticKey key{layer.name, layer.precision};
        auto [it, inserted] = signatures.try_emplace(key);
        if (inserted) layer_order.push_back(key);
        auto& seen = it->second;
        if (std::none_of(seen.begin(), seen.end(), [&](const auto& s) { return s.first == layer.signature; }))
          seen.emplace_back(layer.signature, loaded.path);
      }
    }
  }

  size_t differing = 0;
  for (const auto& key : layer_order) {
    const auto& [name, precision] = key;
    const auto& seen = signatures[key];
    if (seen.size() < 2) continue;
    if (++differing > kMaxSignatureWarnings) continue;
    std::string list;
    for (const auto& [signature, file] : seen) list += (list.empty() ? "" : ", ") + signature + " in '" + file + "'";
    report.warnings.push_back("layer '" + name + "' (" + precision_name(precision) + ") has " +
                              std::to_string(seen.size()) + " different signatures across the replays (" + list +
                              "): the replays come from different models or build options, so their tactics "
                              "may not be comparable");
  }
  if (differing > kMaxSignatureWarnings)
    report.warnings.push_back(std::to_string(differing - kMaxSignatureWarnings) +
                              " more layer(s) have different signatures across the replays");

  if (devices.size() > 1) {
    std::string list;
    for (const auto& [device, file] : devices)
      list += (list.empty() ? "" : "; ") + device.describe() + " in '" + file + "'";
    report.warnings.push_back("the replays come from " + std::to_string(devices.size()) + " different devices (" +
                              list + "): a tactic may fail on one device and pass on another");
  }
}
// Why a report without good or without bad replays cannot decide.
std::string missing_replays_reason(const ReplaySets& sets) {
  const auto none_found = [](const std::string& kind, const std::string& source) {
    return "no " + kind + " replays were " + (source.empty() ? "given" : "found in " + source);
  };
  std::string why;
  if (sets.good.empty()) why = none_found("good", sets.good_source);
  if (sets.bad.empty()) why += (why.empty() ? "" : " and ") + none_found("bad", sets.bad_source);
  return "cannot decide: " + why;
}

// layer -> (tactic, precision) -> the largest error --validate-tactics recorded, in any replay
using RecordedErrors = std::map<std::string, std::map<TacticKey, double>>;

RecordedErrors recorded_validation_errors(const ReplaySets& sets) {
  RecordedErrors recorded_errors;
  for (const auto* set : {&sets.good, &sets.bad}) {
    for (const auto& loaded : *set) {
      for (const auto& layer : loaded.replay.layers) {
        for (const CandidateTiming& c : layer.candidates) {
          if (!c.validation_error) continue;
          auto [it, fresh] = recorded_errors[layer.name].emplace(TacticKey{c.tactic, c.precision}, *c.validation_error);
          if (!fresh) it->second = std::max(it->second, *c.validation_error);
        }
      }
    }
  }
  return recorded_errors;
}

using LayerChoices = std::map<std::string, std::set<TacticKey>>;  // layer -> every choice good replays made

LayerChoices good_choices(const ReplaySets& sets) {
  LayerChoices good_tactics;
  for (const auto& loaded : sets.good)
    for (const auto& layer : loaded.replay.layers) good_tactics[layer.name].insert({layer.tactic, layer.precision});
  return good_tactics;
}

// The bad replays' choices no good replay made for the same layer.
struct BadChoices {
  std::vector<LayerSuspects> layers;  // every layer of the bad replays that a good one has, first-seen order
  std::map<std::string, std::map<TacticKey, size_t>> counts;  // layer -> choice -> bad replays that made it
};

// Counts the bad choices; layers no good replay has go to report.layers_only_in_bad.
BadChoices count_bad_choices(const ReplaySets& sets, const LayerChoices& good_tactics, TacticDiffReport& report) {
  BadChoices bad;
  for (const auto& loaded : sets.bad) {
    for (const auto& layer : loaded.replay.layers) {
      const auto good = good_tactics.find(layer.name);
      if (good == good_tactics.end()) {
        auto& only = report.layers_only_in_bad;
        if (std::find(only.begin(), only.end(), layer.name) == only.end()) only.push_back(layer.name);
        continue;
      }
      if (!bad.counts.count(layer.name)) bad.layers.push_back({layer.name, layer.op, {}});
      auto& per_layer = bad.counts[layer.name];
      const TacticKey key{layer.tactic, layer.precision};
      if (!good->second.count(key)) ++per_layer[key];
    }
  }
  return bad;
}

// Moves every layer with a suspect into report.layers, its suspects most frequent first, then
// by the largest recorded validation error.
void rank_suspects(BadChoices& bad, RecordedErrors& recorded_errors, TacticDiffReport& report) {
  for (auto& layer : bad.layers) {
    for (const auto& [key, n] : bad.counts[layer.layer]) {
      SuspectTactic suspect{key.first, key.second, n, std::nullopt};
      const auto& errors = recorded_errors[layer.layer];
      if (auto e = errors.find(key); e != errors.end()) suspect.validation_error = e->second;
      layer.suspects.push_back(suspect);
    }
    if (layer.suspects.empty()) continue;
    std::stable_sort(layer.suspects.begin(), layer.suspects.end(), [](const SuspectTactic& a, const SuspectTactic& b) {
      if (a.bad_replays != b.bad_replays) return a.bad_replays > b.bad_replays;
      return a.validation_error.value_or(-1) > b.validation_error.value_or(-1);
    });
    report.layers.push_back(std::move(layer));
  }
}

// Tactics in every bad replay (any layer) and in no good replay (any layer), into report.across_layers.
void find_across_layers(const ReplaySets& sets, const LayerChoices& good_tactics, TacticDiffReport& report) {
  std::set<TacticKey> in_good;
  for (const auto& [layer, keys] : good_tactics) in_good.insert(keys.begin(), keys.end());
  std::map<TacticKey, size_t> bad_builds;  // bad replays that chose the tactic for some layer
  std::vector<TacticKey> order;
  std::map<TacticKey, std::vector<std::string>> where;
  for (const auto& loaded : sets.bad) {
    std::set<TacticKey> here;
    for (const auto& layer : loaded.replay.layers) {
      const TacticKey key{layer.tactic, layer.precision};
      if (in_good.count(key)) continue;
      here.insert(key);
      auto& layers_of = where[key];
      if (layers_of.empty()) order.push_back(key);
      if (std::find(layers_of.begin(), layers_of.end(), layer.name) == layers_of.end()) layers_of.push_back(layer.name);
    }
    for (const TacticKey& key : here) ++bad_builds[key];
  }
  for (const TacticKey& key : order)
    if (bad_builds[key] == sets.bad.size()) report.across_layers.push_back({key.first, key.second, where[key]});
}
}  // namespace

TacticDiffReport diff_tactics(const ReplaySets& sets) {
  TacticDiffReport report;
  report.good_replays = sets.good.size();
  report.bad_replays = sets.bad.size();
  check_comparable(sets, report);

  if (sets.good.empty() || sets.bad.empty()) {
    report.undecided = missing_replays_reason(sets);
    return report;
  }

  RecordedErrors recorded_errors = recorded_validation_errors(sets);
  const LayerChoices good_tactics = good_choices(sets);
  BadChoices bad = count_bad_choices(sets, good_tactics, report);
  rank_suspects(bad, recorded_errors, report);
  find_across_layers(sets, good_tactics, report);

  if (report.layers.empty() && bad.counts.empty()) {
    report.undecided =
        "cannot decide: no layer of the bad replays appears in a good replay: the replays come from "
        "different models";
  } else if (report.layers.empty()) {
    report.undecided =
        "cannot decide: every tactic in the bad replays also appears in a good one: the failure does not follow a "
        "single tactic (a combination of tactics, nondeterminism outside the tactic choice, or a flaky check)";
  }
  return report;
}

}  // namespace vkg::debug
