// `vkgraphy inspect tactics FILES...`: tactic research across devices. Reads
// tactic replays and timing caches (debug/tactic_research.h), prints each
// layer signature's winner per device and how the devices differ, and exports
// every measurement with --csv or --json.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "debug/tactic_research.h"
#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct InspectTacticsArgs {
  std::vector<std::string> paths;
  std::string csv, json;
  std::vector<std::string> ops;
  bool candidates = false;
};

std::string format_ns(double ns) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(ns >= 1e6 ? 3 : 1) << (ns >= 1e6 ? ns / 1e6 : ns / 1e3)
    << (ns >= 1e6 ? " ms" : " us");
  return s.str();
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

// RFC 4180: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number_text(double v) {
  std::ostringstream s;
  s << std::setprecision(17) << v;
  return s.str();
}

std::string to_csv(const std::vector<debug::TacticMeasurement>& measurements) {
  std::string out =
      "device,vendor_id,device_id,driver_version,vkgraphy_version,signature,op,layers,tactic,precision,median_ns,"
      "samples,validation_error,error,sources\n";
  for (const debug::TacticMeasurement& m : measurements) {
    const std::vector<std::string> fields = {
        m.device.device_name,
        std::to_string(m.device.vendor_id),
        std::to_string(m.device.device_id),
        m.device.driver_version,
        m.device.vkgraphy_version,
        m.signature,
        m.op,
        join(m.layers, ";"),
        m.tactic,
        precision_name(m.precision),
        m.median_ns ? number_text(*m.median_ns) : "",
        std::to_string(m.samples),
        m.validation_error ? number_text(*m.validation_error) : "",
        m.error.value_or(""),
        join(m.sources, ";"),
    };
    std::string line;
    for (const std::string& f : fields) {
      if (!line.empty()) line += ',';
      line += csv_field(f);
    }
    out += line + "\n";
  }
  return out;
}

std::string to_json(const std::vector<debug::TacticMeasurement>& measurements,
                    const std::vector<debug::SignatureComparison>& comparisons) {
  using Json = nlohmann::ordered_json;
  Json root = Json::object();
  root["format"] = "vkgraphy-tactic-research";
  root["version"] = 1;
  Json& ms = root["measurements"] = Json::array();
  for (const debug::TacticMeasurement& m : measurements) {
    Json j = Json::object();
    j["device"] = device_identity_to_json(m.device);
    j["signature"] = m.signature;
    j["op"] = m.op;
    if (!m.description.empty()) j["description"] = m.description;
    j["layers"] = m.layers;
    j["tactic"] = m.tactic;
    j["precision"] = precision_name(m.precision);
    if (m.median_ns) j["median_ns"] = *m.median_ns;
    j["samples"] = m.samples;
    if (m.validation_error) j["validation_error"] = validation_error_json(*m.validation_error);
    if (m.error) j["error"] = *m.error;
    j["sources"] = m.sources;
    ms.push_back(std::move(j));
  }
  Json& ss = root["signatures"] = Json::array();
  for (const debug::SignatureComparison& s : comparisons) {
    Json j = Json::object();
    j["signature"] = s.signature;
    j["op"] = s.op;
    j["layers"] = s.layers;
    Json& devices = j["devices"] = Json::array();
    for (const debug::DeviceWinner& w : s.devices) {
      Json d = Json::object();
      d["device"] = device_identity_to_json(w.device);
      d["timed"] = w.timed;
      d["winner"] = w.tactic;
      d["median_ns"] = w.median_ns;
      if (w.runner_up) {
        d["runner_up"] = *w.runner_up;
        d["runner_up_ratio"] = w.runner_up_ratio;
      }
      devices.push_back(std::move(d));
    }
    j["winners_differ"] = s.winners_differ;
    j["cross_device"] = s.cross_device;
    ss.push_back(std::move(j));
  }
  return root.dump(2) + "\n";
}

int inspect_tactics(const InspectTacticsArgs& args) {
  std::vector<debug::TacticMeasurement> measurements = debug::collect_tactic_measurements(args.paths);
  if (!args.ops.empty()) {
    std::erase_if(measurements, [&](const debug::TacticMeasurement& m) {
      return std::find(args.ops.begin(), args.ops.end(), m.op) == args.ops.end();
    });
  }
  const std::vector<debug::SignatureComparison> comparisons = debug::compare_tactics(measurements);
  std::set<std::string> devices, files;
  for (const debug::TacticMeasurement& m : measurements) {
    devices.insert(m.device.describe());
    files.insert(m.sources.begin(), m.sources.end());
  }
  VKG_INFO("Loaded " << measurements.size() << " measurement(s) of " << comparisons.size() << " layer signature(s) on "
                     << devices.size() << " device(s) from " << files.size() << " file(s)");
  size_t differ = 0;
  for (const debug::SignatureComparison& s : comparisons) {
    std::ostringstream text;
    text << "Signature " << s.signature << " | " << (s.op.empty() ? "?" : s.op);
    if (!s.layers.empty()) text << " | layers: " << join(s.layers, ", ");
    if (!s.description.empty()) text << "\n    " << s.description;
    if (s.devices.empty()) text << "\n    no candidate has a time";
    for (const debug::DeviceWinner& w : s.devices) {
      text << "\n    " << std::left << std::setw(40) << w.device.device_name << " " << std::setw(3) << w.timed
           << " timed  winner " << std::setw(32) << w.tactic << " " << std::setw(10) << format_ns(w.median_ns);
      if (w.runner_up)
        text << "  next " << *w.runner_up << " (" << std::fixed << std::setprecision(2) << w.runner_up_ratio << "x)";
      if (args.candidates) {
        for (const debug::TacticMeasurement& m : measurements) {
          if (m.signature != s.signature || !(m.device == w.device)) continue;
          text << "\n        " << std::setw(36) << m.tactic << " "
               << (m.median_ns ? format_ns(*m.median_ns) : "no time: " + m.error.value_or("?"));
          if (m.validation_error) text << "  validation error " << std::setprecision(3) << *m.validation_error;
        }
      }
    }
    if (s.winners_differ) {
      ++differ;
      for (const std::string& line : s.cross_device) text << "\n    different winners: " << line;
    }
    VKG_INFO(text.str());
  }
  VKG_INFO("Summary: " << comparisons.size() << " layer signature(s) on " << devices.size() << " device(s); " << differ
                       << " with different winners across devices");
  if (!args.csv.empty()) {
    write_file_atomically(args.csv, to_csv(measurements), "CSV file");
    VKG_INFO("Wrote " << measurements.size() << " measurement(s) to " << args.csv);
  }
  if (!args.json.empty()) {
    write_file_atomically(args.json, to_json(measurements, comparisons), "JSON file");
    VKG_INFO("Wrote " << measurements.size() << " measurement(s) to " << args.json);
  }
  return kExitSuccess;
}

}  // namespace

void add_inspect_tactics(CLI::App& inspect) {
  auto args = std::make_shared<InspectTacticsArgs>();
  CLI::App* cmd = inspect.add_subcommand(
      "tactics",
      "Tactic research: every candidate's time per layer signature from tactic replays and timing caches "
      "of any number of devices, each device's winner, and where the devices differ");
  cmd->fallthrough();
  cmd->add_option("paths", args->paths, "Tactic replays and timing caches: files, or folders searched recursively")
      ->required()
      ->take_all();
  cmd->add_option("--csv", args->csv, "Write every measurement to this CSV file");
  cmd->add_option("--json", args->json, "Write every measurement and each signature's comparison to this JSON file");
  cmd->add_option("--op", args->ops, "Only layers of these ops (e.g. Conv MatMul)")->take_all();
  cmd->add_flag("--candidates", args->candidates, "List every candidate of every device, fastest first");
  cmd->callback([args] { set_exit_code(inspect_tactics(*args)); });
}

}  // namespace vkg::tools
