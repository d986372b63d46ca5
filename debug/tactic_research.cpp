#include "debug/tactic_research.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/tactic_replay.h"
#include "runtime/engine/timing_cache.h"

namespace vkg::debug {

namespace fs = std::filesystem;

namespace {

constexpr char kReplayFormat[] = "vkgraphy-tactic-replay";
constexpr char kCacheFormat[] = "vkgraphy-timing-cache";

// The top-level "format" of a JSON file, "" when it is not a JSON object declaring one.
std::string json_format_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string()) return "";
  return j["format"].get<std::string>();
}

// "op=Conv attrs=..." -> "Conv".
std::string op_of_description(const std::string& description) {
  if (description.rfind("op=", 0) != 0) return "";
  return description.substr(3,
                            description.find(' ') == std::string::npos ? std::string::npos : description.find(' ') - 3);
}

using Key = std::tuple<std::string, std::string, std::string>;  // signature, device text, tactic

class Collector {
 public:
  void add_file(const std::string& path, const std::string& format) {
    if (format == kReplayFormat) {
      const TacticReplay replay = load_tactic_replay(path);
      for (const TacticChoice& layer : replay.layers) {
        for (const CandidateTiming& c : layer.candidates) {
          TacticMeasurement m;
          m.device = replay.device;
          m.signature = layer.signature;
          m.op = layer.op;
          m.layers = {layer.name};
          m.tactic = c.tactic;
          m.precision = c.precision;
          if (!c.error && !c.untimed) m.median_ns = c.median_ns;
          if (c.untimed) m.error = "validated, not timed";
          m.samples = c.samples_ns.size();
          m.validation_error = c.validation_error;
          m.error = c.error;
          add(std::move(m), path);
        }
      }
    } else {
      const TimingCache cache = read_timing_cache(path);
      for (const TimingEntry& e : cache.entries()) {
        TacticMeasurement m;
        m.device = e.device;
        m.signature = e.signature;
        m.op = op_of_description(e.description);
        m.description = e.description;
        m.tactic = e.tactic;
        m.precision = e.precision;
        if (!e.rejected) m.median_ns = e.median_ns;
        m.samples = e.samples;
        m.validation_error = e.validation_error;
        if (e.rejected) m.error = "rejected by validation";
        add(std::move(m), path);
      }
    }
  }

  std::vector<TacticMeasurement> take() {
    std::vector<TacticMeasurement> out;
    for (auto& [key, m] : merged_) out.push_back(std::move(m));
    return out;
  }

 private:
  void add(TacticMeasurement m, const std::string& source) {
    m.sources = {source};
    const Key key{m.signature, m.device.describe(), m.tactic};
    auto [it, fresh] = merged_.try_emplace(key, m);
    if (fresh) return;
    TacticMeasurement& have = it->second;
    std::set<std::string> layers(have.layers.begin(), have.layers.end());
    layers.insert(m.layers.begin(), m.layers.end());
    std::vector<std::string> sources = have.sources;
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) sources.push_back(source);
    const std::string op = have.op.empty() ? m.op : have.op;
    const std::string description = have.description.empty() ? m.description : have.description;
    const bool better = m.median_ns && (!have.median_ns || m.samples > have.samples);
    if (better) have = m;
    have.layers.assign(layers.begin(), layers.end());
    have.sources = sources;
    have.op = op;
    have.description = description;
  }

  std::map<Key, TacticMeasurement> merged_;
};

std::string format_ratio(double r) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << r << "x";
  return s.str();
}

}  // namespace

std::vector<TacticMeasurement> collect_tactic_measurements(const std::vector<std::string>& paths) {
  Collector collector;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    VKG_CHECK(fs::exists(status), "'" << path << "': no such file or directory");
    if (!fs::is_directory(status)) {
      const std::string format = json_format_of(path);
      VKG_CHECK(format == kReplayFormat || format == kCacheFormat,
                "'" << path << "': neither a tactic replay nor a timing cache (expected a JSON file with \"format\": "
                    << "\"" << kReplayFormat << "\" or \"" << kCacheFormat << "\", as --save-tactics and "
                    << "--save-timing-cache write)");
      collector.add_file(path, format);
      continue;
    }
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file()) files.push_back(it->path());
    }
    VKG_CHECK(!ec, "'" << path << "': cannot read directory: " << ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const std::string format = json_format_of(file.string());
      if (format != kReplayFormat && format != kCacheFormat) {
        VKG_VERBOSE("skipping '" << file.string() << "': neither a tactic replay nor a timing cache");
        continue;
      }
      collector.add_file(file.string(), format);
    }
  }
  return collector.take();
}

std::vector<SignatureComparison> compare_tactics(const std::vector<TacticMeasurement>& measurements) {
  std::vector<SignatureComparison> out;
  std::map<std::string, size_t> index;  // signature -> position in out
  // Per signature and device (first-seen order): the timed candidates.
  std::map<std::string, std::vector<std::pair<DeviceIdentity, std::vector<const TacticMeasurement*>>>> timed;
  for (const TacticMeasurement& m : measurements) {
    auto [it, fresh] = index.try_emplace(m.signature, out.size());
    if (fresh) out.push_back({m.signature, m.op, m.description, {}, {}, {}, false});
    SignatureComparison& s = out[it->second];
    if (s.op.empty()) s.op = m.op;
    if (s.description.empty()) s.description = m.description;
    for (const std::string& l : m.layers)
      if (std::find(s.layers.begin(), s.layers.end(), l) == s.layers.end()) s.layers.push_back(l);
    if (!m.median_ns) continue;
    auto& devices = timed[m.signature];
    auto d = std::find_if(devices.begin(), devices.end(), [&](const auto& p) { return p.first == m.device; });
    if (d == devices.end()) d = devices.insert(devices.end(), {m.device, {}});
    d->second.push_back(&m);
  }
  for (SignatureComparison& s : out) {
    std::sort(s.layers.begin(), s.layers.end());
    auto& devices = timed[s.signature];
    for (auto& [device, cands] : devices) {
      std::stable_sort(cands.begin(), cands.end(), [](const TacticMeasurement* a, const TacticMeasurement* b) {
        return *a->median_ns < *b->median_ns;
      });
      DeviceWinner w{device, cands.size(), cands[0]->tactic, *cands[0]->median_ns, std::nullopt, 0};
      if (cands.size() > 1) {
        w.runner_up = cands[1]->tactic;
        w.runner_up_ratio = *cands[0]->median_ns > 0 ? *cands[1]->median_ns / *cands[0]->median_ns : 0;
      }
      s.devices.push_back(w);
    }
    for (const DeviceWinner& a : s.devices)
      for (const DeviceWinner& b : s.devices)
        if (a.tactic != b.tactic) s.winners_differ = true;
    if (!s.winners_differ) continue;
    for (const DeviceWinner& here : s.devices) {
      const auto& cands =
          std::find_if(devices.begin(), devices.end(), [&](const auto& p) { return p.first == here.device; })->second;
      for (const DeviceWinner& other : s.devices) {
        if (other.tactic == here.tactic) continue;
        const auto same = std::find_if(cands.begin(), cands.end(),
                                       [&](const TacticMeasurement* m) { return m->tactic == other.tactic; });
        std::string line = other.tactic + " (the winner on " + other.device.device_name + ") ";
        if (same == cands.end())
          line += "was not timed on " + here.device.device_name;
        else
          line += "is " + format_ratio(here.median_ns > 0 ? *(*same)->median_ns / here.median_ns : 0) +
                  " the winner's time on " + here.device.device_name;
        if (std::find(s.cross_device.begin(), s.cross_device.end(), line) == s.cross_device.end())
          s.cross_device.push_back(line);
      }
    }
  }
  return out;
}

}  // namespace vkg::debug
