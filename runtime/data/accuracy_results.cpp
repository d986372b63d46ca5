#include "runtime/data/accuracy_results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"
#include "runtime/data/array_stats.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kStatNames[4] = {"max", "mean", "median", "quantile"};

size_t stat_index(ErrorStat stat) { return size_t(int(stat) - int(ErrorStat::Max)); }

bool stat_failed(double diff, double tol) { return std::isnan(diff) || diff > tol; }

Json number_or_null(const std::optional<double>& v) {
  return v && !std::isnan(*v) ? Json(*v) : Json(nullptr);
}

Json output_to_json(const OutputAccuracy& o) {
  if (!o.comparable) return Json(false);
  Json j = Json::object();
  for (size_t s = 0; s < 4; ++s) {
    j[std::string(kStatNames[s]) + "_absdiff"] = number_or_null(o.absdiff[s]);
    j[std::string(kStatNames[s]) + "_reldiff"] = number_or_null(o.reldiff[s]);
  }
  j["thresholds"] = {{"check_error_stat", error_stat_name(o.threshold.stat)},
                     {"atol", o.threshold.atol},
                     {"rtol", o.threshold.rtol},
                     {"polygraphy_class", "SimpleThreshold"}};
  j["passed"] = o.stored_passed ? Json(*o.stored_passed) : Json(nullptr);
  j["polygraphy_class"] = "OutputCompareResult";
  return j;
}

// A metric read back: null is NaN for the statistics always computed, absent for the quantile.
std::optional<double> metric_from_json(const Json& j, size_t stat) {
  if (j.is_number()) return j.get<double>();
  if (stat == 3) return std::nullopt;
  return std::numeric_limits<double>::quiet_NaN();
}

OutputAccuracy output_from_json(const Json& j, const std::string& where) {
  OutputAccuracy o;
  if (j.is_boolean()) {
    o.comparable = false;
    o.stored_passed = j.get<bool>();
    return o;
  }
  const std::string cls = j.value("polygraphy_class", "");
  VKG_CHECK(cls == "OutputCompareResult", where << " holds a " << (cls.empty() ? "value" : cls)
                                                << ", not the simple comparison's OutputCompareResult: vkgraphy "
                                                   "compares with Polygraphy's simple function only");
  for (size_t s = 0; s < 4; ++s) {
    o.absdiff[s] = metric_from_json(j.at(std::string(kStatNames[s]) + "_absdiff"), s);
    o.reldiff[s] = metric_from_json(j.at(std::string(kStatNames[s]) + "_reldiff"), s);
  }
  const Json& t = j.at("thresholds");
  const std::optional<ErrorStat> stat = parse_error_stat(t.at("check_error_stat").get<std::string>());
  VKG_CHECK(stat, where << " names an unknown error statistic");
  o.threshold = {*stat, t.at("atol").get<double>(), t.at("rtol").get<double>()};
  if (j.contains("passed") && j.at("passed").is_boolean()) o.stored_passed = j.at("passed").get<bool>();
  return o;
}

Json result_to_json(const AccuracyResult& r) {
  Json pairs = Json::array();
  for (const RunnerPairAccuracy& p : r.pairs) {
    Json iterations = Json::array();
    for (const auto& outputs : p.iterations) {
      Json it = Json::object();
      for (const auto& [name, o] : outputs) it[name] = output_to_json(o);
      iterations.push_back(std::move(it));
    }
    pairs.push_back(Json::array({Json::array({p.runner_a, p.runner_b}), std::move(iterations)}));
  }
  return {{"lst", pairs}, {"aggregation", r.average ? "average" : "per_sample"}, {"polygraphy_class", "AccuracyResult"}};
}

AccuracyResult result_from_json(const Json& j, const std::string& where) {
  VKG_CHECK(j.value("polygraphy_class", "") == "AccuracyResult", where << " is not an AccuracyResult");
  AccuracyResult r;
  r.average = j.value("aggregation", "per_sample") == "average";
  for (const Json& pair : j.at("lst")) {
    RunnerPairAccuracy p;
    p.runner_a = pair.at(0).at(0).get<std::string>();
    p.runner_b = pair.at(0).at(1).get<std::string>();
    for (const Json& it : pair.at(1)) {
      p.iterations.emplace_back();
      for (const auto& [name, value] : it.items())
        p.iterations.back().emplace_back(name, output_from_json(value, where + ", output '" + name + "'"));
    }
    r.pairs.push_back(std::move(p));
  }
  return r;
}

std::string describe(const OutputAccuracy& o) {
  if (!o.comparable) return "not comparable";
  const size_t s = stat_index(o.threshold.stat == ErrorStat::Elemwise ? ErrorStat::Max : o.threshold.stat);
  auto text = [](const std::optional<double>& v) { return v ? python_float_repr(*v) : std::string("n/a"); };
  return std::string(kStatNames[s]) + " error: abs=" + text(o.absdiff[s]) + " (atol " +
         python_float_repr(o.threshold.atol) + "), rel=" + text(o.reldiff[s]) + " (rtol " +
         python_float_repr(o.threshold.rtol) + ")";
}

}  // namespace

bool OutputAccuracy::passed() const {
  if (stored_passed) return *stored_passed;
  if (!comparable || threshold.stat == ErrorStat::Elemwise) return false;
  const size_t s = stat_index(threshold.stat);
  if (!absdiff[s] || !reldiff[s]) return false;
  return !(stat_failed(*absdiff[s], threshold.atol) && stat_failed(*reldiff[s], threshold.rtol));
}

std::vector<std::pair<std::string, OutputAccuracy>> AccuracyResult::averaged(const RunnerPairAccuracy& pair) const {
  struct Sum {
    OutputAccuracy first;  // its threshold
    std::array<double, 4> abs{}, rel{};
    std::array<int, 4> abs_n{}, rel_n{};
  };
  std::vector<std::pair<std::string, Sum>> sums;  // outputs in the order they appear
  for (const auto& iteration : pair.iterations)
    for (const auto& [name, o] : iteration) {
      VKG_CHECK(o.comparable, "output '" << name << "' could not be compared in some iteration, so its "
                                          << "statistics cannot be averaged (check without --check-average)");
      auto it = std::find_if(sums.begin(), sums.end(), [&name = name](const auto& e) { return e.first == name; });
      if (it == sums.end()) it = sums.insert(sums.end(), {name, Sum{o}});
      for (size_t s = 0; s < 4; ++s) {
        if (o.absdiff[s]) it->second.abs[s] += *o.absdiff[s], ++it->second.abs_n[s];
        if (o.reldiff[s]) it->second.rel[s] += *o.reldiff[s], ++it->second.rel_n[s];
      }
    }
  std::vector<std::pair<std::string, OutputAccuracy>> out;
  for (const auto& [name, sum] : sums) {
    OutputAccuracy avg = sum.first;
    avg.stored_passed.reset();
    for (size_t s = 0; s < 4; ++s) {
      avg.absdiff[s] = sum.abs_n[s] ? std::optional<double>(sum.abs[s] / sum.abs_n[s]) : std::nullopt;
      avg.reldiff[s] = sum.rel_n[s] ? std::optional<double>(sum.rel[s] / sum.rel_n[s]) : std::nullopt;
    }
    out.emplace_back(name, avg);
  }
  return out;
}

bool AccuracyResult::passed() const {
  for (const RunnerPairAccuracy& p : pairs) {
    if (average) {
      for (const auto& [name, o] : averaged(p))
        if (!o.passed()) return false;
      continue;
    }
    for (const auto& iteration : p.iterations)
      for (const auto& [name, o] : iteration)
        if (!o.passed()) return false;
  }
  return true;
}

AccuracyResults accuracy_results_of(const std::vector<PairComparison>& comparisons) {
  AccuracyResult r;
  for (const PairComparison& c : comparisons) {
    if (r.pairs.empty() || r.pairs.back().runner_a != c.runner_a || r.pairs.back().runner_b != c.runner_b)
      r.pairs.push_back({c.runner_a, c.runner_b, {}});
    auto& outputs = r.pairs.back().iterations.emplace_back();
    for (const OutputComparison& oc : c.result.per_output) {
      OutputAccuracy o;
      o.comparable = oc.failure.empty();
      o.threshold = {oc.stat, oc.atol, oc.rtol};
      if (!o.comparable) {
        o.stored_passed = false;
      } else {
        const ErrorMetrics* both[2] = {&oc.absdiff, &oc.reldiff};
        for (int k = 0; k < 2; ++k) {
          auto& dst = k == 0 ? o.absdiff : o.reldiff;
          dst = {both[k]->max, both[k]->mean, both[k]->median, std::nullopt};
          if (oc.stat == ErrorStat::Quantile) dst[3] = both[k]->quantile;
        }
        if (oc.stat == ErrorStat::Elemwise) o.stored_passed = oc.passed;
      }
      outputs.emplace_back(oc.name, o);
    }
  }
  return {r};
}

void rethreshold(AccuracyResults& results, const CompareOptions& options, bool average) {
  for (AccuracyResult& r : results) {
    r.average = average;
    for (RunnerPairAccuracy& p : r.pairs)
      for (auto& iteration : p.iterations)
        for (auto& [name, o] : iteration) {
          const ErrorStat stat = options.error_stat_for(name);
          VKG_CHECK(stat != ErrorStat::Elemwise,
                    "the elemwise check cannot be made again from saved statistics (it needs every element): "
                    "choose --check-error-stat max, mean, median or quantile, or compare saved outputs with "
                    "run --load-outputs");
          VKG_CHECK(o.comparable, "output '" << name << "' of " << p.runner_a << " vs. " << p.runner_b
                                             << " could not be compared (shapes), so it has nothing to check");
          VKG_CHECK(o.absdiff[stat_index(stat)] && o.reldiff[stat_index(stat)],
                    "the saved results of output '" << name << "' have no " << error_stat_name(stat)
                        << " statistic (quantiles are saved only when the run checked one): choose another");
          o.threshold = {stat, options.atol_for(name), options.rtol_for(name)};
          o.stored_passed.reset();
        }
  }
}

void log_accuracy_summary(const AccuracyResults& results) {
  for (const AccuracyResult& r : results)
    for (const RunnerPairAccuracy& p : r.pairs) {
      const std::string prefix = "Accuracy Summary | " + p.runner_a + " vs. " + p.runner_b + " | ";
      if (r.average) {
        const auto averaged = r.averaged(p);
        size_t passed = 0;
        for (const auto& [name, o] : averaged) passed += o.passed() ? 1 : 0;
        VKG_LOG(passed == averaged.size() ? Severity::Finish : Severity::Error,
                prefix << "Passed: " << passed << "/" << averaged.size() << " outputs");
        for (const auto& [name, o] : averaged)
          VKG_LOG(o.passed() ? Severity::Finish : Severity::Error,
                  "    " << name << " | averaged " << describe(o) << " | " << (o.passed() ? "PASSED" : "FAILED"));
        continue;
      }
      size_t matched = 0;
      for (const auto& iteration : p.iterations)
        matched += std::all_of(iteration.begin(), iteration.end(), [](const auto& e) { return e.second.passed(); });
      const size_t total = p.iterations.size();
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.2f", total ? 100.0 * double(matched) / double(total) : 100.0);
      VKG_LOG(matched == total ? Severity::Finish : Severity::Error,
              prefix << "Passed: " << matched << "/" << total << " iterations | Pass Rate: " << rate << "%");
    }
}

AccuracyResults load_accuracy_results(const std::string& path) {
  const std::string text = read_whole_file(path, "accuracy results file");
  try {
    const Json j = Json::parse(text);
    VKG_CHECK(j.is_object() && j.value("polygraphy_class", "") == "AccuracyResults",
              "'" << path << "' is not an accuracy results file (expected polygraphy_class \"AccuracyResults\")");
    AccuracyResults results;
    for (const Json& r : j.at("lst")) results.push_back(result_from_json(r, "'" + path + "'"));
    return results;
  } catch (const nlohmann::json::exception& e) {
    VKG_THROW("'" << path << "' is not a valid accuracy results file: " << e.what());
  }
}

void save_accuracy_results(const std::string& path, const AccuracyResults& results) {
  Json lst = Json::array();
  for (const AccuracyResult& r : results) lst.push_back(result_to_json(r));
  const Json j = {{"lst", lst}, {"polygraphy_class", "AccuracyResults"}};
  write_file_atomically(path, j.dump(4) + "\n", "accuracy results file");
}

}  // namespace vkg
