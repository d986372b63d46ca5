// Polygraphy's `surgeon weight-strip` and `surgeon weight-reconstruct`: a model shared without its
// weights, and proxy weights put back so that it builds and runs (its layers and tactics those of
// the original; its numbers not).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "runtime/onnx/onnx_import.h"

namespace vkg {

// The doc_string mark of a stripped initializer ("TRT_WEIGHTLESS/" or, for a weight whose values
// were 2:4 structured-sparse, "TRT_WEIGHTLESS/SPARSE_2_4"), and of a model with any.
inline constexpr char kWeightlessMark[] = "TRT_WEIGHTLESS";
inline constexpr char kSparseMark[] = "SPARSE_2_4";

struct StripReport {
  size_t stripped = 0;
  std::set<std::string> excluded_not_found;  // names of the exclude list the model does not strip
};

// Removes the data of the weights Polygraphy strips, keeping their names, types and shapes: every
// initializer input of Conv, ConvTranspose, Gemm and MatMul, Gather's and Slice's data of at least
// 1024 elements, the constant fed to a QuantizeLinear -> DequantizeLinear or a Transpose in front of
// one of the first four (where Polygraphy's patterns put it), and the constant inputs of ops ONNX
// does not define (plugins). uint8 initializers and those `exclude` names stay.
StripReport strip_weights(OnnxModel& model, const std::set<std::string>& exclude);

// Fills every stripped initializer with proxy values (normal, mean 0 and deviation 1, from `seed`,
// cast to its type), pruned to 2:4 structured sparsity along its reduction axis where the stripped
// weight was sparse. Returns how many were filled.
size_t reconstruct_weights(OnnxModel& model, uint64_t seed);

}  // namespace vkg
