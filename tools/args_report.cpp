#include "tools/args_report.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/core/logger.h"

namespace vkg::tools {

namespace {

// The command line as typed (from /proc/self/cmdline, which still holds --check), quoted where needed.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out, arg;
  auto flush = [&] {
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? arg : quoted + "'");
    arg.clear();
  };
  for (char c : raw) {
    if (c == '\0')
      flush();
    else
      arg += c;
  }
  if (!arg.empty()) flush();
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string choice_text(const std::string& tactic, Precision p) { return tactic + " (" + precision_name(p) + ")"; }

// Refuses, before the tool runs, a path that cannot be a file: a folder, or one
// under something that is not a folder. (Other failures show when it is written.)
std::string check_report_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "'" + path + "' is a folder, not a file";
  for (fs::path p = fs::path(path).parent_path(); !p.empty(); p = p.parent_path()) {
    if (!fs::exists(p, ec)) {
      if (p == p.parent_path()) break;
      continue;
    }
    if (!fs::is_directory(p, ec)) return "cannot write '" + path + "': '" + p.string() + "' is not a folder";
    break;
  }
  return "";
}

}  // namespace

void ReportArgs::add_to(CLI::App& app, const std::string& tool) {
  tool_ = tool;
  app.add_option("--report", path_,
                 "Write a self-contained HTML page of this run (engine layers, tactics and times, errors, "
                 "iterations) to this file")
      ->type_name("FILE.html")
      ->check(check_report_path);
}

void ReportArgs::set_device(const vk::DeviceInfo& info) {
  report_.device = info.name + (info.driver_info.empty() ? "" : " (" + info.driver_info + ")");
}

void ReportArgs::set_engine(const Engine& engine, const std::string& source, const TacticReplay* replay,
                            const std::vector<std::vector<double>>& layer_ns) {
  debug::ReportEngine e;
  e.source = source;
  const bool profiled = !layer_ns.empty() && !layer_ns[0].empty();
  if (profiled)
    e.time_kind = "device time per layer, median of " + std::to_string(layer_ns[0].size()) + " run(s) (--profile)";
  else if (replay)
    e.time_kind = "the chosen tactic's median time when the engine was built";
  else
    e.time_kind = "not measured (add --profile to measure it)";
  if (!replay)
    e.note =
        "This engine was loaded from a file, which keeps the chosen tactics but not the candidate timings; "
        "build it from the ONNX model (convert, run --vk) with --report to see them.";
  bool any_candidates = false;
  producers_.clear();
  for (size_t l = 0; l < engine.layers.size(); ++l) {
    const EngineLayer& layer = engine.layers[l];
    debug::ReportLayer r;
    r.name = layer.name;
    r.op = layer.op;
    r.tactic = layer.tactic;
    r.precision = precision_name(layer.precision);
    r.nodes = layer.nodes;
    for (int32_t t : layer.outputs)
      if (t >= 0) producers_.emplace(engine.tensors[size_t(t)].name, std::make_pair(l, layer.name));
    const TacticChoice* choice = replay ? replay->find(layer.name) : nullptr;
    if (choice) {
      for (const CandidateTiming& c : choice->candidates) {
        debug::ReportCandidate rc;
        rc.tactic = c.tactic;
        rc.precision = precision_name(c.precision);
        if (!c.error && !c.untimed && !c.rejected) rc.median_ns = c.median_ns;
        rc.validation_error = c.validation_error;
        rc.rejected = c.rejected;
        rc.chosen = c.tactic == choice->tactic && c.precision == choice->precision;
        rc.error = c.error.value_or(c.untimed ? "not timed" : "");
        if (rc.chosen && rc.median_ns && !profiled) r.time_ns = rc.median_ns;
        r.candidates.push_back(std::move(rc));
      }
    }
    any_candidates |= !r.candidates.empty();
    if (profiled && l < layer_ns.size() && !layer_ns[l].empty()) r.time_ns = median(layer_ns[l]);
    e.layers.push_back(std::move(r));
  }
  const bool any_time =
      std::any_of(e.layers.begin(), e.layers.end(), [](const debug::ReportLayer& l) { return l.time_ns.has_value(); });
  if (!any_time && replay) e.time_kind = "not measured (the build timed no candidates; run --profile measures it)";
  if (replay && !any_candidates)
    e.note =
        "The build timed no candidates (optimization level 0, a tactic replay, random tactic selection or a "
        "timing cache without them).";
  report_.engine = std::move(e);
}

void ReportArgs::add_comparisons(const std::vector<PairComparison>& comparisons) {
  size_t max_iteration = 0;
  for (const PairComparison& p : comparisons) max_iteration = std::max(max_iteration, p.iteration);
  for (const PairComparison& p : comparisons) {
    debug::ReportComparison c;
    c.title =
        p.runner_a + " vs. " + p.runner_b + (max_iteration > 0 ? ", iteration " + std::to_string(p.iteration) : "");
    c.metric = "max absolute error";
    c.passed = p.result.passed;
    std::vector<std::pair<size_t, debug::ReportErrorRow>> rows;
    for (const OutputComparison& o : p.result.per_output) {
      debug::ReportErrorRow row{.name = o.name,
                                .detail = "",
                                .error = o.absdiff.max,
                                .rel_error = o.reldiff.max,
                                .introduced = std::nullopt,
                                .inherited = std::nullopt,
                                .tolerance = o.atol,
                                .rel_tolerance = o.rtol,
                                .passed = o.passed,
                                .note = o.failure};
      size_t order = SIZE_MAX;
      if (const auto it = producers_.find(o.name); it != producers_.end()) {
        order = it->second.first;
        if (it->second.second != o.name) row.detail = "layer " + it->second.second;
      }
      rows.emplace_back(order, std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [order, row] : rows) c.rows.push_back(std::move(row));
    report_.comparisons.push_back(std::move(c));
  }
}

void ReportArgs::add_isolation(const debug::IsolationResult& result, double atol, const std::string& stat) {
  debug::ReportComparison c;
  c.title = "Per-layer isolation against the reference";
  c.metric = "total " + stat + " absolute error (chained run)";
  c.passed = result.first_failed < 0;
  for (const debug::LayerIsolation& l : result.layers) {
    debug::ReportErrorRow row;
    row.name = l.layer;
    row.detail = l.tactic + ", " + l.precision;
    row.error = l.total;
    row.rel_error = l.total_rel;
    row.introduced = l.introduced;
    row.inherited = l.inherited;
    row.tolerance = atol;
    row.passed = l.passed;
    row.note = l.note;
    c.rows.push_back(std::move(row));
  }
  report_.comparisons.push_back(std::move(c));
}

void ReportArgs::set_iterations(const std::string& title, const std::vector<debug::IterationRecord>& records,
                                const std::map<int, std::vector<std::string>>& changes,
                                const std::string& changes_heading) {
  report_.iterations_title = title;
  report_.changes_heading = changes_heading;
  report_.iterations.clear();
  for (const debug::IterationRecord& r : records) {
    debug::ReportIteration it;
    it.index = r.index;
    it.description = r.description;
    it.passed = r.passed;
    it.replayed = r.replayed;
    it.artifacts = r.artifacts;
    if (const auto c = changes.find(r.index); c != changes.end()) it.changes = c->second;
    report_.iterations.push_back(std::move(it));
  }
}

void ReportArgs::write() {
  if (!wanted()) return;
  if (report_.title.empty()) report_.title = "vkgraphy " + tool_;
  report_.command_line = command_line();
  report_.date = utc_now();
  debug::write_html_report(path_, report_);
  VKG_INFO("Saved the HTML report to " << path_);
}

std::vector<std::string> tactic_changes(const TacticReplay& first, const TacticReplay& now) {
  std::vector<std::string> out;
  for (const TacticChoice& c : now.layers) {
    const TacticChoice* before = first.find(c.name);
    if (!before)
      out.push_back(c.name + ": " + choice_text(c.tactic, c.precision) + " (not a layer of the first build)");
    else if (before->tactic != c.tactic || before->precision != c.precision)
      out.push_back(c.name + ": " + choice_text(before->tactic, before->precision) + " -> " +
                    choice_text(c.tactic, c.precision));
  }
  return out;
}

}  // namespace vkg::tools
