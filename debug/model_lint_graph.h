// The findings of `check lint` that look at the graph's structure alone (debug/model_lint.h):
// Polygraphy's (inputs and nodes the outputs do not need) and more (stale recorded shapes,
// outputs no one reads, parts of the graph that share no tensor).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "debug/model_lint.h"

namespace onnx {
class GraphProto;
}

namespace vkg::debug {

// Which nodes the graph's outputs depend on (through inputs and the tensors subgraphs read);
// `read`, if given, receives every tensor they read and the outputs.
std::vector<bool> nodes_the_outputs_need(const onnx::GraphProto& g, std::set<std::string>* read);
// Warnings for the runtime inputs (sorted) and the nodes (by name) the outputs do not need, as
// Polygraphy's lint reports them. Returns those nodes' names.
std::vector<std::string> report_unused(const onnx::GraphProto& g, LintReport& report);
// Warnings for value_info entries whose recorded type or shape contradicts shape inference
// (ONNX Runtime refuses such a model at load; vkgraphy's import trusts inference).
void report_recorded_shapes(const OnnxModel& model, LintReport& report);
// Infos for outputs of nodes the model needs that neither a node nor the graph's outputs read.
void report_unread_outputs(const onnx::GraphProto& g, LintReport& report);
// Infos, one per part, when the nodes fall into parts that share no tensor but initializers.
void report_disconnected_parts(const onnx::GraphProto& g, LintReport& report);

}  // namespace vkg::debug
