// The activations of ONNX's recurrent ops (RNN, GRU, LSTM) as plain data: which
// function each gate uses in each direction, with its alpha and beta. Shared by the
// reference kernels and the Vulkan tactics (which pass the codes to their shader).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/graph.h"

namespace vkg {

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
