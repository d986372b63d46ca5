// Polygraphy's `data concat` and `data merge` over loaded data files (tools/data.cpp): the
// iterations of several files in one file, and inputs with (layerwise) outputs in one inputs file
// that --load-inputs takes, e.g. to check a subgraph of `debug reduce` on a model's real activations.
#pragma once

#include <string>
#include <vector>

#include "runtime/data/run_results.h"

namespace vkg {

struct NamedDataFile {
  std::string path;  // for messages
  DataFile data;
};

// The iterations of every file, in order, in one file of their kind. Inputs are appended; outputs
// are joined by runner name, a runner's iterations extending those of the first run of its name
// (Polygraphy's RunResults.concat). Throws when inputs and outputs are mixed. Warns when an
// iteration holds other tensor names than the first iteration of its stream (the inputs, or a runner).
DataFile concat_data(const std::vector<NamedDataFile>& files);

// One inputs file: iteration i holds the tensors of iteration i of every file (an inputs file's
// feed, each runner's outputs of an outputs file), a later file's tensor replacing an earlier one
// of the same name (warned once). Files with other iteration counts than the ones before are
// warned about: the iterations they lack stay without their tensors.
std::vector<TensorMap> merge_data(const std::vector<NamedDataFile>& files);

}  // namespace vkg
