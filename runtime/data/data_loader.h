// Input data for inference, with the semantics of Polygraphy's DataLoader and
// its --load-inputs: synthetic inputs are generated exactly as Polygraphy
// generates them (numpy RandomState(seed + iteration), same draws, same order),
// so `vkgraphy run --seed N` feeds the same values as `polygraphy run --seed N`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

struct DataLoaderOptions {
  uint64_t seed = 1;
  // Per-input [min, max] (inclusive); the key "" sets the default for all inputs.
  // Default [0, 1]. Integer inputs use the truncated bounds, bool inputs bool(min), bool(max).
  std::map<std::string, std::pair<double, double>> val_range;
  int iterations = 1;
  // Concrete shapes for inputs with dynamic dimensions (the model args' --input-shapes).
  std::map<std::string, Shape> input_shapes;
  // Inputs files (as written by --save-inputs) to use instead of generated data.
  std::vector<std::string> load_inputs_paths;
};

// One feed dict per iteration for the graph inputs. With load_inputs_paths, the
// iterations of all files in order; otherwise `iterations` generated ones.
//  - floats are uniform in [min, max), integers uniform in [min, max], bools random;
//  - a dynamic dimension takes its value from input_shapes, else 1 (with a warning);
//  - a 1-D integer input whose input_shapes entry has as many dims as it has
//    elements is a shape tensor: the entry gives its values (as in Polygraphy).
// Throws Error for inputs of unknown dtype or rank without input_shapes, shapes
// that contradict the model, bad ranges, and loaded data that lacks an input or
// whose dtype or shape does not fit the model.
std::vector<TensorMap> load_or_generate_inputs(const std::vector<ValueInfo>& graph_inputs,
                                               const DataLoaderOptions& options);

// The shape of every tensor the --load-inputs files hold, which must be the same in all
// of their iterations (an engine is built for one shape): what fixes a model's dynamic
// input dimensions for the Vulkan builder. Empty without load_inputs_paths. Throws Error
// naming the file, iteration and tensor when a shape changes.
std::map<std::string, Shape> loaded_input_shapes(const DataLoaderOptions& options);

// The generated feed dict of one iteration (what load_or_generate_inputs returns
// at index `iteration` when no inputs are loaded).
TensorMap generate_inputs(const std::vector<ValueInfo>& graph_inputs, const DataLoaderOptions& options, int iteration);

}  // namespace vkg
