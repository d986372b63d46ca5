// `surgeon insert` (Polygraphy's): one node put into a model between chosen tensors, replacing
// whatever computed its outputs before.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/onnx/onnx_import.h"

namespace onnx {
class AttributeProto;
}

namespace vkg {

struct InsertNodeSpec {
  std::string op;
  std::string name;                 // "" leaves the node unnamed
  std::vector<std::string> inputs;  // tensors of the model, in order
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::string>> attrs;  // name, value as typed (parse_node_attribute)
};

// The suffix of the new tensor an output that is also an input gets (Polygraphy's).
inline constexpr char kInsertOutputSuffix[] = "_polygraphy_surgeon_insert_output";

// Inserts a node of `spec.op` (default domain) reading `spec.inputs` and writing `spec.outputs`
// after the last producer of its inputs, then removes the nodes nothing needs any more (what
// computed those outputs before). An output that is not an input is the existing tensor of that
// name, taken from its producer. An output that is also an input is a new tensor: the nodes that
// read the input read the new tensor instead; its name is the output's with kInsertOutputSuffix,
// except for a graph output, which keeps its name (and its dtype, not its shape) while the input
// tensor takes the suffix. Throws Error naming a tensor the model does not have, or a graph input
// or initializer given as an output. Returns the number of nodes removed.
size_t insert_node(OnnxModel& model, const InsertNodeSpec& spec);

// Whether ONNX (with vkgraphy's schemas of newer opsets) defines `op` at the model's opset.
bool is_onnx_op(const OnnxModel& model, const std::string& op);

// An attribute value as Polygraphy's --attrs reads it: "[a,b]" a list of such values, an integer,
// a number (a point or exponent) a float, anything else a string without its quotes ("'53'": the
// string 53). Lists of integers are INTS, of numbers FLOATS, of strings STRINGS. Throws Error for
// a list that mixes strings and numbers.
onnx::AttributeProto parse_node_attribute(const std::string& name, const std::string& value);

}  // namespace vkg
