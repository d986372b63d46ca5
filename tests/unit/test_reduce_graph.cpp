// The model side of `debug reduce`: candidates, freezing, folding, pruning.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "debug/reduce_graph.h"
#include "runtime/onnx/surgeon.h"

namespace vkg::debug {
namespace {

std::string fixture(const std::string& name) {
  return std::string(VKGRAPHY_SOURCE_DIR) + "/tests/models/polygraphy/" + name;
}

ReductionGraph prepare(const std::string& name, const ReducePrepOptions& options = {}) {
  return ReductionGraph(load_onnx_model(fixture(name)), options);
}

// Index of the node whose name ends with `suffix` ("node_3" for "onnx_graphsurgeon_node_3").
size_t node_index(const ReductionGraph& g, const std::string& suffix) {
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const std::string& n = g.node_name(i);
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) return i;
  }
  ADD_FAILURE() << "no node " << suffix;
  return 0;
}

std::vector<std::string> node_names(const OnnxModel& m) {
  std::vector<std::string> out;
  for (const auto& n : m.proto->graph().node()) out.push_back(n.name());
  return out;
}

std::vector<std::string> names_of(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vis) {
  std::vector<std::string> out;
  for (const auto& vi : vis) out.push_back(vi.name());
  return out;
}

const onnx::TensorProto* find_initializer(const OnnxModel& m, const std::string& name) {
  for (const auto& t : m.proto->graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

std::vector<int64_t> dims_of(const onnx::ValueInfoProto& vi) {
  std::vector<int64_t> out;
  for (const auto& d : vi.type().tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

// Materializes `b` and expects ONNX's checker to accept the result.
OnnxModel checked(const ReductionGraph& g, const Boundary& b, std::vector<std::string>* frozen = nullptr) {
  OnnxModel m = g.materialize(b, frozen);
  EXPECT_EQ(onnx_checker_problem(m), "") << g.describe(b);
  return m;
}

TEST(ReduceGraph, PreparesReducable) {
  const ReductionGraph g = prepare("reducable.onnx");
  ASSERT_EQ(g.num_nodes(), 5u);
  EXPECT_EQ(g.whole(), (Boundary{{"X0", "Y0"}, {"identity_out_6", "identity_out_8"}}));
  const size_t add = node_index(g, "node_5");
  EXPECT_EQ(g.node_inputs(add), (std::vector<std::string>{"identity_out_0", "identity_out_2"}));
  EXPECT_EQ(g.node_outputs(add), (std::vector<std::string>{"add_out_4"}));
  EXPECT_EQ(g.nodes_of(g.whole()).size(), 5u);
  EXPECT_FALSE(g.has_dynamic_shapes());
  EXPECT_EQ(g.describe(g.whole()), "inputs [X0, Y0] -> outputs [identity_out_6, identity_out_8] (5 nodes)");
}

TEST(ReduceGraph, NodesOfCountsOnlyWhatTheOutputsNeed) {
  const ReductionGraph g = prepare("reducable.onnx");
  EXPECT_EQ(g.nodes_of({{"X0", "Y0"}, {"identity_out_6"}}).size(), 4u);
  EXPECT_EQ(g.nodes_of({{"X0", "Y0"}, {"add_out_4"}}).size(), 3u);
  EXPECT_EQ(g.nodes_of({{"identity_out_0", "identity_out_2"}, {"add_out_4"}}),
            (std::vector<size_t>{node_index(g, "node_5")}));
  EXPECT_EQ(g.nodes_of({{"X0", "Y0"}, {"identity_out_0"}}), (std::vector<size_t>{node_index(g, "node_1")}));
}

TEST(ReduceGraph, FreezesCutInputsAndFoldsWhatDependsOnlyOnThem) {
  ReducePrepOptions options;
  options.data.seed = 7;
  const ReductionGraph g = prepare("reducable.onnx", options);
  const Boundary b{{"Y0"}, {"add_out_4"}};
  EXPECT_EQ(g.nodes_of(b), (std::vector<size_t>{node_index(g, "node_3"), node_index(g, "node_5")}));
  std::vector<std::string> frozen;
  const OnnxModel m = checked(g, b, &frozen);
  EXPECT_EQ(frozen, (std::vector<std::string>{"X0"}));
  EXPECT_EQ(node_names(m), (std::vector<std::string>{"onnx_graphsurgeon_node_3", "onnx_graphsurgeon_node_5"}));
  EXPECT_EQ(names_of(m.proto->graph().input()), (std::vector<std::string>{"Y0"}));
  EXPECT_EQ(names_of(m.proto->graph().output()), (std::vector<std::string>{"add_out_4"}));
  ASSERT_EQ(m.proto->graph().initializer_size(), 1);

  // The frozen value is what `vkgraphy run --seed 7` feeds X0 (identity_out_0 = Identity(X0)).
  const onnx::TensorProto* init = find_initializer(m, "identity_out_0");
  ASSERT_NE(init, nullptr);
  const Graph whole = import_onnx(fixture("reducable.onnx"));
  DataLoaderOptions data;
  data.seed = 7;
  const Tensor expected = load_or_generate_inputs(whole.inputs, data).at(0).at("X0");
  EXPECT_TRUE(tensor_from_proto(*init).bit_equal(expected));
}

TEST(ReduceGraph, ConstantsBecomeInitializersNotInputs) {
  const ReductionGraph g = prepare("reducable_with_const.onnx");
  ASSERT_EQ(g.num_nodes(), 2u);  // the Constant is gone
  EXPECT_TRUE(g.whole().inputs.empty());
  const size_t first = node_index(g, "node_3");
  EXPECT_TRUE(g.node_inputs(first).empty());
  const Boundary b{{}, {"identity_out_2"}};
  EXPECT_EQ(g.nodes_of(b), (std::vector<size_t>{first}));
  std::vector<std::string> frozen;
  const OnnxModel m = checked(g, b, &frozen);
  EXPECT_TRUE(frozen.empty());
  EXPECT_EQ(m.proto->graph().input_size(), 0);
  EXPECT_EQ(node_names(m), (std::vector<std::string>{"onnx_graphsurgeon_node_3"}));
  EXPECT_NE(find_initializer(m, "constant_out_0"), nullptr);
  // A Constant's output can never be asked for as an input.
  EXPECT_THROW(g.nodes_of({{"constant_out_0"}, {"identity_out_2"}}), Error);
}

TEST(ReduceGraph, InputShapesReachTheOutputs) {
  for (const bool fallback : {false, true}) {
    SCOPED_TRACE(fallback ? "fallback" : "ONNX shape inference");
    ReducePrepOptions options;
    options.input_shapes["X"] = {1, 2, 5, 5};
    options.force_fallback = fallback;
    options.shape_inference = !fallback;
    const ReductionGraph g = prepare("dynamic_identity.onnx", options);
    EXPECT_FALSE(g.has_dynamic_shapes());
    const OnnxModel m = checked(g, g.whole());
    EXPECT_EQ(dims_of(m.proto->graph().input(0)), (std::vector<int64_t>{1, 2, 5, 5}));
    EXPECT_EQ(dims_of(m.proto->graph().output(0)), (std::vector<int64_t>{1, 2, 5, 5}));
  }
  EXPECT_TRUE(prepare("dynamic_identity.onnx").has_dynamic_shapes());
}

TEST(ReduceGraph, LazyFallbackFillsUnknownTypesWithoutShapeInference) {
  ReducePrepOptions options;
  options.shape_inference = false;
  const ReductionGraph g = prepare("reducable.onnx", options);
  EXPECT_TRUE(g.has_dynamic_shapes());  // intermediate tensors are not typed
  const OnnxModel m = checked(g, {{"identity_out_0", "identity_out_2"}, {"add_out_4"}});
  EXPECT_EQ(dims_of(m.proto->graph().input(0)), (std::vector<int64_t>{1}));
  EXPECT_EQ(m.proto->graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
}

TEST(ReduceGraph, PrunesSinksAndSources) {
  const ReductionGraph g = prepare("reducable.onnx");
  const Boundary whole = g.whole();
  // node_7 is a sink: identity_out_8 still reads add_out_4, which need not become an output.
  EXPECT_EQ(g.without_sink(whole, node_index(g, "node_7")), (Boundary{{"X0", "Y0"}, {"identity_out_8"}}));
  EXPECT_EQ(g.without_sink(whole, node_index(g, "node_5")), std::nullopt);  // read by node_7, node_9
  const Boundary one{{"X0", "Y0"}, {"identity_out_8"}};
  EXPECT_EQ(g.without_sink(one, node_index(g, "node_9")), (Boundary{{"X0", "Y0"}, {"add_out_4"}}));
  const Boundary add{{"X0", "Y0"}, {"add_out_4"}};
  EXPECT_EQ(g.without_sink(add, node_index(g, "node_5")),
            (Boundary{{"X0", "Y0"}, {"identity_out_0", "identity_out_2"}}));
  // Removing the last node leaves nothing.
  EXPECT_EQ(g.without_sink({{"X0"}, {"identity_out_0"}}, node_index(g, "node_1")), std::nullopt);
  EXPECT_EQ(g.without_sink(add, node_index(g, "node_7")), std::nullopt);  // not kept

  EXPECT_EQ(g.without_source(add, node_index(g, "node_1")), (Boundary{{"identity_out_0", "Y0"}, {"add_out_4"}}));
  EXPECT_EQ(g.without_source(add, node_index(g, "node_5")), std::nullopt);                           // not a source
  EXPECT_EQ(g.without_source({{"X0"}, {"identity_out_0"}}, node_index(g, "node_1")), std::nullopt);  // an output
  // Sources next to frozen tensors count: node_3 reads Y0 only.
  EXPECT_EQ(g.without_source({{"Y0"}, {"add_out_4"}}, node_index(g, "node_3")),
            (Boundary{{"identity_out_2"}, {"add_out_4"}}));

  // Every step materializes to a valid model.
  for (const Boundary& b :
       {*g.without_sink(whole, node_index(g, "node_7")), *g.without_source(add, node_index(g, "node_1"))})
    checked(g, b);
}

// Every boundary the reduce loop can form: the outputs phase, the inputs phase, then pruning.
void expect_every_candidate_valid(const std::string& name) {
  SCOPED_TRACE(name);
  const ReductionGraph g = prepare(name);
  std::vector<Boundary> todo, seen;
  todo.push_back(g.whole());
  for (size_t i = 0; i < g.num_nodes(); ++i) {
    const Boundary outputs_phase{g.whole().inputs, g.node_outputs(i)};
    todo.push_back(outputs_phase);
    for (size_t j = 0; j < g.num_nodes(); ++j) todo.push_back({g.node_inputs(j), outputs_phase.outputs});
  }
  while (!todo.empty()) {
    const Boundary b = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), b) != seen.end()) continue;
    seen.push_back(b);
    checked(g, b);
    for (size_t n : g.nodes_of(b)) {
      if (auto s = g.without_sink(b, n)) todo.push_back(*s);
      if (auto s = g.without_source(b, n)) todo.push_back(*s);
    }
  }
  EXPECT_GT(seen.size(), g.num_nodes());
}

TEST(ReduceGraph, EveryCandidatePassesTheChecker) {
  expect_every_candidate_valid("multi_output.onnx");
  expect_every_candidate_valid("reducable.onnx");
  expect_every_candidate_valid("reducable_with_const.onnx");
}

TEST(ReduceGraph, SplitWithAnOutputAlsoGivenAsInput) {
  const ReductionGraph g = prepare("multi_output.onnx");
  // The Split is needed for split_out_1_3 and also produces the input split_out_0_2: its own
  // copy is renamed, so the tensor is defined once.
  const Boundary b{{"input", "split_out_0_2"}, {"identity_out_5", "split_out_1_3"}};
  EXPECT_EQ(g.nodes_of(b).size(), 3u);
  const OnnxModel m = checked(g, b);
  EXPECT_EQ(m.proto->graph().node(1).output(0), "split_out_0_2_reduce_unused");
  // Without `input`, the Split computes from frozen values only: split_out_1_3 is frozen too.
  std::vector<std::string> frozen;
  const OnnxModel folded = checked(g, {{"split_out_0_2"}, {"identity_out_5", "split_out_1_3"}}, &frozen);
  EXPECT_EQ(frozen, (std::vector<std::string>{"input"}));
  EXPECT_EQ(folded.proto->graph().node_size(), 1);
  EXPECT_NE(find_initializer(folded, "split_out_1_3"), nullptr);
  // A Split with one output unused is fine.
  checked(g, {{"input"}, {"split_out_1_3"}});
}

TEST(ReduceGraph, BadBoundariesAreClearErrors) {
  const ReductionGraph g = prepare("reducable.onnx");
  auto expect_error = [&](const Boundary& b, const std::string& needle) {
    try {
      g.materialize(b);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({{"X0"}, {"nope"}}, "no tensor 'nope'");
  expect_error({{"missing"}, {"add_out_4"}}, "no tensor 'missing'");
  expect_error({{"X0", "X0"}, {"add_out_4"}}, "twice");
  expect_error({{"X0"}, {}}, "at least one output");
  EXPECT_THROW(g.nodes_of({{}, {"nope"}}), Error);
}

TEST(ReduceGraph, SavesReducedModels) {
  const ReductionGraph g = prepare("reducable.onnx");
  const std::string path =
      (std::filesystem::temp_directory_path() / ("vkgraphy_reduce_" + std::to_string(::getpid()) + ".onnx")).string();
  save_reduced_model(g.materialize({{"Y0"}, {"add_out_4"}}), path);
  const OnnxModel back = load_onnx_model(path);
  EXPECT_EQ(back.proto->graph().node_size(), 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vkg::debug
