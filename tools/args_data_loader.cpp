#include "tools/args_data_loader.h"

#include <limits>

#include "runtime/data/option_parsing.h"
#include "tools/args_validators.h"

namespace vkg {

void DataLoaderArgs::add_to(CLI::App& app) {
  CLI::App* group = app.add_option_group("Data Loader", "Options for loading or generating input data");
  group->add_option("--seed", seed_, "Seed for random input data (numpy RandomState(seed + iteration), as Polygraphy)")
      ->check(CLI::Range(uint64_t(0), uint64_t(0xffffffffu)))
      ->capture_default_str();
  as_list(group->add_option("--val-range", val_ranges_,
                            "Range of generated values, [min,max], per input as NAME:[min,max]; default [0,1]. "
                            "Integers are drawn from [int(min), int(max)], floats from [min, max). "
                            "Example: --val-range [0,1] x:[-5,5]"))
      ->check(checked_by("--val-range", "[NAME:][MIN,MAX]",
                         [](const std::string& arg) { parse_value_ranges({arg}, "--val-range"); }));
  group->add_option("--iterations", iterations_, "Number of iterations of generated input data")
      ->check(CLI::Range(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  as_list(group->add_option("--load-inputs,--load-input-data", load_inputs_,
                            "Inputs files (written by --save-inputs) to use instead of generated data"));
  group->add_option("--save-inputs,--save-input-data", save_inputs_, "Save the input data used to this JSON file");
}

DataLoaderOptions DataLoaderArgs::options() const {
  DataLoaderOptions o;
  o.seed = seed_;
  o.val_range = parse_value_ranges(val_ranges_, "--val-range");
  o.iterations = iterations_;
  o.input_shapes = input_shapes_;
  o.load_inputs_paths = load_inputs_;
  return o;
}

}  // namespace vkg
