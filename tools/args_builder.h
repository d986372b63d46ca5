// Argument group: the engine builder's options (Polygraphy's TensorRT config
// args, in vkgraphy's terms), shared by `convert`, `run --vk` and the debug
// tools: precision (--fp16, --layer-precisions, --precision-constraints),
// tactic choice (--builder-optimization-level, --deterministic,
// --tactic-selection, --tactics-allow/--tactics-deny), replay files
// (--save-tactics/--load-tactics) and the timing cache
// (--load-timing-cache/--save-timing-cache/--error-on-timing-cache-miss).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/builder.h"
#include "runtime/engine/engine.h"
#include "runtime/vulkan/context.h"
#include "tools/args_data_loader.h"

namespace vkg::tools {

class BuilderArgs {
 public:
  void add_to(CLI::App& app);

  // The parsed configuration. Loads the replay and the timing cache the
  // options name (a bad replay throws; a bad cache is a warning and a miss).
  BuilderConfig config();
  // Builds `graph` on `ctx`'s device with this configuration, logs a summary,
  // and writes the files asked for (--save-tactics, --save-timing-cache).
  BuildResult build(const Graph& graph, vk::Context& ctx, std::vector<std::string> mark_outputs = {},
                    bool mark_all = false);
  // The same with a configuration the caller adjusted (the debug tools pin layers per iteration).
  // Without `write_files`, nothing is saved (a build made only to learn the layers).
  BuildResult build_with(const Graph& graph, vk::Context& ctx, BuilderConfig config, bool write_files = true);
  // Builds with the engine outputs --vk-outputs names: tensor names, "mark all" (every tensor, so nothing
  // fuses) or "mark layers" (the output of every layer as a plain build makes them: a first build learns
  // the layers, the second marks their outputs and replays the first's tactics, so neither fusion nor
  // tactics change; `marked` receives those tensors). Files are written once, for the engine returned.
  BuildResult build_for_outputs(const Graph& graph, vk::Context& ctx, const std::vector<std::string>& vk_outputs,
                                std::vector<std::string>* marked = nullptr);

  // The data loader options of the tool: --validate-tactics runs the reference
  // backend on their first feed (tools without them reject --validate-tactics).
  void use_data_loader(const DataLoaderArgs& data) { data_ = &data; }

  bool fp16() const { return fp16_; }
  // The builder options given on the command line ("--fp16", ...), for warning
  // that they have no effect (on an engine file).
  std::vector<std::string> given() const;
  // Whether --precision-constraints was given (tools with another default use theirs otherwise).
  bool precision_constraints_given() const { return !precision_constraints_.empty(); }

 private:
  CLI::Option_group* group_ = nullptr;
  bool fp16_ = false;
  std::vector<std::string> layer_precisions_;
  std::string load_layer_precisions_;
  std::string precision_constraints_;
  std::string fp16_policy_ = "auto";
  std::string save_tactics_, load_tactics_;
  std::string save_timing_cache_, load_timing_cache_;
  std::string deterministic_cache_;  // --deterministic: the default timing cache this build reads and extends
  bool error_on_cache_miss_ = false;
  int optimization_level_ = 3;
  bool deterministic_ = false;
  bool no_fusion_ = false;
  std::vector<std::string> disabled_rewrites_;  // --disable-rewrite KIND[:NODE]
  std::string tactic_selection_ = "fastest";
  std::vector<std::string> allow_, deny_;
  int timing_samples_ = 0;
  unsigned compile_threads_ = 0;
  std::optional<unsigned> compile_workers_;  // --compile-workers; default: vk::default_compile_workers()
  bool no_prune_ = false;
  bool validate_ = false;
  const DataLoaderArgs* data_ = nullptr;
  const Graph* validated_graph_ = nullptr;  // the graph validation_values_ belong to
  std::optional<TensorMap> validation_values_;

  std::optional<TacticReplay> replay_;
  std::optional<TimingCache> cache_;
};

// Where --deterministic keeps its measurements (docs/builder.md, "Deterministic
// builds"): timing-cache.json in vkgraphy_cache_dir() ($VKGRAPHY_CACHE_DIR, else
// $XDG_CACHE_HOME/vkgraphy, else ~/.cache/vkgraphy); "" when VKGRAPHY_CACHE_DIR is set but
// empty (persistence off) or no home is known.
std::string deterministic_cache_path();

// --vk-outputs / --onnx-outputs "mark all", and --vk-outputs "mark layers".
bool is_mark_all(const std::vector<std::string>& v);
bool is_mark_layers(const std::vector<std::string>& v);

// Parses "name:fp32" / "name:fp16" (also float32/float16); throws Error on bad text.
std::pair<std::string, Precision> parse_layer_precision(const std::string& text);

// Opens the device the global --device/--vk-validation options select.
std::unique_ptr<vk::Context> open_vulkan();

}  // namespace vkg::tools
