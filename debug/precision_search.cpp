#include "debug/precision_search.h"

#include <map>

#include "runtime/core/logger.h"

namespace vkg::debug {

namespace {

std::string describe(const std::vector<std::string>& layers, const std::vector<size_t>& marked,
                     const std::string& precision) {
  if (marked.empty()) return "no layer in " + precision;
  std::string s = std::to_string(marked.size()) + " layer(s) in " + precision + ":";
  for (size_t i : marked) s += " " + layers[i];
  return s;
}

std::vector<size_t> select(size_t num_layers, size_t count, bool forward) {
  std::vector<size_t> marked;
  for (size_t i = 0; i < count; ++i) marked.push_back(forward ? i : num_layers - count + i);
  return marked;
}

}  // namespace

std::optional<std::vector<size_t>> search_precision(const std::vector<std::string>& layers,
                                                    const std::string& precision_name, IterationLoop& loop,
                                                    const PrecisionSearchOptions& options, const MarkLayersFn& make) {
  const char* which = options.forward ? "first" : "last";
  // Each configuration is checked once: pruning may come back to one the search tried.
  std::map<std::string, bool> seen;
  auto check = [&](const std::vector<size_t>& marked, std::optional<int> remaining) {
    const std::string what = describe(layers, marked, precision_name);
    if (auto it = seen.find(what); it != seen.end()) {
      VKG_INFO("Already checked (" << (it->second ? "passed" : "failed") << "): " << what);
      return it->second;
    }
    return seen[what] = loop.run(what, [&] { make(marked); }, remaining);
  };
  LayerCountMarker marker(options.mode, layers.size());
  while (!marker.done()) {
    const std::vector<size_t> marked = select(layers.size(), marker.count(), options.forward);
    VKG_INFO("Selecting the " << which << " " << marked.size() << " layer(s) to run in " << precision_name);
    marker.step(check(marked, marker.remaining()));
  }
  if (!marker.result()) return std::nullopt;
  std::vector<size_t> marked = select(layers.size(), *marker.result(), options.forward);
  VKG_FINISH("The " << which << " " << marked.size() << " layer(s) in " << precision_name << " pass the check");

  if (options.prune && marked.size() > 1) {
    VKG_START("Pruning: trying to unmark each of the " << marked.size() << " marked layer(s)");
    for (size_t k = 0; k < marked.size() && marked.size() > 1;) {
      std::vector<size_t> fewer = marked;
      fewer.erase(fewer.begin() + static_cast<long>(k));
      if (check(fewer, static_cast<int>(marked.size() - k - 1)))
        marked = std::move(fewer);
      else
        ++k;
    }
  }
  return marked;
}

}  // namespace vkg::debug
