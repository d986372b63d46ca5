// Precision over the graph: which precisions each layer may take (--fp16,
// --fp16-policy, --layer-precisions pins by name or pattern, constraints, data
// movement that stays in its input's precision), which fp16 arithmetic it
// should use, and what the reformats a candidate needs before it runs cost, so
// that the timing weighs a layer's precision against its neighbours' (TensorRT
// picks formats for the whole network, not each layer alone).
#include <algorithm>
#include <set>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/engine/builder/builder_impl.h"
#include "runtime/engine/graph_optimizer.h"

namespace vkg::builder_impl {

void keep_arith(std::vector<Candidate>& cands, std::optional<Arith> wanted) {
  if (!wanted) return;
  auto other = [&](const Candidate& c) { return c.precision == Precision::FP16 && c.tactic->arith != *wanted; };
  const bool any = std::any_of(cands.begin(), cands.end(), [&](const Candidate& c) {
    return c.precision == Precision::FP16 && c.tactic->arith == *wanted;
  });
  if (any) cands.erase(std::remove_if(cands.begin(), cands.end(), other), cands.end());
}

std::optional<Precision> Builder::pin_for(const std::vector<std::string>& held, bool* by_pattern) const {
  // A fused layer takes its nodes' pins; when they disagree, fp32 (the safe side).
  // Pins by name win over pins by pattern ('*', '?'), which apply only where no name does.
  auto merge = [](std::optional<Precision>& pin, Precision p) { pin = pin && *pin != p ? Precision::FP32 : p; };
  std::optional<Precision> pin;
  for (const std::string& n : held) {
    auto it = config_.layer_precisions.find(n);
    if (it != config_.layer_precisions.end()) merge(pin, it->second);
  }
  if (by_pattern) *by_pattern = false;
  if (pin) return pin;
  for (const auto& [pattern, p] : config_.layer_precisions) {
    if (!is_layer_pattern(pattern)) continue;
    for (const std::string& n : held)
      if (glob_match(pattern, n)) {
        merge(pin, p);
        if (by_pattern) *by_pattern = true;
        break;
      }
  }
  return pin;
}

std::optional<Arith> Builder::arith_for(const std::vector<std::string>& held) const {
  for (const std::string& n : held)
    if (auto it = config_.layer_arith.find(n); it != config_.layer_arith.end()) return it->second;
  if (fp16_everywhere_) return Arith::F16;
  return std::nullopt;
}

std::vector<Precision> Builder::precisions_for(const Node& node, const std::vector<std::string>& held,
                                               bool float_layer) {
  const bool fp16_ok = device_.fp16();
  std::vector<Precision> out;
  if (config_.fp16 && fp16_ok && float_layer) out.push_back(Precision::FP16);
  out.push_back(Precision::FP32);
  bool by_pattern = false;
  const std::optional<Precision> pin = pin_for(held, &by_pattern);
  if (!pin || config_.constraints == PrecisionConstraints::None) {
    // Data movement rounds nothing itself: it runs in the precision its input
    // already has, so that no reformat pair is inserted around it.
    if (out.size() > 1 && moves_data_only(node.op_type)) {
      for (const std::string& in : node.inputs) {
        if (in.empty() || constant(in) != nullptr) continue;
        auto produced = produced_storage_.find(resolve(in));
        if (produced == produced_storage_.end() || produced->second == StorageType::I32) continue;
        return {produced->second == StorageType::F16 ? Precision::FP16 : Precision::FP32};
      }
    }
    if (out.size() > 1 && fp16_everywhere_) return {Precision::FP16};  // add_layer falls back when none serves
    return out;
  }
  const Precision p = *pin;
  std::string problem;
  if (p == Precision::FP16 && !float_layer) problem = "it has no floating-point tensors";
  if (p == Precision::FP16 && !fp16_ok) problem = "device '" + device_.name + "' has no fp16 support";
  if (!problem.empty() && by_pattern) {
    // A pattern pins the layers that can take its precision; the others keep their choice.
    VKG_VERBOSE(node.describe() << " matches a --layer-precisions pattern for " << precision_name(p) << " but "
                                << problem << "; not pinned");
    return out;
  }
  if (!problem.empty()) {
    VKG_CHECK(config_.constraints != PrecisionConstraints::Obey,
              node.describe() << " is pinned to " << precision_name(p) << " (obey) but " << problem);
    VKG_WARNING(node.describe() << " is pinned to " << precision_name(p) << " but " << problem << "; ignoring the pin");
    return out;
  }
  // Obey: only the pinned precision. Prefer: the pinned one; add_layer falls back when no tactic has it.
  return {p};
}

double Builder::reformat_time(StorageType from, StorageType to, uint64_t elements) {
  const auto key = std::make_tuple(from, to, elements);
  auto it = reformat_ns_.find(key);
  if (it != reformat_ns_.end()) return it->second;
  // Timing-cache entries like a layer's: keyed by the conversion and its size.
  const std::string tactic = std::string("reformat.") + storage_type_name(from) + "_to_" + storage_type_name(to);
  const std::string signature = tactic + ":" + std::to_string(elements);
  if (config_.timing_cache) {
    if (const std::optional<TimingEntry> hit = config_.timing_cache->lookup(identity_, signature, tactic))
      return reformat_ns_[key] = hit->median_ns;
  }
  double ns = 0;
  try {
    const LayerPlan plan = reformat_plan(from, to, elements, device_, std::nullopt);
    const std::vector<double> samples =
        timer_->time(plan, {{from, elements}}, {{to, elements}}, config_.warmup_runs, 5, 0);
    ns = median(samples);
    if (config_.timing_cache) {
      config_.timing_cache->record(TimingEntry{identity_, signature,
                                               "Reformat of " + std::to_string(elements) + " elements", tactic,
                                               Precision::FP32, ns, uint64_t(samples.size())});
    }
  } catch (const Error& e) {
    VKG_VERBOSE("timing a reformat of " << elements << " elements failed: " << e.what());
  }
  return reformat_ns_[key] = ns;
}

// The measured cost of the reformats a candidate needs before it runs: its
// float inputs that exist only in the other storage so far (TensorRT times
// reformats too, and picks formats for the whole network, not each layer alone).
double Builder::reformats_before(const Candidate& c) {
  if (timer_ == nullptr) return 0;
  double total = 0;
  std::set<std::string> seen;
  for (const LayerTensor& t : *c.inputs) {
    if (!t.present() || t.is_constant() || t.storage == StorageType::I32) continue;
    const std::string name = resolve(t.name);
    if (!seen.insert(name).second || tensors_.count({name, t.storage})) continue;
    auto produced = produced_storage_.find(name);
    if (produced == produced_storage_.end() || produced->second == t.storage) continue;
    total += reformat_time(produced->second, t.storage, uint64_t(t.size()));
  }
  return total;
}

}  // namespace vkg::builder_impl
