// Polygraphy's JSON files for inference outputs and inputs, read and written
// exactly as `polygraphy run --save-outputs/--save-inputs` and Polygraphy's
// RunResults.load / load_json do (see docs/data-formats.md):
//
//   outputs: {"lst": [[runner_name, [IterationResult, ...]], ...], "polygraphy_class": "RunResults"}
//            IterationResult = {"outputs": {name: array, ...}, "runtime": seconds,
//                               "runner_name": name, "polygraphy_class": "IterationResult"}
//   inputs:  [{name: array, ...}, ...]            (one feed dict per iteration)
//   array:   {"array": base64(.npy bytes), "polygraphy_class": "ndarray"}, inside outputs
//            wrapped as {"values": array, "polygraphy_class": "LazyNumpyArray" | "LazyArray"}
//
// Files from every Polygraphy version since 0.30 are read (including the legacy
// "__polygraphy_encoded_<class>" markers and latin-1 array payloads). Files are
// written the way Polygraphy 0.30-0.48 write them, which every later version reads too.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"

namespace vkg {

// The outputs of one inference iteration of one runner, in the runner's output order.
struct IterationResult {
  std::string runner_name;
  std::vector<std::pair<std::string, Tensor>> outputs;
  double runtime = 0;  // seconds; informational only

  const Tensor* find(const std::string& output) const;
  TensorMap to_map() const;
};

// Runner name -> per-iteration results, in run order (names may repeat, as in Polygraphy).
struct RunResults {
  std::vector<std::pair<std::string, std::vector<IterationResult>>> runs;
};

// A data file of either kind, told apart by what it holds (`data concat`, `data merge`): outputs
// (RunResults), or inputs: a list of feed dicts, or one feed dict alone, as Polygraphy's data
// tools take it.
struct DataFile {
  bool holds_outputs = false;
  RunResults outputs;               // when holds_outputs
  std::vector<TensorMap> inputs;    // otherwise: one per iteration
};

// Files. Every malformed file is an Error naming the file and what is wrong.
RunResults load_run_results(const std::string& path);
void save_run_results(const std::string& path, const RunResults& results);
std::vector<TensorMap> load_inputs(const std::string& path);
void save_inputs(const std::string& path, const std::vector<TensorMap>& inputs);

// The same, in memory. `source` names the data in error messages (usually the path).
RunResults run_results_from_json(std::string_view json, const std::string& source);
std::string run_results_to_json(const RunResults& results);
std::vector<TensorMap> inputs_from_json(std::string_view json, const std::string& source);
DataFile data_file_from_json(std::string_view json, const std::string& source);
DataFile load_data_file(const std::string& path);
std::string inputs_to_json(const std::vector<TensorMap>& inputs);

}  // namespace vkg
