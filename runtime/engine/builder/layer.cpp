// The layer step: how one node (or a fused group of nodes) becomes one engine
// layer. Its tensors as the tactics see them, the candidate plans of the
// tactics allowed in the precisions it may take (or the tactic a replay
// names), validation and timing (validation.cpp, timing.cpp) or another way
// of choosing, then the chosen plan as an engine layer and the choice, with
// every candidate's measurements, as a replay entry. The builder's log shows
// each layer's sorted candidate table here.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/graph_optimizer.h"
#include "runtime/engine/shader_library.h"

namespace vkg::builder_impl {

namespace {

bool tactic_allowed(const BuilderConfig& config, const std::string& name) {
  if (!config.tactics_allow.empty() && std::none_of(config.tactics_allow.begin(), config.tactics_allow.end(),
                                                    [&](const std::string& g) { return glob_match(g, name); }))
    return false;
  return std::none_of(config.tactics_deny.begin(), config.tactics_deny.end(),
                      [&](const std::string& g) { return glob_match(g, name); });
}

// Sets a fused activation on the dispatch of `plan` that writes the layer's
// output last; false (`why_not` filled) when that dispatch's shader applies none.
bool apply_activation(const FusedActivation& activation, LayerPlan& plan, std::string& why_not) {
  for (auto d = plan.dispatches.rbegin(); d != plan.dispatches.rend(); ++d) {
    if (std::find(d->bindings.begin(), d->bindings.end(), BindingRef::output(0)) == d->bindings.end()) continue;
    if (!declares_spec_constant(builtin_shader(d->shader), 20)) break;
    const std::vector<SpecValue> epilogue = epilogue_spec(activation);
    d->spec.insert(d->spec.end(), epilogue.begin(), epilogue.end());
    return true;
  }
  why_not = "its shader cannot apply the fused activation";
  return false;
}

}  // namespace

LayerSignature signature_of(const Node& node, const LayerIo& io, Precision p) {
  // Signatures per precision: timing is shared between layers with equal signatures.
  return make_layer_signature(node, io.in_infos, io.out_infos, p);
}

void Builder::add_layer(const Node& node, const std::vector<std::string>& held, size_t index, size_t total) {
  progress(index, total, node);
  LayerIo io;
  layer_infos(node, io);
  const std::vector<Precision> precisions = precisions_for(node, held, io.float_layer);
  layer_tensors(node, io);

  const TacticChoice* replayed = config_.replay ? config_.replay->find(node.name, held, node.op_type) : nullptr;
  std::vector<std::string> declined;
  TacticChoice choice;
  choice.name = node.name;
  choice.nodes = held;
  choice.op = node.op_type;
  std::vector<Candidate> cands;
  if (replayed != nullptr) {
    cands = replayed_candidates(node, *replayed, io, declined);
    choice.candidates = replayed->candidates;
  } else {
    cands = layer_candidates(node, held, precisions, io, declined);
  }
  std::vector<CandidateTiming> rejected;
  std::map<std::string, double> validation_errors;
  if (replayed == nullptr && config_.validation_values != nullptr)
    validate_layer(node, held, cands, io.outputs, rejected, validation_errors);
  record_rejected(node, io, rejected);

  const size_t chosen = replayed != nullptr ? 0 : choose(node, cands, io, validation_errors, choice);
  add_untimed(cands, validation_errors, choice);
  for (CandidateTiming& r : rejected) choice.candidates.push_back(std::move(r));
  Candidate& c = cands[chosen];
  log_choice(node, c, choice, declined);
  record_layer(node, held, c, io, std::move(choice));
}

void Builder::layer_infos(const Node& node, LayerIo& io) const {
  for (const std::string& name : node.inputs) {
    io.in_infos.push_back(name.empty() ? ValueInfo{} : info_of(name, node));
    if (!name.empty() && is_float_dtype(*io.in_infos.back().dtype)) io.float_layer = true;
  }
  for (const std::string& name : node.outputs) {
    io.out_infos.push_back(name.empty() ? ValueInfo{} : info_of(name, node));
    if (!name.empty() && is_float_dtype(*io.out_infos.back().dtype)) io.float_layer = true;
  }
}

void Builder::layer_tensors(const Node& node, LayerIo& io) const {
  for (Precision p : {Precision::FP32, Precision::FP16}) {
    auto make = [&](const std::string& name, const ValueInfo& vi) {
      LayerTensor t;
      if (name.empty()) return t;
      t.name = name;
      t.dtype = *vi.dtype;
      t.shape = vi.concrete_shape();
      const std::optional<StorageType> s = storage_for(t.dtype, p);
      VKG_CHECK(s.has_value(), node.describe() << ": tensor '" << name << "' is " << dtype_name(t.dtype)
                                               << ", which the Vulkan backend does not support");
      t.storage = *s;
      t.constant = constant(name);
      return t;
    };
    std::vector<LayerTensor>& inputs = io.inputs[p];
    std::vector<LayerTensor>& outputs = io.outputs[p];
    for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(make(node.inputs[i], io.in_infos[i]));
    for (size_t i = 0; i < node.outputs.size(); ++i) outputs.push_back(make(node.outputs[i], io.out_infos[i]));
  }
}

std::vector<Candidate> Builder::replayed_candidates(const Node& node, const TacticChoice& replayed, LayerIo& io,
                                                    std::vector<std::string>& declined) {
  const Tactic* t = registry_.find(replayed.tactic);
  VKG_CHECK(t != nullptr, "tactic replay: layer '" << node.name << "' names tactic '" << replayed.tactic
                                                   << "', which this vkgraphy does not have");
  VKG_CHECK(std::find(t->ops.begin(), t->ops.end(), node.op_type) != t->ops.end(),
            "tactic replay: tactic '" << replayed.tactic << "' cannot serve layer '" << node.name << "': it runs "
                                      << t->ops.front() << ", not " << node.op_type);
  VKG_CHECK(t->precision() == replayed.precision, "tactic replay: layer '"
                                                      << node.name << "' asks for tactic '" << t->name << "' in "
                                                      << precision_name(replayed.precision) << ", but that tactic is "
                                                      << precision_name(t->precision()));
  VKG_CHECK(replayed.precision == Precision::FP32 || (io.float_layer && device_.fp16()),
            "tactic replay: layer '" << node.name << "' asks for fp16, which "
                                     << (io.float_layer ? "device '" + device_.name + "' does not support"
                                                        : std::string("a layer without float tensors cannot take")));
  std::vector<Candidate> cands = candidates(node, {replayed.precision}, io.inputs, io.outputs, declined, true, t->name);
  VKG_CHECK(!cands.empty(), "tactic replay: tactic '" << t->name << "' cannot serve layer '" << node.name
                                                      << "': " << (declined.empty() ? "" : declined.front()));
  return cands;
}

std::vector<Candidate> Builder::layer_candidates(const Node& node, const std::vector<std::string>& held,
                                                 const std::vector<Precision>& precisions, LayerIo& io,
                                                 std::vector<std::string>& declined) {
  if (config_.replay != nullptr) {
    VKG_VERBOSE("tactic replay does not name layer '" << node.name << "'; choosing its tactic by timing");
    unreplayed_.push_back(node.name);
  }
  std::vector<Candidate> cands = candidates(node, precisions, io.inputs, io.outputs, declined, false, "");
  bool by_pattern = false;
  const std::optional<Precision> pin = pin_for(held, &by_pattern);
  if (cands.empty() && !pin && moves_data_only(node.op_type) && config_.fp16 && device_.fp16() && io.float_layer) {
    // No allowed tactic moves the data in its input's precision: let the other compete.
    cands = candidates(node, {Precision::FP16, Precision::FP32}, io.inputs, io.outputs, declined, false, "");
  }
  if (cands.empty() && !pin && fp16_everywhere_ && io.float_layer) {
    VKG_VERBOSE(node.describe() << ": no fp16 tactic serves it; fp32");
    cands = candidates(node, {Precision::FP32}, io.inputs, io.outputs, declined, false, "");
  }
  if (cands.empty() && pin && (config_.constraints == PrecisionConstraints::Prefer || by_pattern)) {
    if (by_pattern)
      VKG_VERBOSE(node.describe() << ": no tactic in the precision a --layer-precisions pattern gives; not pinned");
    else
      VKG_WARNING(node.describe() << ": no tactic in the preferred precision; trying the others");
    std::vector<Precision> all = {Precision::FP32};
    if (config_.fp16 && device_.fp16() && io.float_layer) all.insert(all.begin(), Precision::FP16);
    cands = candidates(node, all, io.inputs, io.outputs, declined, false, "");
  }
  keep_arith(cands, arith_for(held));
  // Only where candidates are timed: level 0 and random choices keep every candidate.
  if (config_.prune_for_device && device_.type == DeviceType::Cpu && config_.optimization_level > 0 &&
      !config_.random_seed)
    result_.stats.candidates_pruned += prune_for_cpu(cands, declined);
  if (cands.empty()) {
    std::ostringstream msg;
    msg << "no tactic can serve " << node.describe();
    if (pin && config_.constraints == PrecisionConstraints::Obey) msg << " in " << precision_name(*pin) << " (obey)";
    if (!config_.tactics_allow.empty() || !config_.tactics_deny.empty()) msg << " with the allowed tactics";
    for (const std::string& d : declined) msg << "\n  " << d;
    VKG_THROW(msg.str());
  }
  return cands;
}

std::vector<Candidate> Builder::candidates(const Node& node, const std::vector<Precision>& precisions,
                                           std::map<Precision, std::vector<LayerTensor>>& inputs,
                                           std::map<Precision, std::vector<LayerTensor>>& outputs,
                                           std::vector<std::string>& declined, bool ignore_filters,
                                           const std::string& only_tactic) {
  std::vector<Candidate> out;
  const std::optional<FusedActivation> activation = fused_activation(node);
  // The heuristic order on this device (Tactic::priority_on): what optimization levels cut to.
  std::vector<const Tactic*> tactics = registry_.for_op(node.op_type);
  std::stable_sort(tactics.begin(), tactics.end(),
                   [&](const Tactic* a, const Tactic* b) { return a->priority_on(device_) < b->priority_on(device_); });
  for (Precision p : precisions) {
    LayerContext ctx{node, graph_.opset, p, Arith::F32, inputs[p], outputs[p], device_};
    for (const Tactic* t : tactics) {
      if (t->precision() != p) continue;
      if (!only_tactic.empty() && t->name != only_tactic) continue;
      if (!ignore_filters && !tactic_allowed(config_, t->name)) continue;
      ctx.arith = t->arith;
      std::string why;
      std::optional<LayerPlan> plan = t->plan(ctx, why);
      if (plan && activation && !apply_activation(*activation, *plan, why)) plan.reset();
      if (!plan) {
        declined.push_back(t->name + ": " + (why.empty() ? "cannot serve this layer" : why));
        continue;
      }
      out.push_back(Candidate{t, p, std::move(*plan), &inputs[p]});
    }
  }
  return out;
}

void Builder::add_untimed(const std::vector<Candidate>& cands, const std::map<std::string, double>& errors,
                          TacticChoice& choice) const {
  for (const Candidate& v : cands) {  // validated candidates that were not timed
    auto it = errors.find(v.tactic->name);
    const std::optional<double> error = it == errors.end() ? std::nullopt : std::optional<double>(it->second);
    if (!error || std::any_of(choice.candidates.begin(), choice.candidates.end(),
                              [&](const CandidateTiming& t) { return t.tactic == v.tactic->name; }))
      continue;
    CandidateTiming t;
    t.tactic = v.tactic->name;
    t.precision = v.precision;
    t.validation_error = error;
    t.untimed = true;
    choice.candidates.push_back(std::move(t));
  }
}

void Builder::log_choice(const Node& node, const Candidate& c, const TacticChoice& choice,
                         const std::vector<std::string>& declined) const {
  if (!Logger::get().enabled(Severity::Verbose, __FILE__)) return;
  std::ostringstream table;
  table << "Layer '" << node.name << "' (" << node.op_type << "): " << c.tactic->name;
  std::vector<const CandidateTiming*> sorted;
  for (const CandidateTiming& t : choice.candidates) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](const CandidateTiming* a, const CandidateTiming* b) {
    return !a->error && (b->error || a->cost_ns() < b->cost_ns());
  });
  for (const CandidateTiming* t : sorted) {
    table << "\n    " << std::left << std::setw(36) << t->tactic << " "
          << (t->error ? "failed: " + *t->error : format_ns(t->median_ns))
          << (!t->error && t->reformat_ns > 0 ? " + " + format_ns(t->reformat_ns) + " reformat" : "")
          << (!t->error && t->validation_error ? " (validation error " + format_error(*t->validation_error) + ")" : "")
          << (t->tactic == c.tactic->name ? "  <- chosen" : "");
  }
  if (choice.candidates.empty()) table << " (not timed)";
  for (const std::string& d : declined) table << "\n    " << d;
  VKG_VERBOSE(table.str());
}

void Builder::record_layer(const Node& node, const std::vector<std::string>& held, Candidate& c, LayerIo& io,
                           TacticChoice choice) {
  const LayerSignature sig = signature_of(node, io, c.precision);
  choice.signature = sig.key();
  choice.tactic = c.tactic->name;
  choice.precision = c.precision;

  EngineLayer layer;
  layer.name = node.name;
  layer.nodes = held;
  layer.op = node.op_type;
  layer.tactic = c.tactic->name;
  layer.precision = c.precision;
  layer.signature = sig.key();
  for (const LayerTensor& t : *c.inputs) {
    layer.inputs.push_back(t.present() && !t.is_constant() ? tensor_in(t.name, t.storage) : -1);
  }
  for (const LayerTensor& t : io.outputs[c.precision]) {
    layer.outputs.push_back(t.present() ? add_tensor(t.name, t.dtype, t.shape, t.storage) : -1);
  }
  layer.plan = std::move(c.plan);
  result_.engine.layers.push_back(std::move(layer));
  result_.replay.layers.push_back(std::move(choice));
  ++result_.stats.layers;
}

}  // namespace vkg::builder_impl
