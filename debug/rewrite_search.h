// The search of `debug rewrites` (docs/debug.md): which of the graph rewrites a build applied
// (runtime/engine/rewrites.h) makes the engine fail its check. It checks the build with every
// rewrite on (a build that passes leaves nothing to find), then with every rewrite off (a build
// that still fails is not a rewrite's fault), then bisects: over the kinds applied first, then over
// the instances of the guilty kind(s), each identified by kind and node (AppliedRewrite::id), which
// stay stable while other rewrites come and go. Each bisection finds a 1-minimal set by repeated
// prefix bisection (minimal_cause), so a single culprit costs O(log n) builds, and the answer is
// always confirmed by a build of exactly that answer.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "runtime/engine/rewrites.h"

namespace vkg::debug {

// One build and check: with the rewrites `disabled` off and every other on, or with every rewrite
// off (`all_off`, the --no-fusion build). Returns whether it passed and, for the build with every
// rewrite on (disabled empty, not all_off), the rewrites it applied.
struct RewriteTrial {
  bool passed = false;
  std::vector<AppliedRewrite> applied;
};
using RewriteTrialFn = std::function<RewriteTrial(const std::vector<RewriteSwitch>& disabled, bool all_off)>;

struct RewriteSearchResult {
  enum class Outcome {
    NoFailure,    // the build with every rewrite on passes
    NotRewrite,   // the build with every rewrite off fails too
    Found,        // culprits: the rewrites to disable (one, or a 1-minimal set)
    KindsOnly,    // the instances could not be told apart: disable the kinds in `kinds`
    NotFound,     // no set of rewrites explains the failure (checks that disagree with themselves)
  };
  Outcome outcome = Outcome::NotFound;
  std::vector<AppliedRewrite> culprits;  // Found: from the build with every rewrite on
  std::vector<RewriteKind> kinds;        // Found, KindsOnly: the guilty kinds
  std::vector<AppliedRewrite> applied;   // what the build with every rewrite on applied
};

RewriteSearchResult find_faulty_rewrites(const RewriteTrialFn& trial);

// A 1-minimal subset of items 0..n-1 whose removal makes a check pass: `passes(subset)` says
// whether it passes with those items removed; removing none fails, removing all is assumed to pass.
// Repeated prefix bisection: the shortest failing-to-passing prefix ends in an item that is needed;
// keep it and search the prefix before it again, until the kept items alone pass (checked, so the
// answer is always confirmed). nullopt when no subset is found to pass.
std::optional<std::vector<size_t>> minimal_cause(size_t n, const std::function<bool(const std::vector<size_t>&)>& passes);

}  // namespace vkg::debug
