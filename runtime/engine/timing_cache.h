// The timing cache (--save-timing-cache / --load-timing-cache): measured tactic
// times keyed by device identity, layer signature and tactic, so a rebuild does
// not time a layer again. A cache is an optimisation: loading it fails soft
// (a bad file is an empty cache and a warning, never an error). Format:
// docs/tactic-files.md.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/engine/layer_signature.h"

namespace vkg {

// One measurement: tactic `tactic` on a layer with signature `signature`, on `device`.
struct TimingEntry {
  DeviceIdentity device;
  std::string signature;    // LayerSignature::key()
  std::string description;  // LayerSignature::canonical_text(), for people reading the file
  std::string tactic;
  Precision precision = Precision::FP32;
  double median_ns = 0;
  uint64_t samples = 0;  // how many timed samples the median is over
  // --validate-tactics: the error measured against the reference (tactic_validation.h);
  // a rejected candidate was not timed (median_ns and samples are 0).
  std::optional<double> validation_error{};
  bool rejected = false;

  bool operator==(const TimingEntry&) const = default;
};

class TimingCache {
 public:
  // The entry for (device, signature key, tactic), or nullopt. Counts a hit or
  // a miss. Entries measured on any other device identity never match, nor do
  // entries of rejected (untimed) candidates.
  std::optional<TimingEntry> lookup(const DeviceIdentity& device, const std::string& key,
                                    const std::string& tactic) const;
  // Adds an entry, replacing one with the same device, signature and tactic.
  void record(const TimingEntry& entry);
  // Adds every entry of `newer`; where both hold the same device, signature
  // and tactic, the entry of `newer` wins.
  void merge(const TimingCache& newer);

  size_t size() const { return entries_.size(); }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }
  // Every entry, ordered by device, signature and tactic.
  std::vector<TimingEntry> entries() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // device text, signature, tactic
  static Key key_of(const DeviceIdentity& device, const std::string& signature, const std::string& tactic);

  std::map<Key, TimingEntry> entries_;
  mutable size_t hits_ = 0;
  mutable size_t misses_ = 0;
};

// Reads a timing cache. Never throws: a missing, unreadable, corrupt,
// other-format or other-version file gives an empty cache and a warning saying
// why; an individual malformed entry is skipped with a warning.
TimingCache load_timing_cache(const std::string& path);

// Reads a timing cache loudly, for tools that inspect caches a user names
// (`inspect tactics`): throws Error naming the file and the problem where
// load_timing_cache would warn. Malformed entries are still skipped with a warning.
TimingCache read_timing_cache(const std::string& path);

// Writes `cache` whole-or-nothing. With merge_existing, entries already in a
// valid file at `path` are kept unless `cache` has a newer measurement of the
// same device, signature and tactic (an invalid file there is replaced, with a
// warning). Returns the number of entries the file holds. Throws Error only if
// the file cannot be written.
size_t save_timing_cache(const std::string& path, const TimingCache& cache, bool merge_existing = true);

// The cache as JSON text (what save_timing_cache writes without merging).
std::string timing_cache_to_json_text(const TimingCache& cache);

}  // namespace vkg
