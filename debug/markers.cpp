#include "debug/markers.h"

#include <cmath>
#include <cstdlib>

namespace vkg::debug {

ReduceMarker::ReduceMarker(SearchMode mode, size_t num_nodes, bool invert)
    : mode_(mode), num_nodes_(num_nodes), invert_(invert) {
  const long n = static_cast<long>(num_nodes);
  // Inputs phase: the outputs phase ended at a node whose outputs fail, and the failure
  // most often starts in that node: both modes try it alone (the last index) first.
  if (mode_ == SearchMode::Linear) {
    index_ = n - 1;
    good_ = bad_ = 0;
  } else {
    // The whole model fails (it was checked first). Outputs phase: as Polygraphy's
    // marker, the first node alone is assumed to pass (pruning finds it if it fails).
    // Inputs phase: n (no node) passes, 0 (the whole subgraph) is assumed to fail.
    index_ = invert ? n - 1 : n / 2;
    good_ = invert ? n : 0;
    bad_ = invert ? 0 : n;
  }
}

bool ReduceMarker::done() const {
  if (num_nodes_ == 0 || finished_) return true;
  if (mode_ == SearchMode::Linear) return index_ < 0 || index_ >= static_cast<long>(num_nodes_);
  return std::labs(good_ - bad_) <= 1;
}

void ReduceMarker::step(bool passed, size_t kept_nodes) {
  const bool probe = steps_ == 0 && invert_;
  ++steps_;
  if (!passed && kept_nodes > 0 && kept_nodes <= least_bad_nodes_) {
    least_bad_nodes_ = kept_nodes;
    best_bad_ = static_cast<size_t>(index_);
  }
  if (mode_ == SearchMode::Linear) {
    if (probe) {
      // The last node alone failed: no later candidate is smaller. Else walk from the first.
      finished_ = !passed;
      index_ = 0;
    } else {
      index_ += invert_ ? 1 : -1;
    }
    if (invert_ && index_ == static_cast<long>(num_nodes_) - 1) finished_ = true;  // probed already
    return;
  }
  if (passed) {
    good_ = index_;
    index_ = static_cast<long>(std::ceil((good_ + bad_) / 2.0));
  } else {
    bad_ = index_;
    index_ = static_cast<long>(std::floor((good_ + bad_) / 2.0));
  }
}

int ReduceMarker::remaining() const {
  if (mode_ == SearchMode::Linear) return static_cast<int>(num_nodes_) - steps_;
  const long span = std::labs(good_ - bad_);
  return span <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(static_cast<double>(span))));
}

LayerCountMarker::LayerCountMarker(SearchMode mode, size_t num_layers)
    : mode_(mode), num_layers_(num_layers), count_(mode == SearchMode::Bisect ? num_layers : 0), good_(num_layers + 1) {
  done_ = num_layers == 0 && mode == SearchMode::Bisect;
}

void LayerCountMarker::step(bool passed) {
  if (mode_ == SearchMode::Linear) {
    if (passed) {
      good_ = count_;
      done_ = true;
    } else if (++count_ > num_layers_) {
      done_ = true;
    }
    return;
  }
  if (passed)
    good_ = count_;
  else
    bad_ = count_;
  if (good_ <= bad_ + 1) {
    done_ = true;
    return;
  }
  // Passing moves towards fewer layers, failing towards more.
  count_ = passed ? (good_ + bad_) / 2 : (good_ + bad_ + 1) / 2;
  if (count_ > num_layers_) done_ = true;
}

int LayerCountMarker::remaining() const {
  if (done_) return 0;
  if (mode_ == SearchMode::Linear) return static_cast<int>(num_layers_ - count_);
  const size_t span = good_ - bad_;
  return span <= 1 ? 0 : static_cast<int>(std::ceil(std::log2(static_cast<double>(span))));
}

std::optional<size_t> LayerCountMarker::result() const {
  if (good_ > num_layers_) return std::nullopt;
  return good_;
}

}  // namespace vkg::debug
