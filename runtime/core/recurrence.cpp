#include "runtime/core/recurrence.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "runtime/core/error.h"

namespace vkg {

RecurrentLayout recurrent_layout(const Node& node, int64_t opset, const Shape& x, const Shape& w) {
  VKG_CHECK(x.size() == 3 && w.size() == 3,
            node.describe() << ": X and W must be 3-D, got " << shape_to_string(x) << " and " << shape_to_string(w));
  RecurrentLayout r;
  r.cell = node.op_type == "RNN"   ? RecurrentCell::Rnn
           : node.op_type == "GRU" ? RecurrentCell::Gru
                                   : RecurrentCell::Lstm;
  r.gates = r.cell == RecurrentCell::Rnn ? 1 : r.cell == RecurrentCell::Gru ? 3 : 4;
  r.batch_first = opset >= 14 && node.attr_int("layout", 0) != 0;
  r.seq = x[r.batch_first ? 1 : 0];
  r.batch = x[r.batch_first ? 0 : 1];
  r.input = x[2];
  const std::string direction = node.attr_string("direction", "forward");
  VKG_CHECK(direction == "forward" || direction == "reverse" || direction == "bidirectional",
            node.describe() << ": unknown direction '" << direction << "'");
  r.directions = direction == "bidirectional" ? 2 : 1;
  r.reverse = direction == "reverse";
  r.hidden = node.attr_int("hidden_size", w[1] / r.gates);
  VKG_CHECK(w[0] == r.directions && w[1] == r.gates * r.hidden && w[2] == r.input,
            node.describe() << ": W has shape " << shape_to_string(w) << ", expected [" << r.directions << ", "
                            << r.gates << " * hidden_size " << r.hidden << ", " << r.input << "]");
  r.clip = node.attr_float("clip", 0.0f);
  VKG_CHECK(r.clip >= 0, node.describe() << ": clip must not be negative");
  r.linear_before_reset = r.cell == RecurrentCell::Gru && node.attr_int("linear_before_reset", 0) != 0;
  r.input_forget = r.cell == RecurrentCell::Lstm && node.attr_int("input_forget", 0) != 0;
  return r;
}

double RecurrentActivation::operator()(double x) const {
  switch (fn) {
    case RecurrentFn::Sigmoid:
      return 1 / (1 + std::exp(-x));
    case RecurrentFn::Tanh:
      return std::tanh(x);
    case RecurrentFn::Relu:
      return x > 0 ? x : 0;
    case RecurrentFn::Affine:
      return alpha * x + beta;
    case RecurrentFn::LeakyRelu:
      return x >= 0 ? x : alpha * x;
    case RecurrentFn::ThresholdedRelu:
      return x > alpha ? x : 0;
    case RecurrentFn::ScaledTanh:
      return alpha * std::tanh(beta * x);
    case RecurrentFn::HardSigmoid:
      return std::max(0.0, std::min(1.0, alpha * x + beta));
    case RecurrentFn::Elu:
      return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case RecurrentFn::Softsign:
      return x / (1 + std::abs(x));
    case RecurrentFn::Softplus:
      return std::log1p(std::exp(x));
  }
  return x;
}

namespace {

struct Known {
  RecurrentFn fn;
  double alpha = 0, beta = 0;
  bool takes_alpha = false, takes_beta = false;
};

const std::map<std::string, Known>& known_activations() {
  static const std::map<std::string, Known> known = {
      {"Sigmoid", {RecurrentFn::Sigmoid}},
      {"Tanh", {RecurrentFn::Tanh}},
      {"Relu", {RecurrentFn::Relu}},
      {"Affine", {RecurrentFn::Affine, 1, 0, true, true}},
      {"LeakyRelu", {RecurrentFn::LeakyRelu, 0.01, 0, true, false}},
      {"ThresholdedRelu", {RecurrentFn::ThresholdedRelu, 1, 0, true, false}},
      {"ScaledTanh", {RecurrentFn::ScaledTanh, 1, 1, true, true}},
      {"HardSigmoid", {RecurrentFn::HardSigmoid, 0.2, 0.5, true, true}},
      {"Elu", {RecurrentFn::Elu, 1, 0, true, false}},
      {"Softsign", {RecurrentFn::Softsign}},
      {"Softplus", {RecurrentFn::Softplus}}};
  return known;
}

}  // namespace

std::vector<std::vector<RecurrentActivation>> recurrent_activations(const Node& node, int64_t directions) {
  const std::vector<std::string> defaults = node.op_type == "RNN" ? std::vector<std::string>{"Tanh"}
                                            : node.op_type == "GRU"
                                                ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  const size_t per_direction = defaults.size();
  std::vector<std::string> names;
  if (node.has_attr("activations")) {
    names = node.attrs.at("activations").strings;
  } else {
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  VKG_CHECK(names.size() == per_direction * size_t(directions),
            node.describe() << ": " << names.size() << " activations for " << directions << " direction(s), expected "
                            << per_direction * size_t(directions));
  const std::vector<float> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RecurrentActivation>> out(static_cast<size_t>(directions));
  for (size_t k = 0; k < names.size(); ++k) {
    auto it = known_activations().find(names[k]);
    VKG_CHECK(it != known_activations().end(), node.describe() << ": unknown activation '" << names[k] << "'");
    const Known& a = it->second;
    RecurrentActivation act{a.fn, a.alpha, a.beta};
    if (a.takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (a.takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out[k / per_direction].push_back(act);
  }
  return out;
}

}  // namespace vkg
