// The engine builder (DESIGN.md, "The builder"): turns an imported Graph into
// an Engine for one device. For every layer it asks each candidate tactic for
// a plan, times the plans on the device (or takes the choice from a replay, the
// timing cache, a random draw or the heuristic order), keeps the fastest by
// median and records every measurement in a tactic replay. Free of Vulkan
// headers: the device is a plain-data DeviceProfile (device_profile.h) and
// device time comes through the PlanTimer interface (runtime/vulkan/plan_timer.h
// on a real device, a fake one in tests). The steps of a build live in
// runtime/engine/builder/, one file each (builder_impl.h lists them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/engine/engine.h"
#include "runtime/engine/rewrites.h"
#include "runtime/engine/tactic.h"
#include "runtime/engine/tactic_replay.h"
#include "runtime/engine/timing_cache.h"

namespace vkg {

// Device time of a plan, measured by running it.
class PlanTimer {
 public:
  virtual ~PlanTimer() = default;
  struct Buffer {
    StorageType storage = StorageType::F32;
    uint64_t elements = 0;
  };
  // Runs `plan` with scratch inputs/outputs of the given forms: `warmup` runs,
  // then up to `samples` timed runs (fewer when one run is slow). Returns the
  // time of each timed run in nanoseconds. Throws Error when the plan cannot run.
  // `known_run_ns`: a run's time measured before (the builder's later passes over a
  // layer's candidates), which spares the timer the probe run it would otherwise
  // take to size the samples; 0 when none was.
  virtual std::vector<double> time(const LayerPlan& plan, const std::vector<Buffer>& inputs,
                                   const std::vector<Buffer>& outputs, int warmup, int samples,
                                   double known_run_ns) = 0;
  // Runs `plan` once on `inputs` (each in its storage form: float32, float16 or
  // int32; an empty Tensor for an absent or constant input) and returns every
  // output in the storage form `outputs` gives. With `inject_fault` the outputs
  // are then overwritten as the fault switches (VKGRAPHY_FAULTY_TACTICS) do in
  // an engine. Throws Error when the plan cannot run; the default implementation
  // (a timer that only times) always does.
  virtual std::vector<Tensor> run(const LayerPlan& plan, const std::vector<Tensor>& inputs,
                                  const std::vector<Buffer>& outputs, bool inject_fault);
  // Readies the pipelines of plans about to be timed, all at once, so that a timer that can
  // compiles them on every core; time() compiles whatever is still missing. Default: nothing.
  virtual void compile(const std::vector<const LayerPlan*>& plans);
};

enum class PrecisionConstraints { None, Prefer, Obey };
const char* precision_constraints_name(PrecisionConstraints c);
std::optional<PrecisionConstraints> parse_precision_constraints(const std::string& text);

// A --layer-precisions key is a node name, or a pattern when it holds '*' or '?'.
bool is_layer_pattern(const std::string& key);
// Whether the --layer-precisions key names or matches `node`.
bool layer_precision_matches(const std::string& key, const std::string& node);

// How --fp16 chooses between fp16 and fp32 for the layers nothing pins.
enum class Fp16Policy {
  Auto,     // All on a device whose fp16 arithmetic is slower than its fp32 (DeviceProfile::fp16_slower:
            // lavapipe), Fastest elsewhere
  Fastest,  // by measured time, as TensorRT's --fp16
  All,      // every layer that has an fp16 tactic runs in fp16, with fp16 arithmetic (.f16 tactics) where
            // one has it: the numerics an fp16 build on a GPU has, for accuracy work on any device
};
const char* fp16_policy_name(Fp16Policy p);  // "auto", "fastest", "all"
std::optional<Fp16Policy> parse_fp16_policy(const std::string& text);

struct BuilderConfig {
  bool fp16 = false;                                  // let fp16 tactics compete (needs device fp16 support)
  Fp16Policy fp16_policy = Fp16Policy::Auto;          // --fp16-policy
  std::map<std::string, Precision> layer_precisions;  // --layer-precisions
  // The arithmetic of fp16 layers by node name (Arith::F16 or F16Acc32), from another build's replay
  // or engine (--load-layer-precisions): an fp16 layer takes a tactic of that arithmetic where one serves it.
  std::map<std::string, Arith> layer_arith;
  // How layer_precisions apply: None ignores them (a warning), Prefer uses the
  // pinned precision when a tactic has it (else warns), Obey fails.
  PrecisionConstraints constraints = PrecisionConstraints::Prefer;
  int optimization_level = 3;              // 0..5: 0 times nothing (first valid tactic in heuristic order)
  // Leave out of timing the candidates the device's cost model says cannot win: on a CPU device
  // (lavapipe), those whose shaders synchronize a workgroup, where one without serves the layer
  // (builder.md, "Candidates a CPU device cannot win"). false: --no-prune.
  bool prune_for_device = true;
  bool deterministic = false;              // break near-ties by heuristic order instead of by measured time
  double tie_margin = 0.10;                // near-tie: within this fraction of the fastest median
  std::optional<uint64_t> random_seed;     // --tactic-selection random[:SEED]
  std::vector<std::string> tactics_allow;  // globs; empty: all
  std::vector<std::string> tactics_deny;   // globs
  const TacticReplay* replay = nullptr;    // --load-tactics
  TimingCache* timing_cache = nullptr;     // read and filled when set
  bool error_on_timing_cache_miss = false;
  std::vector<std::string> mark_outputs;  // extra tensors to read back
  bool mark_all = false;                  // every tensor a node produces
  bool fusion = true;                     // graph optimization (graph_optimizer.h); false: --no-fusion
  // --disable-rewrite: rewrite kinds (rewrites.h) turned off, everywhere or where they involve a node.
  // With fusion on and every kind disabled, the build is the --no-fusion build.
  std::vector<RewriteSwitch> disabled_rewrites;
  int warmup_runs = 2;
  int timing_samples = 0;  // 0: by optimization level
  bool progress = false;   // a one-line progress display on stderr
  // --validate-tactics: the reference backend's value of every tensor of the
  // graph (inputs included) on one feed of the data loader. When set, every
  // candidate (except a replayed choice) first runs once on its layer's inputs
  // as the reference computed them, and is rejected when an output's error
  // exceeds validation_tolerance() (tactic_validation.h). Layers whose tensors
  // the reference did not compute (inside If branches and Loop bodies) are not validated.
  const TensorMap* validation_values = nullptr;
  // The fault switches (VKGRAPHY_FAULTY_TACTICS, VKGRAPHY_FAULTY_LAYERS) as
  // validation runs apply them, so a tactic that would misbehave in the engine
  // misbehaves when it is validated.
  std::vector<std::string> faulty_tactics, faulty_layers;
};

struct BuildStats {
  size_t layers = 0;            // engine layers from model nodes
  size_t reformats = 0;         // precision conversions inserted (and kept)
  size_t inputs_converted_on_upload = 0;  // model inputs the host converts while uploading, replacing a reformat
  size_t reformats_fused = 0;             // reformats a neighbouring layer's reads or writes replaced
  size_t outputs_written_f32 = 0;         // fp32 model outputs an fp16 layer writes in fp32 (no host conversion)
  size_t folded = 0;            // nodes computed at build time
  size_t removed = 0;           // no-op nodes removed (their outputs alias their inputs)
  size_t fused = 0;             // nodes fused into the layer of another node
  size_t concats_eliminated = 0;  // Concat layers whose inputs write their slices of its output in place
  size_t copies_eliminated = 0;   // copies of a range of a tensor (Slice, Transpose) made views of it
  size_t candidates_timed = 0;  // (layer, tactic) pairs run on the device
  size_t candidates_pruned = 0;  // (layer, tactic) pairs the device's cost model left out (prune_for_device)
  size_t layers_timed = 0;      // layers that ran at least one candidate
  // Layers that ran none, classified by where their timings came from; each
  // layer counts once, so timed + reused + cached never exceeds `layers`.
  size_t layers_reused = 0;     // an identical layer (same signature) timed earlier in this build
  size_t layers_cached = 0;     // the timing cache
  size_t signature_reuses = 0;  // (layer, tactic) timings taken from an identical layer
  size_t cache_hits = 0;        // (layer, tactic) timings taken from the timing cache
  size_t cache_misses = 0;
  size_t layers_validated = 0;      // layers whose candidates ran against the reference
  size_t candidates_validated = 0;  // (layer, tactic) pairs checked
  size_t candidates_rejected = 0;   // of those, rejected for their error
};

struct BuildResult {
  Engine engine;
  TacticReplay replay;
  BuildStats stats;
  std::vector<AppliedRewrite> rewrites;  // every rewrite applied, graph rewrites first, then the engine passes
};

// Builds `graph` (shapes static and inferred, see import_onnx) for `device`.
// `timer` may be null only when nothing needs timing (level 0, replay or random
// selection). Throws Error naming every op without a tactic, every tensor with
// an unknown shape, an obeyed precision that no tactic has, a replayed tactic
// that cannot serve its layer, or a timing-cache miss when that is an error.
BuildResult build_engine(const Graph& graph, const BuilderConfig& config, const DeviceProfile& device,
                         const DeviceIdentity& identity, PlanTimer* timer,
                         const TacticRegistry& registry = TacticRegistry::builtin());

// The identity a timing cache and an engine record for `device`.
DeviceIdentity device_identity(const DeviceProfile& device);

// Node ops in `graph` that no tactic serves ("Op (node names)"), empty when all can run.
std::vector<std::string> unsupported_vulkan_ops(const Graph& graph, const TacticRegistry& registry);

}  // namespace vkg
