// The comparator's command-line options (Polygraphy's "Comparator" groups):
//   --atol/--rtol [NAME:]VALUE..., --check-error-stat [NAME:]STAT...,
//   --error-quantile [NAME:]Q..., --infinities-compare-equal, --no-shape-check,
//   --fail-fast, --validate, --load-outputs PATH..., --save-outputs PATH
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/data/comparator.h"

namespace vkg {

class ComparatorArgs {
 public:
  // Adds the options to `app` in an option group named "Comparator".
  void add_to(CLI::App& app);
  // Adds only --atol, --rtol and --check-error-stat, in a group named "Comparator" (`check accuracy`,
  // which checks saved statistics against them).
  void add_tolerances_to(CLI::App& app);

  // The parsed options (valid once the app has parsed the command line).
  CompareOptions options() const;
  bool validate() const { return validate_; }
  ValidateOptions validate_options() const;
  // Outputs files to compare against (--load-outputs), in order.
  const std::vector<std::string>& load_outputs_paths() const { return load_outputs_; }
  // Where to save the outputs of this run (--save-outputs), "" for nowhere.
  const std::string& save_outputs_path() const { return save_outputs_; }

 private:
  std::vector<std::string> atol_, rtol_, error_stat_, error_quantile_;
  bool fail_fast_ = false;
  bool infinities_compare_equal_ = false;
  bool no_shape_check_ = false;
  bool validate_ = false;
  std::vector<std::string> load_outputs_;
  std::string save_outputs_;

  void add_tolerances(CLI::Option_group* group);
};

}  // namespace vkg
