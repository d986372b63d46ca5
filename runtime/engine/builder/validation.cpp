// --validate-tactics: before a layer's candidates are timed, each runs once on
// the layer's inputs as the reference backend computed them, and a candidate
// whose outputs stray beyond the tolerance of its precision
// (tactic_validation.h) is rejected, so that a build never picks a fast tactic
// that computes the wrong thing on this device. The fault switches apply as in
// an engine, so that a tactic made to misbehave misbehaves here too.
#include <algorithm>
#include <cstdint>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/tactic_validation.h"

namespace vkg::builder_impl {

namespace {

bool matches(const std::vector<std::string>& globs, const std::string& text) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, text); });
}

// What one validation run of a candidate found: the worst output's error (the first over its
// tolerance, if any) and that tolerance, or why the run failed.
struct ValidationRun {
  double error = 0;
  double tolerance = 0;
  std::string worst;
  bool over = false;
  std::optional<std::string> failed;
};

ValidationRun run_candidate(PlanTimer& timer, const Node& node, const Candidate& c,
                            const std::vector<LayerTensor>& outputs, const TensorMap& values, bool fault) {
  std::vector<Tensor> ins;
  std::vector<PlanTimer::Buffer> outs;
  for (const LayerTensor& t : *c.inputs) {
    ins.push_back(t.present() && !t.is_constant()
                      ? to_storage(values.at(t.name), t.storage, "input '" + t.name + "' of " + node.describe())
                      : Tensor{});
  }
  for (const LayerTensor& t : outputs) outs.push_back({t.storage, t.present() ? uint64_t(t.size()) : 0});
  ValidationRun run;
  run.tolerance = validation_tolerance(c.precision, DType::Float32);
  try {
    const std::vector<Tensor> got = timer.run(c.plan, ins, outs, fault);
    for (size_t i = 0; i < got.size() && i < outputs.size() && !run.over; ++i) {
      const LayerTensor& t = outputs[i];
      if (!t.present()) continue;
      const double e = validation_error(from_storage(got[i].reshaped(t.shape), t.dtype), values.at(t.name));
      const double limit = validation_tolerance(c.precision, t.dtype);
      run.over = e > limit;
      if (run.over || e >= run.error) {
        run.error = e;
        run.tolerance = limit;
        run.worst = t.name;
      }
    }
  } catch (const Error& e) {
    run.failed = e.what();
  }
  return run;
}

}  // namespace

void Builder::validate_layer(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                             std::map<Precision, std::vector<LayerTensor>>& outputs,
                             std::vector<CandidateTiming>& rejected, std::map<std::string, double>& errors) {
  // As many passing candidates per precision as the selection below can use:
  // every one for a random choice, the first for level 0, the level's budget otherwise.
  auto quota = [&](Precision p) -> size_t {
    if (config_.random_seed) return SIZE_MAX;
    return config_.optimization_level == 0 ? 1 : candidates_for_level(config_.optimization_level, device_, p);
  };
  validate(node, held, cands, outputs, quota, rejected, errors);
  if (cands.empty()) {
    std::ostringstream msg;
    msg << "--validate-tactics: every candidate tactic of " << node.describe() << " was rejected";
    for (const CandidateTiming& r : rejected) msg << "\n  " << r.tactic << ": " << *r.error;
    VKG_THROW(msg.str());
  }
}

void Builder::validate(const Node& node, const std::vector<std::string>& held, std::vector<Candidate>& cands,
                       std::map<Precision, std::vector<LayerTensor>>& outputs,
                       const std::function<size_t(Precision)>& quota, std::vector<CandidateTiming>& rejected,
                       std::map<std::string, double>& errors) {
  const TensorMap& values = *config_.validation_values;
  auto known = [&](const LayerTensor& t) { return !t.present() || t.is_constant() || values.count(t.name) > 0; };
  for (const Candidate& c : cands) {
    if (!std::all_of(c.inputs->begin(), c.inputs->end(), known) ||
        !std::all_of(outputs[c.precision].begin(), outputs[c.precision].end(), known)) {
      VKG_VERBOSE("Layer '" << node.name << "': not validated (the reference run did not compute its tensors)");
      return;
    }
  }
  VKG_CHECK(timer_ != nullptr,
            "--validate-tactics needs a device that can run plans (timestamps on its compute queue)");
  const bool faulty_layer =
      matches(config_.faulty_layers, node.name) ||
      std::any_of(held.begin(), held.end(), [&](const std::string& n) { return matches(config_.faulty_layers, n); });
  ++result_.stats.layers_validated;
  std::vector<Candidate> kept;
  std::map<Precision, size_t> passed;
  for (Candidate& c : cands) {
    if (passed[c.precision] >= quota(c.precision)) {
      kept.push_back(std::move(c));
      continue;
    }
    const bool fault = faulty_layer || matches(config_.faulty_tactics, c.tactic->name);
    const ValidationRun run = run_candidate(*timer_, node, c, outputs[c.precision], values, fault);
    ++result_.stats.candidates_validated;
    if (!run.failed) errors[c.tactic->name] = run.error;
    if (!run.failed && !run.over) {
      ++passed[c.precision];
      kept.push_back(std::move(c));
      continue;
    }
    std::ostringstream why;
    if (run.failed)
      why << "validation run failed: " << *run.failed;
    else
      why << "rejected by validation: output '" << run.worst << "' error " << format_error(run.error) << " > "
          << format_error(run.tolerance) << " (" << precision_name(c.precision) << ")";
    VKG_WARNING("Layer '" << node.name << "': tactic " << c.tactic->name << " " << why.str());
    CandidateTiming r;
    r.tactic = c.tactic->name;
    r.precision = c.precision;
    r.error = why.str();
    r.rejected = !run.failed;
    if (!run.failed) r.validation_error = run.error;
    rejected.push_back(std::move(r));
    ++result_.stats.candidates_rejected;
  }
  cands = std::move(kept);
}

void Builder::record_rejected(const Node& node, const LayerIo& io, const std::vector<CandidateTiming>& rejected) {
  if (!config_.timing_cache) return;
  for (const CandidateTiming& r : rejected) {
    if (!r.rejected) continue;
    const LayerSignature sig = signature_of(node, io, r.precision);
    TimingEntry entry{identity_, sig.key(), sig.canonical_text(), r.tactic, r.precision};
    entry.validation_error = r.validation_error;
    entry.rejected = true;
    config_.timing_cache->record(entry);
  }
}

}  // namespace vkg::builder_impl
