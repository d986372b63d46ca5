// Timing: how the builder measures a layer's candidates on the device and
// picks the fastest. A candidate's time comes from an identical layer timed
// earlier in this build, from the timing cache, or from the device, in up to
// three passes over the candidates that drop the ones that cannot win; the
// fastest by median (plus the reformats it needs) wins, near-ties broken by
// measured time or, with --deterministic, by heuristic order. Also the budget
// each optimization level times and the cost model that prunes candidates on a
// CPU device before they are compiled.
#include <algorithm>
#include <bit>
#include <cmath>
#include <iomanip>
#include <memory>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/cpu_cost_model.h"
#include "runtime/engine/shader_library.h"

namespace vkg::builder_impl {

namespace {

// Whether a candidate's shaders synchronize the invocations of a workgroup (shared-memory tiles).
bool synchronizes_workgroup(const Candidate& c) {
  return std::any_of(c.plan.dispatches.begin(), c.plan.dispatches.end(),
                     [](const Dispatch& d) { return vkg::synchronizes_workgroup(builtin_shader(d.shader)); });
}

// While it lives, a plan's epilogue scale and shift after the activation (specialization
// constants 23, 24: values that change the result, not the work) hold fixed values, so that
// layers differing only in them time the same pipelines; the plan gets its own back after
// (in place: a copy of the plan would copy its weights for every timing). The values have no
// special form: lavapipe compiled conv.direct_tile2x8 with a scale of 0.5 10% faster than with
// 0.7 or 1.5 (a 1x1 Conv 192->192 at 20x20 with HardSwish, 0.96 against 1.02-1.06 ms), so timing
// with 0.5 made the builder prefer that tactic on PP-OCRv4 det, where the real scales run slower.
class FixedEpilogueConstants {
 public:
  explicit FixedEpilogueConstants(LayerPlan& plan) {
    for (Dispatch& d : plan.dispatches)
      for (SpecValue& v : d.spec)
        if (v.id == 23 || v.id == 24) {
          saved_.emplace_back(&v, v.value);
          v.value = std::bit_cast<uint32_t>(v.id == 23 ? 0.7071f : 0.1234f);
        }
  }
  ~FixedEpilogueConstants() {
    for (const auto& [v, value] : saved_) v->value = value;
  }
  FixedEpilogueConstants(const FixedEpilogueConstants&) = delete;
  FixedEpilogueConstants& operator=(const FixedEpilogueConstants&) = delete;

 private:
  std::vector<std::pair<SpecValue*, uint32_t>> saved_;
};

}  // namespace

size_t prune_for_cpu(std::vector<Candidate>& cands, std::vector<std::string>& declined) {
  std::vector<const char*> why(cands.size(), nullptr);
  for (size_t i = 0; i < cands.size(); ++i) {
    if (synchronizes_workgroup(cands[i]))
      why[i] = "left out on a CPU device: its shaders synchronize workgroups (--no-prune times it)";
    else if (dominated_on_cpu(cands[i].tactic->name))
      why[i] = "left out on a CPU device: a form measured slower than others there (--no-prune times it)";
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    std::vector<std::string_view> others;  // kept, in the same precision
    for (size_t j = 0; j < cands.size(); ++j)
      if (j != i && why[j] == nullptr && cands[j].precision == cands[i].precision)
        others.push_back(cands[j].tactic->name);
    if (why[i] == nullptr && dominated_on_cpu_beside(cands[i].tactic->name, others))
      why[i] =
          "left out on a CPU device: a form measured far slower than another that serves the layer "
          "(--no-prune times it)";
  }
  if (std::all_of(why.begin(), why.end(), [](const char* w) { return w != nullptr; })) return 0;
  std::vector<Candidate> kept;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (why[i] == nullptr)
      kept.push_back(std::move(cands[i]));
    else
      declined.push_back(cands[i].tactic->name + ": " + why[i]);
  }
  const size_t dropped = cands.size() - kept.size();
  cands = std::move(kept);
  return dropped;
}

std::string format_ns(double ns) {
  std::ostringstream s;
  s << std::fixed;
  if (ns >= 1e6)
    s << std::setprecision(3) << ns / 1e6 << " ms";
  else
    s << std::setprecision(1) << ns / 1e3 << " us";
  return s.str();
}

std::string format_error(double e) {
  std::ostringstream s;
  s << std::setprecision(3) << e;
  return s.str();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// How many candidates of one precision (in heuristic order) and samples each optimization level
// times. On a CPU device level 3 times four, not six: there a candidate's compile (0.1 to 4 s of
// LLVM) costs far more than its timing, and with every tactic timed on PP-OCRv4 det and rec
// (lavapipe, 2026-12-01) the fastest of the first four in the device's order was within 0.5% of
// the fastest of all, summed over each model's layers, in fp32 and in fp16 (docs/bench.md). Its
// fp16 candidates, where fp16 arithmetic is slower than fp32, it times three of: LLVM compiles an
// fp16 shader 1.5-2.5x slower than its fp32 form, and the first three in that device's order came
// within 0.2% of the fastest of all on det and rec in fp16.
size_t candidates_for_level(int level, const DeviceProfile& device, Precision precision) {
  const bool cpu = device.type == DeviceType::Cpu;
  switch (level) {
    case 0:
      return 1;
    case 1:
      return 2;
    case 2:
      return 3;
    case 3:
      return !cpu ? 6 : precision == Precision::FP16 && device.fp16_slower ? 3 : 4;
    case 4:
      return 10;
    default:
      return SIZE_MAX;
  }
}
int samples_for_level(int level) { return level <= 1 ? 3 : level <= 3 ? 5 : 9; }

size_t Builder::choose(const Node& node, std::vector<Candidate>& cands, const LayerIo& io,
                       const std::map<std::string, double>& errors, TacticChoice& choice) {
  if (config_.random_seed.has_value()) return std::uniform_int_distribution<size_t>(0, cands.size() - 1)(rng_);
  if (config_.optimization_level == 0 || cands.size() == 1) return 0;
  // The level's budget of candidates applies per precision, so that with
  // --fp16 the fp32 tactics compete too (candidates come precision by precision).
  std::map<Precision, size_t> taken;
  std::vector<Candidate> budgeted;
  for (Candidate& c : cands)
    if (taken[c.precision]++ < candidates_for_level(config_.optimization_level, device_, c.precision))
      budgeted.push_back(std::move(c));
  cands = std::move(budgeted);
  const int samples =
      config_.timing_samples > 0 ? config_.timing_samples : samples_for_level(config_.optimization_level);
  TimingRound round;
  look_up_timings(node, cands, io, round);
  time_candidates(cands, io, round, samples);
  record_timings(cands, io, node, round, errors, choice);
  return fastest(node, choice);
}

void Builder::look_up_timings(const Node& node, const std::vector<Candidate>& cands, const LayerIo& io,
                              TimingRound& round) {
  const size_t n = cands.size();
  round.timings.resize(n);
  round.measured.resize(n);
  round.reformats.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = cands[i];
    const std::string key = signature_of(node, io, c.precision).key();
    CandidateTiming& timing = round.timings[i];
    timing.tactic = c.tactic->name;
    timing.precision = c.precision;
    auto reuse = timed_.find({key, c.tactic->name});
    if (reuse != timed_.end()) {
      timing = reuse->second;
      ++result_.stats.signature_reuses;
      round.reused = true;
    } else if (std::optional<TimingEntry> hit =
                   config_.timing_cache ? config_.timing_cache->lookup(identity_, key, c.tactic->name) : std::nullopt) {
      timing.median_ns = hit->median_ns;
      ++result_.stats.cache_hits;
      round.cached = true;
    } else {
      if (config_.timing_cache) ++result_.stats.cache_misses;
      VKG_CHECK(!(config_.timing_cache && config_.error_on_timing_cache_miss),
                "timing cache miss for layer '" << node.name << "', tactic '" << c.tactic->name
                                                << "' (--error-on-timing-cache-miss)");
      VKG_CHECK(timer_ != nullptr, "the builder has no device timer");
      round.to_time.push_back(i);
      round.measured[i] = true;
    }
    round.reformats[i] = reformats_before(c);
  }
}

// The samples of the candidates are taken in up to three passes over them, in turns and
// in alternating order, so that a burst of the device's (or a virtual machine's) noise
// lands on a minority of one candidate's samples instead of on all of them: one such
// burst made a build pick a tactic 1.5x slower than the fastest (PP-OCRv4 det on lavapipe).
// A candidate whose fastest sample costs more than twice the best median so far (reformats
// included) cannot win and is not timed again, but only on the evidence of two passes: after
// the first, whose samples are taken back to back and one burst can cover, it takes four times
// (a det build kept a direct convolution 1.9x slower than the Winograd tactic that the next
// build chose; a burst over that tactic's first samples is the likely cause).
void Builder::time_candidates(std::vector<Candidate>& cands, const LayerIo& io, TimingRound& round, int samples) {
  const size_t n = cands.size();
  const std::vector<size_t>& to_time = round.to_time;
  std::vector<CandidateTiming>& timings = round.timings;
  const std::vector<double>& reformats = round.reformats;
  // Each candidate's inputs and outputs as the timer takes them.
  std::vector<std::vector<PlanTimer::Buffer>> ins(n), outs(n);
  for (size_t i : to_time) {
    for (const LayerTensor& t : *cands[i].inputs)
      ins[i].push_back({t.storage, t.present() && !t.is_constant() ? uint64_t(t.size()) : 0});
    for (const LayerTensor& t : io.outputs.at(cands[i].precision))
      outs[i].push_back({t.storage, t.present() ? uint64_t(t.size()) : 0});
  }
  if (!to_time.empty()) {
    std::vector<std::unique_ptr<FixedEpilogueConstants>> fixed;  // as timed: the pipelines timing uses
    std::vector<const LayerPlan*> batch;
    for (size_t i : to_time) {
      fixed.push_back(std::make_unique<FixedEpilogueConstants>(cands[i].plan));
      batch.push_back(&cands[i].plan);
    }
    timer_->compile(batch);
  }
  const int passes = to_time.size() > 1 ? std::min(samples, 3) : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const int share = samples / passes + (pass < samples % passes ? 1 : 0);
    double best_so_far = INFINITY;
    if (pass > 0) {
      for (size_t i : to_time)
        if (!timings[i].error) best_so_far = std::min(best_so_far, median(timings[i].samples_ns) + reformats[i]);
    }
    for (size_t j = 0; j < to_time.size(); ++j) {
      const size_t i = to_time[pass % 2 == 0 ? j : to_time.size() - 1 - j];
      Candidate& c = cands[i];
      CandidateTiming& timing = timings[i];
      if (timing.error) continue;
      const double prune_factor = pass == 1 ? 4 : 2;
      if (pass > 0 && *std::min_element(timing.samples_ns.begin(), timing.samples_ns.end()) + reformats[i] >
                          prune_factor * best_so_far)
        continue;
      try {
        const FixedEpilogueConstants fixed(c.plan);
        // A later pass knows a run's time from the first: no probe run.
        const double known_ns = pass == 0 ? 0 : median(timing.samples_ns);
        for (double ns : timer_->time(c.plan, ins[i], outs[i], pass == 0 ? config_.warmup_runs : 1, share, known_ns))
          timing.samples_ns.push_back(ns);
      } catch (const Error& e) {
        timing.error = e.what();
      }
    }
  }
}

void Builder::record_timings(const std::vector<Candidate>& cands, const LayerIo& io, const Node& node,
                             TimingRound& round, const std::map<std::string, double>& errors, TacticChoice& choice) {
  auto validation_error_of = [&](const std::string& tactic) -> std::optional<double> {
    auto it = errors.find(tactic);
    return it == errors.end() ? std::nullopt : std::optional<double>(it->second);
  };
  const size_t n = cands.size();
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = cands[i];
    const LayerSignature sig = signature_of(node, io, c.precision);
    const std::string key = sig.key();
    CandidateTiming timing = std::move(round.timings[i]);
    if (round.measured[i]) {
      if (!timing.error) {
        timing.median_ns = median(timing.samples_ns);
        // A deterministic build records what a later one reads back from the timing cache: the median alone.
        if (config_.deterministic) timing.samples_ns.clear();
      }
      ++result_.stats.candidates_timed;
      round.timed = true;
      if (config_.timing_cache && !timing.error) {
        TimingEntry entry{identity_,
                          key,
                          sig.canonical_text(),
                          c.tactic->name,
                          c.precision,
                          timing.median_ns,
                          uint64_t(timing.samples_ns.size())};
        entry.validation_error = validation_error_of(c.tactic->name);
        config_.timing_cache->record(entry);
      }
    }
    timed_[{key, c.tactic->name}] = timing;
    timing.validation_error = validation_error_of(c.tactic->name);
    timing.reformat_ns = round.reformats[i];
    choice.candidates.push_back(timing);
  }
  if (round.timed)
    ++result_.stats.layers_timed;
  else if (round.reused)
    ++result_.stats.layers_reused;
  else if (round.cached)
    ++result_.stats.layers_cached;
}

size_t Builder::fastest(const Node& node, const TacticChoice& choice) const {
  size_t chosen = 0;
  // The fastest by median plus the reformats it needs; with --deterministic,
  // the first in heuristic order among near-ties. fp16 rounds, so it must be
  // faster beyond the near-tie margin: when an fp32 candidate is within the
  // margin of the fastest, only fp32 candidates are eligible (a measured
  // difference inside the timing noise buys no speed).
  double best = INFINITY;
  for (const CandidateTiming& t : choice.candidates)
    if (!t.error) best = std::min(best, t.cost_ns());
  VKG_CHECK(std::isfinite(best), "every candidate tactic of "
                                     << node.describe() << " failed: " << choice.candidates.front().error.value_or(""));
  const double near = best * (1 + config_.tie_margin);
  const bool fp32_near = std::any_of(choice.candidates.begin(), choice.candidates.end(), [&](const CandidateTiming& t) {
    return !t.error && t.precision == Precision::FP32 && t.cost_ns() <= near;
  });
  auto eligible = [&](const CandidateTiming& t) { return !t.error && (!fp32_near || t.precision == Precision::FP32); };
  double best_eligible = INFINITY;
  for (const CandidateTiming& t : choice.candidates)
    if (eligible(t)) best_eligible = std::min(best_eligible, t.cost_ns());
  for (size_t i = 0; i < choice.candidates.size(); ++i) {
    const CandidateTiming& t = choice.candidates[i];
    if (!eligible(t)) continue;
    if (config_.deterministic ? t.cost_ns() <= near : t.cost_ns() == best_eligible) {
      chosen = i;
      break;
    }
  }
  return chosen;
}

}  // namespace vkg::builder_impl
