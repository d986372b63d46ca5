// Helpers shared by the test_ops_*.cpp unit tests: attribute builders, node
// construction, running one node through the reference backend, and a few
// small tensor utilities.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/graph.h"
#include "runtime/core/tensor.h"
#include "runtime/reference/reference_backend.h"

namespace vkg::test {

using Attrs = std::map<std::string, Attribute>;

inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

inline Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}

inline Attribute floats_attr(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::Floats;
  a.floats = std::move(v);
  return a;
}

inline Attribute string_attr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}

inline Attribute tensor_attr(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::Tensor;
  a.t = std::move(t);
  return a;
}

// A node `op` called `name` whose inputs are named in0, in1, ... and outputs
// out0, out1, ...
inline Node make_named_node(const std::string& name, const std::string& op, size_t num_inputs, size_t num_outputs = 1,
                            Attrs attrs = {}) {
  Node n;
  n.name = name;
  n.op_type = op;
  for (size_t i = 0; i < num_inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < num_outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  n.attrs = std::move(attrs);
  return n;
}

// A node `op` called "<op>_node", inputs in0.., outputs out0...
inline Node op_node(const std::string& op, size_t num_inputs, size_t num_outputs = 1, Attrs attrs = {}) {
  return make_named_node(op + "_node", op, num_inputs, num_outputs, std::move(attrs));
}

// A node `op` called `name` reading and writing the named tensors (for graph tests).
inline Node graph_node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                       std::vector<std::string> outputs) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// Runs one node at `opset`; nullptr inputs are omitted optional inputs.
inline std::vector<Tensor> run(const Node& node, int64_t opset, const std::vector<const Tensor*>& inputs) {
  return run_reference_node(node, opset, inputs);
}

// Runs one node at `opset` and returns its first output.
inline Tensor run1(const Node& node, int64_t opset, const std::vector<const Tensor*>& inputs) {
  return run(node, opset, inputs).at(0);
}

// The elements of `t`, which must hold T.
template <class T> std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

// Every element of `actual` within `tol` of `expected` (same count), reported element by element.
inline void expect_all_near(const Tensor& actual, const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(size_t(actual.size()), expected.size()) << actual.describe();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.get_as_double(int64_t(i)), expected[i], tol) << "element " << i;
}

// A float32 tensor of uniform random values in [lo, hi), reproducible from `seed`.
inline Tensor random_floats(const Shape& shape, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(size_t(num_elements(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector<float>(shape, v);
}

}  // namespace vkg::test
