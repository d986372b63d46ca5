// Argument group: --report FILE.html, the self-contained HTML page of what a
// tool did (debug/html_report.h). The tools hand it what they have: the
// device, the engine with its build's tactic choices and candidate timings,
// per-layer device times (run --profile), output comparisons, debug
// iterations. write() renders whatever was given.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "debug/html_report.h"
#include "debug/iteration_loop.h"
#include "debug/layer_isolation.h"
#include "runtime/data/comparator.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/tactic_replay.h"
#include "runtime/vulkan/device_info.h"

namespace vkg::tools {

class ReportArgs {
 public:
  // Adds --report to `app`; `tool` names the tool in the page's title ("convert", "debug build").
  void add_to(CLI::App& app, const std::string& tool);

  bool wanted() const { return !path_.empty(); }
  // The page being filled; tools may add summary lines.
  debug::Report& report() { return report_; }

  void set_device(const vk::DeviceInfo& info);
  // The engine's layers. `source` says where it came from ("built from m.onnx").
  // `replay`: its build's choices with every candidate's timing and validation
  // error (nullptr for an engine loaded from a file, which keeps none).
  // `layer_ns`: per engine layer, the device time of each run (run --profile), or empty.
  void set_engine(const Engine& engine, const std::string& source, const TacticReplay* replay,
                  const std::vector<std::vector<double>>& layer_ns = {});
  // The comparisons of run: one error chart each, rows in the engine's layer
  // order when an engine was set (so `--vk-outputs mark all` charts the error per layer).
  void add_comparisons(const std::vector<PairComparison>& comparisons);
  // run --isolate-layers: one error chart over the engine's layers, each bar the
  // layer's total error in the chained run with the error it introduced alone
  // marked, checked against `atol`; `stat` names the error statistic.
  void add_isolation(const debug::IsolationResult& result, double atol, const std::string& stat);
  // The iterations of a debug session; `changes` holds, per iteration index,
  // what changed in it (shown under `changes_heading`).
  void set_iterations(const std::string& title, const std::vector<debug::IterationRecord>& records,
                      const std::map<int, std::vector<std::string>>& changes = {},
                      const std::string& changes_heading = "");

  // Writes the page when --report was given (logs where). Throws Error when the file cannot be written.
  void write();

 private:
  std::string tool_;
  std::string path_;
  debug::Report report_;
  std::map<std::string, std::pair<size_t, std::string>> producers_;  // tensor -> (layer index, layer name)
};

// The layers whose tactic or precision in `now` differs from `first`, as
// "conv1: gemm.a.f32 (fp32) -> gemm.b.f16 (fp16)".
std::vector<std::string> tactic_changes(const TacticReplay& first, const TacticReplay& now);

}  // namespace vkg::tools
