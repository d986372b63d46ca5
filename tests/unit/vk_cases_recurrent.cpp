// Conformance cases of the recurrent family (runtime/tactics/recurrent.cpp): RNN, GRU
// and LSTM forward, reverse and bidirectional; with and without biases, initial states,
// peepholes and sequence lengths (runtime and constant); clip; named activations with
// alpha and beta; GRU's linear_before_reset, LSTM's input_forget; layout 1 (opset 14);
// omitted optional outputs; hidden sizes below, at and above a workgroup, up to a CRNN's 512.
#include "tests/unit/vk_test_util.h"

namespace vkg::test {
namespace {

struct Sizes {
  int64_t seq, batch, input, hidden, directions;
};

Attribute strings_attr(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}

// A case of `op` (gates G) with W, R and B constant, optional inputs as asked.
VkCase recurrent(const std::string& name, const std::string& op, Sizes s, uint32_t seed, Attrs attrs = {},
                 bool bias = true, bool initial = false, std::optional<std::vector<int32_t>> lengths = std::nullopt,
                 bool peepholes = false, int64_t layout = 0) {
  const int64_t gates = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
  const float scale = 1.0f / float(std::max<int64_t>(s.hidden, s.input));
  const Shape x_shape = layout ? Shape{s.batch, s.seq, s.input} : Shape{s.seq, s.batch, s.input};
  const Shape state = layout ? Shape{s.batch, s.directions, s.hidden} : Shape{s.directions, s.batch, s.hidden};
  std::vector<std::optional<Tensor>> inputs = {
      random_floats(x_shape, seed, -2.0f, 2.0f),
      random_floats({s.directions, gates * s.hidden, s.input}, seed + 1, -4 * scale, 4 * scale),
      random_floats({s.directions, gates * s.hidden, s.hidden}, seed + 2, -4 * scale, 4 * scale)};
  std::set<size_t> constants = {1, 2};
  inputs.push_back(
      bias ? std::optional<Tensor>(random_floats({s.directions, 2 * gates * s.hidden}, seed + 3, -0.5f, 0.5f))
           : std::nullopt);
  if (bias) constants.insert(3);
  inputs.push_back(lengths ? std::optional<Tensor>(Tensor::from_vector<int32_t>({s.batch}, *lengths)) : std::nullopt);
  inputs.push_back(initial ? std::optional<Tensor>(random_floats(state, seed + 4)) : std::nullopt);
  if (op == "LSTM") {
    inputs.push_back(initial ? std::optional<Tensor>(random_floats(state, seed + 5)) : std::nullopt);
    inputs.push_back(peepholes
                         ? std::optional<Tensor>(random_floats({s.directions, 3 * s.hidden}, seed + 6, -0.5f, 0.5f))
                         : std::nullopt);
    if (peepholes) constants.insert(7);
  }
  while (!inputs.back()) inputs.pop_back();
  attrs["hidden_size"] = int_attr(s.hidden);
  if (s.directions == 2 && !attrs.count("direction")) attrs["direction"] = string_attr("bidirectional");
  if (layout) attrs["layout"] = int_attr(1);
  VkCase c = make_case(name, op, std::move(inputs), std::move(attrs), op == "LSTM" ? 3 : 2, std::move(constants));
  c.opset = 14;
  // A long recurrence carries fp32 rounding through every step.
  c.atol = 2e-4;
  c.atol_f16acc32 = 2e-3;
  return c;
}

}  // namespace

VKG_VK_CASES(recurrent) {
  std::vector<VkCase> cases;
  cases.push_back(recurrent("RNN forward 5x3x4 hidden 8", "RNN", {5, 3, 4, 8, 1}, 400));
  cases.push_back(recurrent("RNN forward 3x2x20 hidden 80", "RNN", {3, 2, 20, 80, 1}, 405));
  cases.push_back(recurrent("RNN reverse, initial_h, Relu, no B, 4x2x6 hidden 16", "RNN", {4, 2, 6, 16, 1}, 410,
                            {{"direction", string_attr("reverse")}, {"activations", strings_attr({"Relu"})}}, false,
                            true));
  cases.push_back(recurrent("RNN bidirectional, sequence_lens, layout 1, 6x3x5 hidden 7", "RNN", {6, 3, 5, 7, 2}, 420,
                            {}, true, true, std::vector<int32_t>{6, 2, 4}, false, 1));
  cases.push_back(recurrent("GRU forward 7x2x10 hidden 20", "GRU", {7, 2, 10, 20, 1}, 430));
  cases.push_back(recurrent("GRU linear_before_reset, bidirectional, initial_h, 5x3x4 hidden 96", "GRU",
                            {5, 3, 4, 96, 2}, 440, {{"linear_before_reset", int_attr(1)}}, true, true));
  cases.push_back(recurrent("GRU clip 0.5, HardSigmoid/ScaledTanh with alpha and beta, 4x1x3 hidden 5", "GRU",
                            {4, 1, 3, 5, 1}, 450,
                            {{"clip", float_attr(0.5f)},
                             {"activations", strings_attr({"HardSigmoid", "ScaledTanh"})},
                             {"activation_alpha", floats_attr({0.3f, 0.9f})},
                             {"activation_beta", floats_attr({0.4f, 1.2f})}}));
  cases.push_back(recurrent("LSTM forward 6x2x8 hidden 16", "LSTM", {6, 2, 8, 16, 1}, 460));
  cases.push_back(recurrent("LSTM peepholes, initial states, sequence_lens, bidirectional, 5x3x4 hidden 130", "LSTM",
                            {5, 3, 4, 130, 2}, 470, {}, true, true, std::vector<int32_t>{5, 0, 3}, true));
  cases.push_back(recurrent("LSTM input_forget, reverse, layout 1, LeakyRelu/Softsign/Elu, 3x2x5 hidden 9", "LSTM",
                            {3, 2, 5, 9, 1}, 480,
                            {{"input_forget", int_attr(1)},
                             {"direction", string_attr("reverse")},
                             {"activations", strings_attr({"Sigmoid", "Softsign", "Elu"})},
                             {"activation_alpha", floats_attr({0.7f})}},
                            true, true, std::nullopt, false, 1));
  // A CRNN's (ddddocr): long enough that one invocation looping over the whole sequence runs
  // past lavapipe's loop iteration limit (the workgroup tactics decline there).
  cases.push_back(recurrent("LSTM bidirectional, initial states, 12x1x512 hidden 512", "LSTM", {12, 1, 512, 512, 2},
                            500, {}, true, true));
  cases.push_back(recurrent("GRU reverse, initial_h, sequence_lens, 9x2x40 hidden 256", "GRU", {9, 2, 40, 256, 1},
                            510, {{"direction", string_attr("reverse")}}, true, true, std::vector<int32_t>{9, 4}));
  // Only Y_h (Y and Y_c omitted), Silero VAD's use.
  VkCase only_h = recurrent("LSTM Y_h only, 1x1x64 hidden 64", "LSTM", {1, 1, 64, 64, 1}, 490, {}, true, true);
  only_h.node.outputs[0] = "";
  only_h.node.outputs[2] = "";
  cases.push_back(std::move(only_h));
  return cases;
}

}  // namespace vkg::test
