// `vkgraphy inspect diff-tactics` (and `debug diff-tactics`): which tactics the
// failing builds chose and the passing ones never did (Polygraphy's
// `inspect diff-tactics`). The analysis lives in debug/diff_tactics.h.
#include "debug/diff_tactics.h"

#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "tools/args_report.h"
#include "tools/tools.h"

namespace vkg::tools {

namespace {

struct DiffTacticsArgs {
  std::string dir;
  std::vector<std::string> good;
  std::vector<std::string> bad;
  ReportArgs report;
};

// --report: the suspects as a table, the blamed tactic marked.
void write_report(DiffTacticsArgs& args, const debug::TacticDiffReport& report) {
  if (!args.report.wanted()) return;
  debug::Report& page = args.report.report();
  page.summary.emplace_back(
      "replays", std::to_string(report.good_replays) + " good, " + std::to_string(report.bad_replays) + " bad");
  debug::ReportTable t;
  t.id = "suspects";
  t.title = "Tactics seen only in bad replays";
  t.columns = {"layer", "op", "tactic", "precision", "bad replays", "validation error", "blamed"};
  const std::optional<debug::TacticDiffReport::Blame> blame = report.single_suspect();
  for (const auto& layer : report.layers) {
    for (const auto& s : layer.suspects) {
      std::ostringstream error;
      if (s.validation_error) error << std::setprecision(3) << *s.validation_error;
      const bool blamed = blame && blame->tactic == &s;
      t.rows.push_back({layer.layer, layer.op, s.tactic, precision_name(s.precision),
                        std::to_string(s.bad_replays) + "/" + std::to_string(report.bad_replays), error.str(),
                        blamed ? "yes" : ""});
    }
  }
  std::string notes = report.undecided.value_or("");
  for (const std::string& w : report.warnings) notes += (notes.empty() ? "" : " ") + w;
  t.note = notes;
  page.tables.push_back(std::move(t));
  args.report.write();
}

std::string describe_suspect(const debug::SuspectTactic& s, size_t bad_replays) {
  std::ostringstream text;
  text << s.tactic << " (" << precision_name(s.precision) << ") in " << s.bad_replays << "/" << bad_replays
       << " bad replay(s)";
  if (s.validation_error) text << ", validation error " << std::setprecision(3) << *s.validation_error;
  return text.str();
}

int diff_tactics_tool(DiffTacticsArgs& args) {
  if (args.dir.empty() && args.good.empty() && args.bad.empty()) throw CLI::RequiredError("--dir or --good/--bad");
  const debug::ReplaySets sets = args.dir.empty() ? debug::collect_replays(args.good, args.bad)
                                                  : debug::collect_replays_from_artifact_dir(args.dir);
  if (args.dir.empty()) {
    const auto from = [](const std::string& source) { return source.empty() ? "" : " from " + source; };
    VKG_INFO("Loaded " << sets.good.size() << " good tactic replay(s)" << from(sets.good_source) << " and "
                       << sets.bad.size() << " bad tactic replay(s)" << from(sets.bad_source));
  } else {
    VKG_INFO("Loaded " << sets.good.size() << " good tactic replay(s) and " << sets.bad.size()
                       << " bad tactic replay(s) from " << args.dir);
  }

  const debug::TacticDiffReport report = debug::diff_tactics(sets);
  write_report(args, report);
  for (const auto& warning : report.warnings) VKG_WARNING(warning);
  if (!report.layers_only_in_bad.empty()) {
    std::string list;
    for (const auto& name : report.layers_only_in_bad) list += (list.empty() ? "'" : ", '") + name + "'";
    VKG_WARNING("layer(s) " << list
                            << " appear in bad replays but in no good replay (the replays come from different "
                               "models); they are not compared");
  }
  if (report.undecided) {
    VKG_ERROR(*report.undecided);
    return kExitDebugNotFound;
  }

  VKG_INFO("Found potentially bad tactics:");
  for (const auto& layer : report.layers) {
    std::string list;
    for (const auto& s : layer.suspects) list += (list.empty() ? "" : ", ") + describe_suspect(s, report.bad_replays);
    VKG_INFO("Layer: " << layer.layer << "\n    Tactics seen only in bad replays: " << list);
  }
  if (const std::optional<debug::TacticDiffReport::Blame> blame = report.single_suspect()) {
    VKG_INFO("The failure follows tactic "
             << blame->tactic->tactic << " (layer '" << blame->layer->layer << "')"
             << (blame->ranked_by_error ? ": every bad build chose it and others, and its recorded "
                                          "validation error is the largest"
                                        : ""));
  } else if (report.across_layers.size() == 1) {
    const debug::TacticDiffReport::AcrossLayers& a = report.across_layers.front();
    std::string layers;
    for (const std::string& l : a.layers) layers += (layers.empty() ? "'" : ", '") + l + "'";
    VKG_INFO("The failure follows tactic " << a.tactic << " (" << precision_name(a.precision)
                                           << ") in whichever layer runs it: every bad build chose it for some layer ("
                                           << layers << ") and no good build chose it for any");
  } else if (const auto every = report.in_every_bad_replay(); every.size() > 1) {
    std::string list;
    for (const auto& b : every) list += (list.empty() ? "" : ", ") + b.tactic->tactic + " ('" + b.layer->layer + "')";
    VKG_WARNING(every.size() << " tactics were chosen by every bad build and by no good one: " << list
                             << ". Run more iterations to tell them apart");
  }
  return kExitSuccess;
}

}  // namespace

void add_diff_tactics_tool(CLI::App& parent) {
  auto args = std::make_shared<DiffTacticsArgs>();
  CLI::App* cmd =
      parent.add_subcommand("diff-tactics",
                            "Find the tactics to blame: those chosen in failing builds' tactic replays and never in "
                            "passing ones");
  cmd->fallthrough();
  CLI::Option* dir = cmd->add_option(
      "--dir", args->dir,
      "Folder with good/ and bad/ subfolders of tactic replays (as `debug build --artifacts` sorts them)");
  CLI::Option* good =
      cmd->add_option("--good", args->good, "Tactic replays of passing builds: files, or folders searched recursively")
          ->take_all();
  CLI::Option* bad =
      cmd->add_option("--bad", args->bad, "Tactic replays of failing builds: files, or folders searched recursively")
          ->take_all();
  dir->excludes(good)->excludes(bad);
  args->report.add_to(*cmd, "diff-tactics");
  cmd->callback([args] { set_exit_code(diff_tactics_tool(*args)); });
}

}  // namespace vkg::tools
