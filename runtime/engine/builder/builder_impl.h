// The builder's insides, shared by the files of runtime/engine/builder/ (the
// public API is runtime/engine/builder.h). A Builder turns one graph into one
// engine: build.cpp runs the build, layer.cpp adds one layer (its candidates
// and the choice among them), precision.cpp picks each layer's precision,
// timing.cpp times the candidates, validation.cpp checks them against the
// reference, tensors.cpp holds the engine's tensors and reformats,
// control_flow.cpp adds If and Loop, memory.cpp rewrites the built engine's
// memory (reformat fusion, views instead of copies), config.cpp names the
// options. Nothing here is part of the library's interface.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/engine/builder.h"

namespace vkg::builder_impl {

inline constexpr uint32_t kReformatLocalSize = 64;

// One tactic's plan for a layer, in one precision.
struct Candidate {
  const Tactic* tactic;
  Precision precision;
  LayerPlan plan;
  std::vector<LayerTensor>* inputs;  // the context it was planned in (per precision)
};

// A layer's tensors as the tactics see them: declared types and shapes, and per precision the
// LayerTensors a tactic plans with (candidates point into `inputs`, so it stays where it is).
struct LayerIo {
  std::vector<ValueInfo> in_infos, out_infos;
  bool float_layer = false;  // a float tensor among them: the layer's precision matters
  std::map<Precision, std::vector<LayerTensor>> inputs, outputs;
};
LayerSignature signature_of(const Node& node, const LayerIo& io, Precision p);

// What one layer's timing found: each candidate's timing (from this build, the timing cache or
// the device), which ones the device timed, and the reformats each needs before it runs.
struct TimingRound {
  std::vector<CandidateTiming> timings;
  std::vector<size_t> to_time;    // candidates neither reused nor in the timing cache
  std::vector<bool> measured;     // the same, by candidate
  std::vector<double> reformats;  // each candidate's reformats_before
  bool timed = false, reused = false, cached = false;
};

// A value a Loop carries from one iteration to the next (add_loop): its engine tensor's name,
// type and storage, the body's input and result it flows through, and its initial value (an
// engine tensor or a weight).
struct LoopState {
  std::string name;
  DType dtype;
  Shape shape;
  StorageType storage;
  std::string body_input, body_result;
  int32_t initial = -1;
  std::optional<Tensor> initial_value;
};

// timing.cpp: the budgets of the optimization levels and the numbers of the builder's log.
size_t candidates_for_level(int level, const DeviceProfile& device, Precision precision);
int samples_for_level(int level);
double median(std::vector<double> v);
std::string format_ns(double ns);
std::string format_error(double e);
// Drops the candidates the cost model of CPU devices rules out (cpu_cost_model.h), where one it
// keeps is left, before any is compiled, naming each in `declined` with why (the -v candidate
// table shows them). Returns how many were dropped.
size_t prune_for_cpu(std::vector<Candidate>& cands, std::vector<std::string>& declined);

// precision.cpp: drops the fp16 candidates whose arithmetic is not `wanted` where one of that
// arithmetic is left (BuilderConfig::layer_arith, Fp16Policy::All); nothing without a wish.
void keep_arith(std::vector<Candidate>& cands, std::optional<Arith> wanted);

// tensors.cpp: a conversion between storage forms of one tensor (also used to copy a constant
// into an engine output): shaders/engine/reformat.comp.
LayerPlan reformat_plan(StorageType from, StorageType to, uint64_t n, const DeviceProfile& device,
                        std::optional<Tensor> constant);

// memory.cpp: the rewrites of the built engine's memory (each documented there).
struct ReformatFusions {
  size_t on_upload = 0, into_layers = 0;
  size_t outputs_f32 = 0;  // fp32 model outputs an fp16 layer writes in fp32 (no conversion on the host)
};
ReformatFusions fuse_reformats(Engine& engine, const RewriteFilter& filter, std::vector<AppliedRewrite>& rewrites);
std::vector<std::string> eliminate_concats(Engine& engine, const DeviceProfile& device, const RewriteFilter& filter,
                                           std::vector<AppliedRewrite>& rewrites);
std::vector<std::string> eliminate_range_copies(Engine& engine, const DeviceProfile& device,
                                                const RewriteFilter& filter, std::vector<AppliedRewrite>& rewrites);

class Builder {
 public:
  Builder(const Graph& graph, const BuilderConfig& config, const DeviceProfile& device, const DeviceIdentity& identity,
          PlanTimer* timer, const TacticRegistry& registry)
      : graph_(graph), config_(config), device_(device), identity_(identity), timer_(timer), registry_(registry) {}

  BuildResult build();

 private:
  // build.cpp: the build loop.
  void check_config();
  void decide_fp16();
  std::vector<const Node*> name_layers();
  void add_model_inputs();
  // The tensors the user reads (model outputs, marked tensors): never aliased or fused away.
  std::vector<std::string> user_read_tensors(const std::vector<const Node*>& remaining);
  void add_model_outputs(const std::vector<std::string>& outputs);
  void warn_unreplayed();
  // The rewrites of the built engine, its memory plan and its shaders' SPIR-V.
  void finish_engine();
  // `graph`'s nodes with unique layer names: unnamed ones become "<prefix><Op>_<index>".
  std::vector<const Node*> named_nodes(const Graph& graph, const std::string& prefix);
  // The nodes of `nodes` that do not fold into constants (counted in the stats).
  std::vector<const Node*> fold(const std::vector<const Node*>& nodes);
  // Folds what it can of `nodes`, then optimizes and adds the rest as layers;
  // `keep` are the tensors read after them (never fused or aliased away).
  void add_block(const std::vector<const Node*>& nodes, std::vector<std::string> keep);
  void add_layers(const std::vector<const Node*>& remaining, std::vector<std::string> keep);
  void progress(size_t index, size_t total, const Node& node);

  // layer.cpp: one layer, from its candidates to the chosen tactic.
  void add_layer(const Node& node, const std::vector<std::string>& held, size_t index, size_t total);
  // The layer's declared tensor types (and whether it has a float tensor), then its LayerTensors.
  void layer_infos(const Node& node, LayerIo& io) const;
  void layer_tensors(const Node& node, LayerIo& io) const;
  // The candidate of the tactic a loaded replay names for the layer; throws when it cannot serve it.
  std::vector<Candidate> replayed_candidates(const Node& node, const TacticChoice& replayed, LayerIo& io,
                                             std::vector<std::string>& declined);
  // The candidates in `precisions`, else in the precisions a pin or policy falls back to, pruned
  // by the device's cost model; throws when none is left.
  std::vector<Candidate> layer_candidates(const Node& node, const std::vector<std::string>& held,
                                          const std::vector<Precision>& precisions, LayerIo& io,
                                          std::vector<std::string>& declined);
  std::vector<Candidate> candidates(const Node& node, const std::vector<Precision>& precisions,
                                    std::map<Precision, std::vector<LayerTensor>>& inputs,
                                    std::map<Precision, std::vector<LayerTensor>>& outputs,
                                    std::vector<std::string>& declined, bool ignore_filters,
                                    const std::string& only_tactic);
  // Adds to `choice` the validated candidates that were not timed.
  void add_untimed(const std::vector<Candidate>& cands, const std::map<std::string, double>& errors,
                   TacticChoice& choice) const;
  // The sorted candidate table of the layer (verbose log).
  void log_choice(const Node& node, const Candidate& c, const TacticChoice& choice,
                  const std::vector<std::string>& declined) const;
  // Adds the chosen candidate `c` as an engine layer and `choice` to the replay.
  void record_layer(const Node& node, const std::vector<std::string>& held, Candidate& c, LayerIo& io,
                    TacticChoice choice);

  // precision.cpp: the precision of each layer over the graph.
  // The pin of a layer holding nodes `held`; *by_pattern tells whether a pattern gave it.
  std::optional<Precision> pin_for(const std::vector<std::string>& held, bool* by_pattern = nullptr) const;
  // The arithmetic an fp16 layer holding `held` should take: its nodes' --load-layer-precisions
  // entry, else fp16 arithmetic when every layer is fp16 (Fp16Policy::All); nullopt: any.
  std::optional<Arith> arith_for(const std::vector<std::string>& held) const;
  std::vector<Precision> precisions_for(const Node& node, const std::vector<std::string>& held, bool float_layer);
  double reformats_before(const Candidate& c);
  double reformat_time(StorageType from, StorageType to, uint64_t elements);

  // timing.cpp: the choice among a layer's candidates, by random draw, heuristic order or time.
  size_t choose(const Node& node, std::vector<Candidate>& cands, const LayerIo& io,
                const std::map<std::string, double>& errors, TacticChoice& choice);
  void look_up_timings(const Node& node, const std::vector<Candidate>& cands, const LayerIo& io, TimingRound& round);
  void time_candidates(std::vector<Candidate>& cands, const LayerIo& io, TimingRound& round, int samples);
  void record_timings(const std::vector<Candidate>& cands, const LayerIo& io, const Node& node, TimingRound& round,
                      const std::map<std::string, double>& errors, TacticChoice& choice);
  size_t fastest(const Node& node, const TacticChoice& choice) const;

  // validation.cpp: --validate-tactics.
  // Validates the candidates of a layer not replayed (when validation values are given) up to the
  // quota the selection can use; throws when every candidate was rejected.
  void validate_layer(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                      std::map<Precision, std::vector<LayerTensor>>& outputs, std::vector<CandidateTiming>& rejected,
                      std::map<std::string, double>& errors);
  // Runs the candidates in order on the layer's inputs as
  // the reference computed them, until `quota` of each precision have passed
  // (the rest stay, unvalidated, behind them), moves the rejected ones out of
  // `cands` into `rejected`, and records each validated candidate's error in
  // `errors` (by tactic name). Does nothing when the reference did not compute
  // the layer's tensors.
  void validate(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                std::map<Precision, std::vector<LayerTensor>>& outputs, const std::function<size_t(Precision)>& quota,
                std::vector<CandidateTiming>& rejected, std::map<std::string, double>& errors);
  // The candidates validation rejected, recorded in the timing cache as such.
  void record_rejected(const Node& node, const LayerIo& io, const std::vector<CandidateTiming>& rejected);

  // tensors.cpp: the engine's tensors, constants and reformats.
  const Tensor* constant(const std::string& name) const {
    auto f = folded_.find(name);
    if (f != folded_.end()) return &f->second;
    for (auto g = scopes_.rbegin(); g != scopes_.rend(); ++g) {
      auto i = (*g)->initializers.find(name);
      if (i != (*g)->initializers.end()) return &i->second;
    }
    return nullptr;
  }
  // The declared type and shape of `name` in the innermost graph that knows it.
  const ValueInfo* find_info(const std::string& name) const {
    for (auto g = scopes_.rbegin(); g != scopes_.rend(); ++g)
      if (const ValueInfo* vi = (*g)->find_value_info(name)) return vi;
    return nullptr;
  }
  std::string resolve(const std::string& name) const {
    auto it = aliases_.find(name);
    return it == aliases_.end() ? name : it->second;
  }
  // The rewrites this build may apply (--no-fusion, --disable-rewrite).
  RewriteFilter rewrite_filter() const { return {config_.fusion, config_.disabled_rewrites}; }
  bool try_fold(const Node& node);
  ValueInfo info_of(const std::string& name, const Node& node) const;
  int32_t add_tensor(const std::string& name, DType dtype, const Shape& shape, StorageType storage);
  int32_t tensor_in(const std::string& name, StorageType storage);
  void add_constant_output(const std::string& name);

  // control_flow.cpp: If and Loop layers.
  void add_if(const Node& node, size_t index, size_t total);
  // Adds the layers of one branch of If `node` and the copies of its results into `layer`'s outputs.
  void add_branch(const Node& node, const Graph& graph, const char* branch_name, EngineLayer& layer,
                  std::vector<EngineTensor>& outs);
  void add_loop(const Node& node, size_t index, size_t total);
  // The Loop's trip count and first condition: constants set layer.loop_trip_count, computed ones
  // become the engine tensors returned (-1: none).
  std::pair<int32_t, int32_t> loop_control(const Node& node, EngineLayer& layer);
  std::vector<LoopState> carried_state(const Node& node, const Graph& body);
  // The iteration count and the condition, where the body reads them; the count's increment is
  // a node added to the body (`added`, typed in `counters`).
  void counter_state(const Node& node, const Graph& body, int32_t first_condition, Graph& counters,
                     std::vector<Node>& added, std::vector<LoopState>& state);
  // Adds the body's layers; returns the engine tensors of the state's results and the body's condition.
  std::pair<std::vector<int32_t>, int32_t> add_loop_body(const Node& node, const Graph& body,
                                                         const std::vector<LoopState>& state, std::vector<Node> added);
  // The loop layer's dispatches: the state's initial values copied in before the first iteration,
  // the body's results after each.
  void add_loop_copies(EngineLayer& layer, const std::vector<LoopState>& state);
  // A copy of the tensor `from` (an input of `layer`, or a weight when from_weight) into output `out`.
  void add_copy(EngineLayer& layer, StorageType storage, uint64_t elements, BindingRef from, uint32_t out);

  const Graph& graph_;
  const BuilderConfig& config_;
  const DeviceProfile& device_;
  const DeviceIdentity& identity_;
  PlanTimer* timer_;
  const TacticRegistry& registry_;

  BuildResult result_;
  std::deque<Node> nodes_;               // the graph's nodes and its If branches', each with a unique name
  std::set<std::string> names_;          // node names taken
  std::vector<std::string> unreplayed_;  // layers a loaded replay does not name (chosen by timing)
  std::vector<const Graph*> scopes_;     // the model's graph, then the branches being added
  std::deque<Graph> synthetic_;          // types of the tensors of nodes the builder adds (loop counters)
  std::map<std::string, Tensor> folded_;
  std::map<std::string, std::string> aliases_;  // removed no-ops: tensor -> the tensor whose buffer it shares
  // Engine tensor of each (tensor name, storage) pair; the first entry per name is the producer's.
  std::map<std::pair<std::string, StorageType>, int32_t> tensors_;
  std::map<std::string, StorageType> produced_storage_;
  std::map<std::pair<std::string, std::string>, CandidateTiming> timed_;          // (signature key, tactic)
  std::map<std::tuple<StorageType, StorageType, uint64_t>, double> reformat_ns_;  // measured once per size
  std::mt19937_64 rng_;
  bool progress_line_ = false;
  bool fp16_everywhere_ = false;  // --fp16 with Fp16Policy::All (or Auto on a device with slow fp16)
};

}  // namespace vkg::builder_impl
