#include "debug/precision_search.h"

#include <algorithm>
#include <deque>
#include <map>

#include "runtime/core/logger.h"

namespace vkg::debug {

namespace {}  // namespace

std::string describe_marked(const std::vector<std::string>& layers, const std::vector<size_t>& marked,
                            const std::string& precision) {
  if (marked.empty()) return "no layer in " + precision;
  std::string s = std::to_string(marked.size()) + " layer(s) in " + precision + ":";
  for (size_t i : marked) s += " " + layers[i];
  return s;
}

std::vector<size_t> select_layers(size_t num_layers, size_t count, bool forward) {
  std::vector<size_t> marked;
  for (size_t i = 0; i < count; ++i) marked.push_back(forward ? i : num_layers - count + i);
  return marked;
}

namespace {

// Runs the check for a set of marked layers, once per distinct set.
class CheckedConfigurations {
 public:
  CheckedConfigurations(const std::vector<std::string>& layers, const std::string& precision, IterationLoop& loop,
                        const MarkLayersFn& make)
      : layers_(layers), precision_(precision), loop_(loop), make_(make) {}

  bool operator()(std::vector<size_t> marked, std::optional<int> remaining = std::nullopt) {
    std::sort(marked.begin(), marked.end());
    const std::string what = describe_marked(layers_, marked, precision_);
    if (auto it = seen_.find(what); it != seen_.end()) {
      VKG_INFO("Already checked (" << (it->second ? "passed" : "failed") << "): " << what);
      return it->second;
    }
    return seen_[what] = loop_.run(
               what, [&] { make_(marked); }, remaining);
  }
  // A configuration checked elsewhere (side by side), by its description.
  void remember(const std::string& what, bool passed) { seen_[what] = passed; }

 private:
  const std::vector<std::string>& layers_;
  const std::string& precision_;
  IterationLoop& loop_;
  const MarkLayersFn& make_;
  std::map<std::string, bool> seen_;
};

// The elements of `set` that are in `other` (keep) or not (!keep), in `set`'s order.
std::vector<size_t> filtered(const std::vector<size_t>& set, const std::vector<size_t>& other, bool keep) {
  std::vector<size_t> out;
  for (size_t i : set)
    if ((std::find(other.begin(), other.end(), i) != other.end()) == keep) out.push_back(i);
  return out;
}
std::vector<size_t> without(const std::vector<size_t>& set, const std::vector<size_t>& drop) {
  return filtered(set, drop, false);
}
std::vector<size_t> within(const std::vector<size_t>& set, const std::vector<size_t>& of) {
  return filtered(set, of, true);
}

// Unmarks each marked layer in turn, keeping it unmarked where the check still passes.
std::vector<size_t> pruned(CheckedConfigurations& check, std::vector<size_t> marked) {
  if (marked.size() <= 1) return marked;
  VKG_START("Pruning: trying to unmark each of the " << marked.size() << " marked layer(s)");
  for (size_t k = 0; k < marked.size() && marked.size() > 1;) {
    std::vector<size_t> fewer = marked;
    fewer.erase(fewer.begin() + static_cast<long>(k));
    if (check(fewer, static_cast<int>(marked.size() - k - 1)))
      marked = std::move(fewer);
    else
      ++k;
  }
  return marked;
}

}  // namespace

std::optional<std::vector<size_t>> minimal_precision_set(const std::vector<std::string>& layers,
                                                         const std::vector<double>& risk,
                                                         const std::string& precision_name, IterationLoop& loop,
                                                         const MarkLayersFn& make) {
  CheckedConfigurations check(layers, precision_name, loop, make);
  std::vector<size_t> all, seed;
  for (size_t i = 0; i < layers.size(); ++i) {
    all.push_back(i);
    if (risk.at(i) > 0) seed.push_back(i);
  }
  std::vector<size_t> passing;
  if (!seed.empty()) {
    VKG_START("Marking the " << seed.size() << " layer(s) at fp16 risk to run in " << precision_name);
    if (check(seed)) passing = seed;
  } else {
    VKG_START("No layer is at fp16 risk: trying no layer in " << precision_name);
    if (check({})) return std::vector<size_t>{};
  }
  if (passing.empty()) {
    VKG_START("Marking all " << all.size() << " candidate layer(s) to run in " << precision_name);
    if (!check(all)) return std::nullopt;
    passing = all;
  }

  // Groups to drop, least risky first: the layers without overflow risk in one
  // group (halved when dropping it fails), then each overflow layer alone.
  std::vector<size_t> order = passing;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return risk[a] < risk[b]; });
  std::deque<std::vector<size_t>> groups;
  std::vector<size_t> weak;
  for (size_t i : order) {
    if (risk[i] >= 1)
      groups.push_back({i});
    else
      weak.push_back(i);
  }
  if (!weak.empty()) groups.push_front(weak);
  VKG_START("Dropping marked layers while the check still passes (" << passing.size() << " marked)");

  std::map<size_t, std::vector<size_t>> failed_against;  // layer -> the set that failed without it
  while (true) {
    while (!groups.empty()) {
      std::vector<size_t> group = groups.front();
      groups.pop_front();
      group = within(group, passing);  // what is still marked
      if (group.empty()) continue;
      const std::vector<size_t> fewer = without(passing, group);
      if (check(fewer)) {
        passing = fewer;
      } else if (group.size() > 1) {
        const auto half = group.begin() + long(group.size() / 2);
        groups.push_front(std::vector<size_t>(half, group.end()));
        groups.push_front(std::vector<size_t>(group.begin(), half));
      } else {
        failed_against[group[0]] = passing;
      }
    }
    // 1-minimal: each layer left must fail when dropped from the final set itself.
    for (size_t i : passing)
      if (failed_against[i] != passing) groups.push_back({i});
    if (groups.empty()) break;
    VKG_INFO("Trying again, against the smaller set, " << groups.size() << " layer(s) last dropped from a larger one");
  }
  return passing;
}

std::optional<std::vector<size_t>> search_precision(const std::vector<std::string>& layers,
                                                    const std::string& precision_name, IterationLoop& loop,
                                                    const PrecisionSearchOptions& options, const MarkLayersFn& make) {
  const char* which = options.forward ? "first" : "last";
  // Each configuration is checked once: pruning may come back to one the search tried.
  CheckedConfigurations check(layers, precision_name, loop, make);
  LayerCountMarker marker(options.mode, layers.size());
  while (!marker.done()) {
    const std::vector<size_t> marked = select_layers(layers.size(), marker.count(), options.forward);
    VKG_INFO("Selecting the " << which << " " << marked.size() << " layer(s) to run in " << precision_name);
    marker.step(check(marked, marker.remaining()));
  }
  if (!marker.result()) return std::nullopt;
  std::vector<size_t> marked = select_layers(layers.size(), *marker.result(), options.forward);
  VKG_FINISH("The " << which << " " << marked.size() << " layer(s) in " << precision_name << " pass the check");

  if (options.prune) marked = pruned(check, marked);
  return marked;
}

std::vector<size_t> prune_marked(const std::vector<std::string>& layers, const std::string& precision_name,
                                 IterationLoop& loop, const std::vector<size_t>& marked, const MarkLayersFn& make) {
  CheckedConfigurations check(layers, precision_name, loop, make);
  for (const IterationRecord& r : loop.records()) check.remember(r.description, r.passed);
  return pruned(check, marked);
}

}  // namespace vkg::debug
