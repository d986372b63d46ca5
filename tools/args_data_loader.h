// The data loader's command-line options (Polygraphy's "Data Loader" group):
//   --seed N, --val-range [NAME:][MIN,MAX]..., --iterations N,
//   --load-inputs PATH..., --save-inputs PATH
// Input shapes come from the model options (--input-shapes) via set_input_shapes().
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/data/data_loader.h"

namespace vkg {

class DataLoaderArgs {
 public:
  // Adds the options to `app` in an option group named "Data Loader".
  void add_to(CLI::App& app);

  // The parsed options (valid once the app has parsed the command line).
  DataLoaderOptions options() const;
  // Where to save the inputs that were used (--save-inputs), "" for nowhere.
  const std::string& save_inputs_path() const { return save_inputs_; }

  void set_input_shapes(std::map<std::string, Shape> shapes) { input_shapes_ = std::move(shapes); }

 private:
  uint64_t seed_ = 1;
  std::vector<std::string> val_ranges_;
  int iterations_ = 1;
  std::vector<std::string> load_inputs_;
  std::string save_inputs_;
  std::map<std::string, Shape> input_shapes_;
};

}  // namespace vkg
