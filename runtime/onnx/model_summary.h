// Human-readable summaries of ONNX models and of tensors, laid out like
// Polygraphy's `inspect model` and `inspect data`. Used by `vkgraphy inspect`
// and by any tool that wants to show a model or its data to the user.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"
#include "runtime/onnx/onnx_import.h"

namespace vkg {

struct SummaryOptions {
  bool layers = false;   // every node with its inputs and outputs (dtype/shape where known)
  bool attrs = false;    // node attributes (shown with the layers)
  bool weights = false;  // every initializer with statistics and values
};

// Text summary of an ONNX model: graph name, IR version, opsets, producer, graph
// inputs and outputs, initializer count and total size, node count and op
// histogram, then what `options` asks for. Shapes come from the model's
// value_info (run infer_shapes first to have them for every tensor). Works on
// models with ops ONNX does not know, on sub-graphs (If/Loop/Scan bodies are
// shown with the attributes) and on initializers without data (weightless or
// unsupported types: the summary says why their values are not shown). Lines are
// separated by '\n', without a trailing newline and without indentation.
std::string summarize_onnx_model(const OnnxModel& model, const SummaryOptions& options = {});

// "name [dtype=float32, shape=(1, 3)] | Stats: mean=..., std-dev=..., ..." (statistics as
// Polygraphy's `inspect data` prints them, "empty" for a tensor without elements), and with
// `values` the values on the following lines, indented by 4.
std::string summarize_tensor(const std::string& name, const Tensor& tensor, bool values);

// numpy-like text of the values: nested brackets, one innermost row per line; a
// tensor with more than `threshold` elements is summarised to `edge_items` items
// at both ends of every axis, with "..." between.
std::string format_values(const Tensor& tensor, int64_t threshold = 1000, int64_t edge_items = 3);

// "name [dtype=float32, shape=(1, 3, 224, 224)]" (the Polygraphy layout of tensor metadata).
std::string describe_tensor(const std::string& name, const Tensor& tensor);

}  // namespace vkg
