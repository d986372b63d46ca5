#include "debug/precision_search.h"

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
  LayerCountMarker marker(options.mode, layers.size());
  while (!marker.done()) {
    const std::vector<size_t> marked = select(layers.size(), marker.count(), options.forward);
    VKG_INFO("Selecting the " << which << " " << marked.size() << " layer(s) to run in " << precision_name);
    const bool passed =
        loop.run(describe(layers, marked, precision_name), [&] { make(marked); }, marker.remaining());
    marker.step(passed);
  }
  if (!marker.result()) return std::nullopt;
  std::vector<size_t> marked = select(layers.size(), *marker.result(), options.forward);
  VKG_FINISH("The " << which << " " << marked.size() << " layer(s) in " << precision_name << " pass the check");

  if (options.prune && marked.size() > 1) {
    VKG_START("Pruning: trying to unmark each of the " << marked.size() << " marked layer(s)");
    for (size_t k = 0; k < marked.size() && marked.size() > 1;) {
      std::vector<size_t> fewer = marked;
      fewer.erase(fewer.begin() + static_cast<long>(k));
      const bool passed = loop.run(describe(layers, fewer, precision_name), [&] { make(fewer); },
                                   static_cast<int>(marked.size() - k - 1));
      if (passed)
        marked = std::move(fewer);
      else
        ++k;
    }
  }
  return marked;
}

}  // namespace vkg::debug
