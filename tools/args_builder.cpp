#include "tools/args_builder.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "runtime/core/cache_dir.h"
#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/layer_precisions_file.h"
#include "runtime/reference/reference_backend.h"
#include "runtime/vulkan/executor.h"
#include "runtime/vulkan/plan_timer.h"
#include "tools/args_vulkan.h"

namespace vkg::tools {

std::pair<std::string, Precision> parse_layer_precision(const std::string& text) {
  const size_t colon = text.rfind(':');
  VKG_CHECK(colon != std::string::npos && colon > 0,
            "--layer-precisions: expected NAME:PRECISION (e.g. conv1:fp32), got '" << text << "'");
  std::string p = text.substr(colon + 1);
  if (p == "float32") p = "fp32";
  if (p == "float16") p = "fp16";
  const std::optional<Precision> precision = parse_precision(p);
  VKG_CHECK(precision.has_value(), "--layer-precisions: '" << text.substr(colon + 1)
                                                           << "' is not a precision (fp32, fp16) in '" << text << "'");
  return {text.substr(0, colon), *precision};
}

std::string deterministic_cache_path() {
  const std::string dir = vkgraphy_cache_dir();
  return dir.empty() ? "" : dir + "/timing-cache.json";
}

std::unique_ptr<vk::Context> open_vulkan() {
  auto ctx = std::make_unique<vk::Context>(vulkan_device_options());
  VKG_INFO("Vulkan device: " << ctx->device().info().name << " (" << ctx->device().info().driver_info << ")");
  return ctx;
}

void BuilderArgs::add_to(CLI::App& app) {
  CLI::Option_group* g = app.add_option_group("Builder", "Options of the Vulkan engine builder");
  group_ = g;
  g->add_flag("--fp16", fp16_,
              "Let the builder use fp16 tactics (fp16 storage, fp16 or fp32 accumulation); which layers take them: "
              "--fp16-policy");
  g->add_option("--layer-precisions", layer_precisions_,
                "Pin layers to a precision: NAME:fp32 NAME2:fp16 ...; a NAME with * or ? is a pattern, pinning the "
                "matching layers that can take the precision (see --precision-constraints)")
      ->take_all();
  g->add_option("--fp16-policy", fp16_policy_,
                "With --fp16, which layers run in fp16: fastest (by measured time), all (every layer that has an fp16 "
                "tactic, with fp16 arithmetic where one has it: a GPU's fp16 numerics on any device), auto (default: "
                "all on a device whose fp16 arithmetic is slower than fp32, such as lavapipe; fastest elsewhere)")
      ->check(CLI::IsMember({"auto", "fastest", "all"}));
  g->add_option("--load-layer-precisions", load_layer_precisions_,
                "Pin the layers a layer-precisions file names (written by debug precision --save-layer-precisions), "
                "or every layer to the precision and fp16 arithmetic another build chose (its --save-tactics replay "
                "or its engine file: a GPU's fp16 layers on lavapipe); --layer-precisions given as well win, and "
                "the file's precision constraints apply unless --precision-constraints is given")
      ->check(CLI::ExistingFile);
  g->add_option("--precision-constraints", precision_constraints_,
                "How --layer-precisions apply: none (ignored), prefer (default: pinned precision when a tactic has "
                "it), obey (fail when none has)")
      ->check(CLI::IsMember({"none", "prefer", "obey"}));
  g->add_option("--builder-optimization-level", optimization_level_,
                "0: first valid tactic in heuristic order, no timing; 1-5: time more candidates and samples "
                "(5: every tactic)")
      ->check(CLI::Range(0, 5));
  g->add_flag("--no-fusion", no_fusion_,
              "Turn graph optimization off: keep no-op nodes (Identity, Dropout, Reshape...) and fuse no bias or "
              "BatchNormalization into Conv/ConvTranspose/Gemm; every node becomes a layer of its own");
  g->add_option("--disable-rewrite", disabled_rewrites_,
                "Turn one kind of graph rewrite off (repeatable): KIND everywhere, or KIND:NODE only where it would "
                "involve ONNX node NODE (docs/builder.md, \"Rewrite kinds\"). Kinds: " +
                    rewrite_kind_list())
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check([](const std::string& text) {
        try {
          parse_rewrite_switch(text);
          return std::string();
        } catch (const Error& e) {
          return std::string(e.what());
        }
      });
  g->add_flag("--deterministic", deterministic_,
              "The same engine every time: choices follow measurements kept in a default timing cache "
              "($VKGRAPHY_CACHE_DIR, $XDG_CACHE_HOME/vkgraphy or ~/.cache/vkgraphy), and near-ties (within 10% of "
              "the fastest median) go to the fixed heuristic order");
  g->add_option("--tactic-selection", tactic_selection_,
                "fastest (default: by measured time) or random[:SEED] (a random valid tactic per layer)");
  g->add_option("--tactics-allow", allow_, "Only tactics matching one of these globs (e.g. 'gemm.*' '*.f32')")
      ->take_all();
  g->add_option("--tactics-deny", deny_, "No tactic matching one of these globs")->take_all();
  g->add_option("--timing-samples", timing_samples_, "Timed runs per candidate (default: by optimization level)")
      ->check(CLI::Range(1, 1000));
  g->add_flag("--no-prune", no_prune_,
              "Time the candidates the device's cost model says cannot win too (on CPU devices: those whose "
              "shaders synchronize workgroups, where one without serves the layer)");
  g->add_option("--compile-threads", compile_threads_,
                "Threads that create each layer's candidate pipelines before they are timed (default 0: one per core)")
      ->check(CLI::Range(0, 256));
  g->add_option("--compile-workers", compile_workers_,
                "Worker processes that compile each layer's candidates side by side, on drivers that compile one "
                "pipeline at a time in a process (lavapipe); 0: none (default: $VKGRAPHY_COMPILE_WORKERS, else one "
                "per core beyond the first)")
      ->check(CLI::Range(0, 8));
  g->add_option("--save-tactics", save_tactics_, "Write the tactic replay file (choices and every measured time)");
  g->add_option("--load-tactics", load_tactics_, "Force the choices of a tactic replay file");
  g->add_option("--load-timing-cache", load_timing_cache_, "Take measured times from this timing cache");
  g->add_option("--save-timing-cache", save_timing_cache_,
                "Write measured times to this timing cache (merging into an existing file)");
  g->add_flag("--error-on-timing-cache-miss", error_on_cache_miss_,
              "Fail when a layer's tactic would have to be timed (needs a timing cache)");
  g->add_flag("--validate-tactics", validate_,
              "Run the reference backend once on the data loader's first feed and check every candidate tactic on "
              "its layer's real inputs before timing it; candidates beyond the tolerance of their precision are "
              "rejected (logged, and recorded in the replay and the timing cache)");
}

std::vector<std::string> BuilderArgs::given() const {
  std::vector<std::string> out;
  if (group_ == nullptr) return out;
  for (const CLI::Option* o : group_->get_options())
    if (o->count() > 0) out.push_back(o->get_name());
  return out;
}

BuilderConfig BuilderArgs::config() {
  BuilderConfig c;
  c.fp16 = fp16_;
  c.fp16_policy = *parse_fp16_policy(fp16_policy_);
  for (const std::string& text : layer_precisions_) {
    const auto [name, precision] = parse_layer_precision(text);
    VKG_CHECK(c.layer_precisions.emplace(name, precision).second,
              "--layer-precisions names layer '" << name << "' twice");
  }
  if (!load_layer_precisions_.empty()) {
    const LayerPrecisions loaded = load_layer_precisions(load_layer_precisions_);
    for (const auto& [name, precision] : loaded.layers) c.layer_precisions.emplace(name, precision);
    c.layer_arith = loaded.arith;
    if (loaded.constraints) c.constraints = *loaded.constraints;
    VKG_INFO("Loaded " << loaded.layers.size() << " layer precision(s) from " << load_layer_precisions_);
  }
  if (!precision_constraints_.empty()) c.constraints = *parse_precision_constraints(precision_constraints_);
  c.optimization_level = optimization_level_;
  c.deterministic = deterministic_;
  c.prune_for_device = !no_prune_;
  c.fusion = !no_fusion_;
  for (const std::string& text : disabled_rewrites_) c.disabled_rewrites.push_back(parse_rewrite_switch(text));
  if (tactic_selection_ == "random" || tactic_selection_.rfind("random:", 0) == 0) {
    uint64_t seed = 1;
    if (tactic_selection_.size() > 7) {
      const std::string digits = tactic_selection_.substr(7);
      VKG_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos && digits.size() < 20,
                "--tactic-selection: bad seed '" << digits << "' (expected random:SEED with SEED an integer)");
      seed = std::stoull(digits);
    }
    c.random_seed = seed;
  } else {
    VKG_CHECK(tactic_selection_ == "fastest",
              "--tactic-selection must be 'fastest' or 'random[:SEED]', not '" << tactic_selection_ << "'");
  }
  c.tactics_allow = allow_;
  c.tactics_deny = deny_;
  c.timing_samples = timing_samples_;
  if (!load_tactics_.empty()) {
    replay_ = load_tactic_replay(load_tactics_);
    VKG_INFO("Loaded tactic replay " << load_tactics_ << " (" << replay_->layers.size() << " layers)");
    c.replay = &*replay_;
  }
  VKG_CHECK(!error_on_cache_miss_ || !load_timing_cache_.empty(),
            "--error-on-timing-cache-miss needs --load-timing-cache");
  // --deterministic: every choice follows measurements kept in the default timing
  // cache, so timing noise cannot flip a later build (an explicit --load-timing-cache
  // takes its place).
  deterministic_cache_ = deterministic_ && load_timing_cache_.empty() ? deterministic_cache_path() : "";
  if (!load_timing_cache_.empty() || !save_timing_cache_.empty() || !deterministic_cache_.empty()) {
    cache_ = TimingCache{};
    if (!load_timing_cache_.empty()) {
      cache_ = load_timing_cache(load_timing_cache_);
      VKG_INFO("Loaded timing cache " << load_timing_cache_ << " (" << cache_->size() << " entries)");
    } else if (!deterministic_cache_.empty() && std::filesystem::exists(deterministic_cache_)) {
      cache_ = load_timing_cache(deterministic_cache_);
      VKG_VERBOSE("--deterministic: loaded " << cache_->size() << " measurement(s) from " << deterministic_cache_);
    }
    c.timing_cache = &*cache_;
  }
  c.error_on_timing_cache_miss = error_on_cache_miss_;
  c.progress = isatty(STDERR_FILENO) != 0 && Logger::get().enabled(Severity::Info);
  return c;
}

BuildResult BuilderArgs::build(const Graph& graph, vk::Context& ctx, std::vector<std::string> mark_outputs,
                               bool mark_all) {
  BuilderConfig c = config();
  c.mark_outputs = std::move(mark_outputs);
  c.mark_all = mark_all;
  return build_with(graph, ctx, std::move(c));
}

bool is_mark_all(const std::vector<std::string>& v) { return v.size() == 2 && v[0] == "mark" && v[1] == "all"; }
bool is_mark_layers(const std::vector<std::string>& v) { return v.size() == 2 && v[0] == "mark" && v[1] == "layers"; }

namespace {

// The ONNX tensors the layers of `engine` produce, outside If branches and Loop
// bodies, in engine order (the outputs of reformat and constant layers are not ONNX tensors).
std::vector<std::string> layer_output_names(const Engine& engine) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const LayerBlock::Item& item : layer_blocks(engine, "the engine").items) {
    const EngineLayer& layer = engine.layers[item.layer];
    if (layer.nodes.empty()) continue;
    for (int32_t t : layer.outputs)
      if (t >= 0 && seen.insert(engine.tensors[size_t(t)].name).second) names.push_back(engine.tensors[size_t(t)].name);
  }
  return names;
}

// --validate-tactics: the inputs of the data loader's first feed and every node output the
// reference backend computes from them, which the builder checks each candidate tactic against.
TensorMap reference_values(const Graph& graph, const DataLoaderArgs& data) {
  const auto t0 = std::chrono::steady_clock::now();
  TensorMap values = load_or_generate_inputs(graph.inputs, data.options()).at(0);
  TensorMap computed = ReferenceBackend(graph).run(values, graph.node_outputs());
  values.merge(computed);
  uint64_t bytes = 0;
  for (const auto& [name, t] : values) bytes += t.nbytes();
  VKG_INFO("Validating tactics against the reference backend: "
           << values.size() << " tensors (" << bytes / 1e6 << " MB) computed in "
           << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3
           << " ms on the data loader's first feed");
  return values;
}

// The one-line summary of a finished build: what the graph optimizations did, what was timed, validated and compiled.
void log_built_engine(const BuildResult& r, const BuilderConfig& c, double secs, const vk::VulkanPlanTimer* timer) {
  const BuildStats& s = r.stats;
  // Layers as the engine holds them (reformats included), as `Saved engine` and `inspect` count them.
  VKG_FINISH(
      "Built engine in "
      << secs << " s | " << r.engine.layers.size() << " layers (" << s.folded << " nodes folded, " << s.removed
      << " no-ops removed, " << s.fused << " fused, "
      << (s.inputs_converted_on_upload
              ? std::to_string(s.inputs_converted_on_upload) + " input(s) converted on upload, "
              : "")
      << (s.reformats_fused ? std::to_string(s.reformats_fused) + " reformats fused into layers, " : "")
      << (s.outputs_written_f32 ? std::to_string(s.outputs_written_f32) + " output(s) written in fp32, " : "")
      << (s.concats_eliminated ? std::to_string(s.concats_eliminated) + " concats eliminated, " : "")
      << (s.copies_eliminated ? std::to_string(s.copies_eliminated) + " copies made views, " : "") << s.reformats
      << " reformats) | " << s.candidates_timed << " tactic(s) timed in " << s.layers_timed << " layer(s), "
      << s.layers_reused << " layer(s) with an identical layer's timings, " << s.layers_cached
      << " layer(s) from the timing cache"
      << (s.candidates_pruned ? ", " + std::to_string(s.candidates_pruned) + " pruned for the device (--no-prune)" : "")
      << (c.validation_values ? " | " + std::to_string(s.candidates_validated) + " candidate(s) validated in " +
                                    std::to_string(s.layers_validated) + " layer(s), " +
                                    std::to_string(s.candidates_rejected) + " rejected"
                              : "")
      << (timer ? " | " + std::to_string(timer->pipelines_compiled()) + " pipelines" : "")
      << (timer && timer->workers().started()
              ? " (" + std::to_string(timer->workers().compiled_by_workers()) + " compiled by " +
                    std::to_string(timer->workers().started()) + " worker process(es), " +
                    std::to_string(timer->workers().compiled_here()) + " here)"
              : ""));
}

// --deterministic: extends the default timing cache; a failure only costs later builds their stability.
void keep_deterministic_measurements(const std::string& path, const TimingCache& cache) {
  try {
    const size_t held = save_timing_cache(path, cache);
    VKG_VERBOSE("--deterministic: " << held << " measurement(s) kept in " << path);
  } catch (const Error& e) {
    VKG_WARNING("--deterministic: could not keep this build's measurements ("
                << e.what() << "); a later build may choose differently");
  }
}

// --save-timing-cache: merges this build's measurements into the file.
void write_timing_cache(const std::string& path, const TimingCache& cache) {
  const size_t held = save_timing_cache(path, cache);
  VKG_INFO("Saved timing cache to " << path << " (" << held << " entries"
                                    << (held != cache.size() ? ", " + std::to_string(cache.size()) +
                                                                   " from this build merged into the file's"
                                                             : std::string())
                                    << ")");
}

}  // namespace

BuildResult BuilderArgs::build_for_outputs(const Graph& graph, vk::Context& ctx,
                                           const std::vector<std::string>& vk_outputs,
                                           std::vector<std::string>* marked) {
  if (is_mark_all(vk_outputs)) return build(graph, ctx, {}, true);
  if (!is_mark_layers(vk_outputs)) return build(graph, ctx, vk_outputs);
  const BuildResult first = build_with(graph, ctx, config(), false);
  std::vector<std::string> outputs = layer_output_names(first.engine);
  VKG_INFO("--vk-outputs mark layers: marking the outputs of " << outputs.size()
                                                               << " tensor(s) the engine's layers produce");
  BuilderConfig c = config();
  c.mark_outputs = outputs;
  c.replay = &first.replay;
  if (marked) *marked = std::move(outputs);
  return build_with(graph, ctx, std::move(c));
}

BuildResult BuilderArgs::build_with(const Graph& graph, vk::Context& ctx, BuilderConfig c, bool write_files) {
  const vk::DeviceInfo& info = ctx.device().info();
  if (validate_) {
    VKG_CHECK(data_ != nullptr, "--validate-tactics: this tool has no data loader to feed the reference run");
    if (validated_graph_ != &graph) {
      validation_values_ = reference_values(graph, *data_);
      validated_graph_ = &graph;
    }
    c.validation_values = &*validation_values_;
    c.faulty_tactics = vk::faulty_tactics_from_env();
    c.faulty_layers = vk::faulty_layers_from_env();
  }
  std::unique_ptr<vk::VulkanPlanTimer> timer;
  if (info.timestamps())
    timer = std::make_unique<vk::VulkanPlanTimer>(ctx.device(), std::nullopt, compile_threads_, compile_workers_);
  VKG_START("Building engine for " << info.name << " | optimization level " << c.optimization_level
                                   << (c.fp16 ? " | fp16" : "") << (c.deterministic ? " | deterministic" : "")
                                   << (c.random_seed ? " | random tactics (seed " + std::to_string(*c.random_seed) + ")"
                                                     : ""));
  const auto t0 = std::chrono::steady_clock::now();
  BuildResult r = build_engine(graph, c, info, device_identity(info), timer.get());
  vk::add_rewrite_faults(r.engine, r.rewrites, vk::faulty_rewrites_from_env(), info);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ctx.check_validation("the engine build");
  log_built_engine(r, c, secs, timer.get());
  if (write_files && !save_tactics_.empty()) {
    save_tactic_replay(save_tactics_, r.replay);
    VKG_INFO("Saved tactic replay to " << save_tactics_);
  }
  if (!deterministic_cache_.empty()) keep_deterministic_measurements(deterministic_cache_, *cache_);
  if (write_files && !save_timing_cache_.empty()) write_timing_cache(save_timing_cache_, *cache_);
  return r;
}

}  // namespace vkg::tools
