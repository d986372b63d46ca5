#include "debug/rewrite_search.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace vkg::debug {

std::optional<std::vector<size_t>> minimal_cause(size_t n,
                                                 const std::function<bool(const std::vector<size_t>&)>& passes) {
  std::vector<size_t> required, candidates(n);
  for (size_t i = 0; i < n; ++i) candidates[i] = i;
  auto with = [&](size_t prefix) {
    std::vector<size_t> s = required;
    s.insert(s.end(), candidates.begin(), candidates.begin() + std::ptrdiff_t(prefix));
    std::sort(s.begin(), s.end());
    return s;
  };
  while (!candidates.empty()) {
    // required alone fails; required with every candidate removed is taken to pass.
    size_t lo = 0, hi = candidates.size();
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (passes(with(mid)) ? hi : lo) = mid;
    }
    required.push_back(candidates[hi - 1]);
    candidates.resize(hi - 1);
    std::sort(required.begin(), required.end());
    if (passes(required)) return required;
  }
  return std::nullopt;
}

namespace {

std::vector<RewriteSwitch> switches_for_kinds(const std::vector<RewriteKind>& kinds) {
  std::vector<RewriteSwitch> out;
  for (RewriteKind k : kinds) out.push_back({k, ""});
  return out;
}

}  // namespace

RewriteSearchResult find_faulty_rewrites(const RewriteTrialFn& trial) {
  RewriteSearchResult result;
  const RewriteTrial all_on = trial({}, false);
  result.applied = all_on.applied;
  if (all_on.passed) {
    result.outcome = RewriteSearchResult::Outcome::NoFailure;
    return result;
  }
  if (trial({}, true).passed == false) {
    result.outcome = RewriteSearchResult::Outcome::NotRewrite;
    return result;
  }
  // Each configuration is built and checked once.
  std::map<std::vector<RewriteSwitch>, bool> seen;
  auto passes_without = [&](std::vector<RewriteSwitch> disabled) {
    std::sort(disabled.begin(), disabled.end());
    if (disabled.empty()) return false;  // the build with every rewrite on, which failed
    auto it = seen.find(disabled);
    if (it == seen.end()) it = seen.emplace(disabled, trial(disabled, false).passed).first;
    return it->second;
  };

  std::vector<RewriteKind> kinds;
  for (const AppliedRewrite& r : result.applied)
    if (std::find(kinds.begin(), kinds.end(), r.kind) == kinds.end()) kinds.push_back(r.kind);
  std::sort(kinds.begin(), kinds.end());
  auto pick_kinds = [&](const std::vector<size_t>& s) {
    std::vector<RewriteKind> out;
    for (size_t i : s) out.push_back(kinds[i]);
    return out;
  };
  const std::optional<std::vector<size_t>> guilty = minimal_cause(
      kinds.size(), [&](const std::vector<size_t>& s) { return passes_without(switches_for_kinds(pick_kinds(s))); });
  if (!guilty) return result;  // NotFound
  result.kinds = pick_kinds(*guilty);

  // The instances of the guilty kinds, by their stable identifiers.
  std::vector<AppliedRewrite> instances;
  std::set<std::string> ids;
  for (const AppliedRewrite& r : result.applied)
    if (std::find(result.kinds.begin(), result.kinds.end(), r.kind) != result.kinds.end() && ids.insert(r.id()).second)
      instances.push_back(r);
  auto switches = [&](const std::vector<size_t>& s) {
    std::vector<RewriteSwitch> out;
    for (size_t i : s) out.push_back({instances[i].kind, instances[i].subject});
    return out;
  };
  const std::optional<std::vector<size_t>> culprits =
      minimal_cause(instances.size(), [&](const std::vector<size_t>& s) { return passes_without(switches(s)); });
  if (!culprits) {
    result.outcome = RewriteSearchResult::Outcome::KindsOnly;
    return result;
  }
  for (size_t i : *culprits) result.culprits.push_back(instances[i]);
  result.outcome = RewriteSearchResult::Outcome::Found;
  return result;
}

}  // namespace vkg::debug
