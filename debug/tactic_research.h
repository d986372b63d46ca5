// Tactic research (`vkgraphy inspect tactics`): every candidate's measurement
// from any number of tactic replays and timing caches, from any number of
// devices, grouped by layer signature, and which tactic wins on each device
// and by how much. Plain data; the tool (tools/inspect_tactics.cpp) prints and
// exports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/layer_signature.h"

namespace vkg::debug {

// One candidate measured (or rejected) for one layer signature on one device.
struct TacticMeasurement {
  DeviceIdentity device;
  std::string signature;            // LayerSignature::key()
  std::string op;                   // the layer's op ("Conv"), "" when no file says
  std::string description;          // the signature text (timing caches), "" from replays
  std::vector<std::string> layers;  // names of the layers with this signature (replays), sorted
  std::string tactic;
  Precision precision = Precision::FP32;
  std::optional<double> median_ns;  // unset: the candidate failed or was rejected
  uint64_t samples = 0;
  std::optional<double> validation_error;  // --validate-tactics
  std::optional<std::string> error;        // why it has no time
  std::vector<std::string> sources;        // the files it came from

  bool operator==(const TacticMeasurement&) const = default;
};

// Reads every replay and timing cache under `paths` (files, or folders searched
// recursively in sorted order, where other files are skipped). A file named
// directly must be one of the two (Error otherwise, as for a missing path or a
// malformed file). Measurements of the same (device, signature, tactic) from
// several files become one: the timed one with the most samples wins, and the
// layer names and sources are merged. Ordered by signature, device, tactic.
std::vector<TacticMeasurement> collect_tactic_measurements(const std::vector<std::string>& paths);

// The best candidates of one signature on one device.
struct DeviceWinner {
  DeviceIdentity device;
  size_t timed = 0;  // candidates with a time
  std::string tactic;
  double median_ns = 0;
  std::optional<std::string> runner_up;  // the second fastest, when another was timed
  double runner_up_ratio = 0;            // its median / the winner's

  bool operator==(const DeviceWinner&) const = default;
};

// What the devices chose for one signature.
struct SignatureComparison {
  std::string signature;
  std::string op;
  std::string description;
  std::vector<std::string> layers;
  std::vector<DeviceWinner> devices;  // devices with at least one timed candidate, in first-seen order
  // Set when two devices' winners differ: for each device, how much slower
  // each other device's winner runs there ("conv.direct.f32 is 2.41x the winner
  // on NVIDIA H100"), or that it did not run there.
  std::vector<std::string> cross_device;
  bool winners_differ = false;

  bool operator==(const SignatureComparison&) const = default;
};

// Groups `measurements` by signature (in their order) and finds each device's winner.
std::vector<SignatureComparison> compare_tactics(const std::vector<TacticMeasurement>& measurements);

}  // namespace vkg::debug
