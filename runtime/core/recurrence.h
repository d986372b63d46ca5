// ONNX's recurrent ops (RNN, GRU, LSTM) as plain data, read and checked once for the
// reference kernels and the Vulkan tactics: the layer's sizes and attributes, and which
// function each gate uses in each direction, with its alpha and beta (the tactics pass
// the codes to their shader).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"

namespace vkg {

// The order is the shaders' kCell (shaders/recurrent/).
enum class RecurrentCell : uint32_t { Rnn, Gru, Lstm };

// A recurrent node's sizes and attributes.
struct RecurrentLayout {
  RecurrentCell cell = RecurrentCell::Rnn;
  int64_t gates = 1;  // 1, 3 or 4
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool batch_first = false;          // layout = 1 (opset 14 on)
  bool reverse = false;              // direction "reverse"
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
  float clip = 0;                    // 0: none
};

// The layout of an RNN, GRU or LSTM node with inputs X and W of these shapes. Throws
// Error naming the node when X or W is not 3-D, the direction is unknown, W does not
// match the sizes, or clip is negative.
RecurrentLayout recurrent_layout(const Node& node, int64_t opset, const Shape& x, const Shape& w);

// The order is the shader's codes (shaders/recurrent/cell.comp).
enum class RecurrentFn : uint32_t {
  Sigmoid,
  Tanh,
  Relu,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct RecurrentActivation {
  RecurrentFn fn = RecurrentFn::Tanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const;
};

// The functions per gate of each direction (RNN: f; GRU: f, g; LSTM: f, g, h), from
// `activations` or ONNX's defaults; activation_alpha and activation_beta are consumed in
// order by the functions that take them, the others keep ONNX's default values. Throws
// Error naming the node for an unknown name or a wrong count.
std::vector<std::vector<RecurrentActivation>> recurrent_activations(const Node& node, int64_t directions);

}  // namespace vkg
