// How the debug tools walk their search space (Polygraphy's markers).
//
// ReduceMarker picks the node whose outputs (or inputs) become the graph's in
// `debug reduce`: bisect halves the range each iteration (assuming the
// failure is monotonic in the node index), linear tries every node. In the
// inputs phase both first try the last node alone (where the outputs phase
// ended). Both remember the failing candidate with the fewest nodes and the
// passing candidates, for the reduced and the --min-good models.
//
// LayerCountMarker picks how many layers `debug precision` runs at the
// higher precision: bisect over the count, or linear from zero upwards.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace vkg::debug {

enum class SearchMode { Bisect, Linear };

class ReduceMarker {
 public:
  // `invert`: walk from the first node (the inputs phase) instead of the last.
  ReduceMarker(SearchMode mode, size_t num_nodes, bool invert);

  size_t node_index() const { return index_; }
  bool done() const;
  // Records the result of the candidate at node_index() (which kept `kept_nodes` nodes) and moves on.
  void step(bool passed, size_t kept_nodes);
  int remaining() const;

  // The node index of the failing candidate with the fewest nodes (nullopt: none failed).
  std::optional<size_t> best_bad() const { return best_bad_; }

 private:
  SearchMode mode_;
  size_t num_nodes_;
  bool invert_;
  long index_;
  long good_, bad_;  // bisect bounds
  int steps_ = 0;
  bool finished_ = false;  // linear inputs phase: the probe of the last node decided it
  std::optional<size_t> best_bad_;
  size_t least_bad_nodes_ = static_cast<size_t>(-1);
};

class LayerCountMarker {
 public:
  LayerCountMarker(SearchMode mode, size_t num_layers);

  size_t count() const { return count_; }  // layers to mark in this iteration
  bool done() const { return done_; }
  void step(bool passed);
  int remaining() const;
  // The smallest count that passed, nullopt when none did.
  std::optional<size_t> result() const;

 private:
  SearchMode mode_;
  size_t num_layers_;
  size_t count_;
  size_t good_;  // smallest passing count so far (num_layers + 1: none yet)
  size_t bad_ = 0;
  bool done_ = false;
};

}  // namespace vkg::debug
