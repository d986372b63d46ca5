#include "tools/args_comparator.h"

#include "runtime/data/option_parsing.h"
#include "tools/args_validators.h"

namespace vkg {

void ComparatorArgs::add_tolerances(CLI::Option_group* group) {
  as_list(group->add_option("--atol", atol_,
                            "Absolute tolerance, per output as NAME:VALUE (default 1e-5). Example: --atol 1e-5 y:1e-3"))
      ->check(checked_by("--atol", "[NAME:]VALUE", [](const std::string& a) { parse_tolerances({a}, "--atol"); }));
  as_list(group->add_option("--rtol", rtol_,
                            "Relative tolerance, per output as NAME:VALUE (default 1e-5), "
                            "relative to the second output"))
      ->check(checked_by("--rtol", "[NAME:]VALUE", [](const std::string& a) { parse_tolerances({a}, "--rtol"); }));
  as_list(group->add_option("--check-error-stat", error_stat_,
                            "Error statistic to check against the tolerances, per output as NAME:STAT: "
                            "elemwise (default: each element), max, mean, median, quantile"))
      ->check(checked_by("--check-error-stat", "[NAME:]STAT",
                         [](const std::string& a) { parse_error_stats({a}, "--check-error-stat"); }));
}

void ComparatorArgs::add_tolerances_to(CLI::App& app) {
  add_tolerances(app.add_option_group("Comparator", "Tolerances the saved statistics are checked against"));
}

void ComparatorArgs::add_to(CLI::App& app) {
  CLI::Option_group* group = app.add_option_group("Comparator", "Options for comparing and checking outputs");
  add_tolerances(group);
  as_list(group->add_option("--error-quantile", error_quantile_,
                            "Quantile of the error checked by --check-error-stat quantile, in [0, 1] (default 0.99)"))
      ->check(checked_by("--error-quantile", "[NAME:]Q",
                         [](const std::string& a) { parse_quantiles({a}, "--error-quantile"); }));
  group->add_flag("--infinities-compare-equal", infinities_compare_equal_,
                  "Count matching +-inf values as equal (error 0) instead of NaN");
  group->add_flag("--no-shape-check", no_shape_check_,
                  "Compare outputs of different shapes when they can be reshaped or transposed to match");
  group->add_flag("--fail-fast", fail_fast_, "Stop at the first output that does not match");
  group->add_flag("--validate", validate_, "Check outputs for NaNs and infinities");
  as_list(group->add_option("--load-outputs,--load-results", load_outputs_,
                            "Outputs files (written by --save-outputs or Polygraphy) to compare against"));
  group->add_option("--save-outputs,--save-results", save_outputs_, "Save the outputs of this run to this JSON file");
}

CompareOptions ComparatorArgs::options() const {
  CompareOptions o;
  o.atol = parse_tolerances(atol_, "--atol");
  o.rtol = parse_tolerances(rtol_, "--rtol");
  o.check_error_stat = parse_error_stats(error_stat_, "--check-error-stat");
  o.error_quantile = parse_quantiles(error_quantile_, "--error-quantile");
  o.fail_fast = fail_fast_;
  o.infinities_compare_equal = infinities_compare_equal_;
  o.check_shapes = !no_shape_check_;
  return o;
}

ValidateOptions ComparatorArgs::validate_options() const {
  ValidateOptions o;
  o.fail_fast = fail_fast_;
  return o;
}

}  // namespace vkg
