// ONNX import: reading, validation, shape handling, folding, sorting.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "runtime/onnx/onnx_import.h"
#include "runtime/reference/reference_backend.h"
#include "tests/unit/test_data_util.h"

namespace fs = std::filesystem;

namespace vkg {
namespace {

// A file in a folder of this process's own, removed when the tests end.
std::string temp_path(const std::string& name) {
  static const test::TempDir dir;
  return dir.file(name);
}

// Expects import to fail with a vkg::Error whose message contains `needle`.
void expect_import_error(const std::string& path, const std::string& needle) {
  try {
    import_onnx(path);
    FAIL() << path << " imported without error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, ReadsIrVersionsTheCheckerRefuses) {
  OnnxModel m = load_onnx_model(test::polygraphy_model("unsorted.onnx"));
  EXPECT_EQ(m.proto->ir_version(), 9);
  Graph g = import_onnx(m);
  ASSERT_EQ(g.nodes.size(), 2u);
  // Sorted: the node reading the graph input comes first.
  EXPECT_EQ(g.nodes[0].inputs[0], "input");
}

TEST(OnnxImport, ExternalDataBesideTheModel) {
  ImportOptions no_folding;
  no_folding.fold_constants = false;
  Graph g = import_onnx(test::polygraphy_model("ext_weights_same_dir/ext_weights.onnx"), no_folding);
  ASSERT_EQ(g.initializers.count("a"), 1u);
  EXPECT_EQ(g.initializers.at("a").shape(), (Shape{1, 3}));
}

TEST(OnnxImport, ExternalDataInAnotherFolder) {
  expect_import_error(test::polygraphy_model("ext_weights.onnx"), "--external-data-dir");
  ImportOptions o;
  o.external_data_dir = test::polygraphy_model("data");
  Graph g = import_onnx(test::polygraphy_model("ext_weights.onnx"), o);
  EXPECT_FALSE(g.initializers.empty());
}

TEST(OnnxImport, FoldsConstants) {
  Graph g = import_onnx(test::polygraphy_model("const_foldable.onnx"));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  ReferenceBackend ref(g);
  TensorMap in;
  in["input"] = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  const TensorMap out = ref.run(in);
  // input + (a + b + d) with a, b, d all ones.
  EXPECT_EQ(out.at("output").to_doubles(), (std::vector<double>{4, 5, 6}));
}

TEST(OnnxImport, InputShapesFixDynamicDimensions) {
  ImportOptions o;
  o.input_shapes["X"] = {1, 2, 5, 5};
  Graph g = import_onnx(test::polygraphy_model("dynamic_identity.onnx"), o);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].concrete_shape(), (Shape{1, 2, 5, 5}));
  EXPECT_EQ(g.outputs[0].concrete_shape(), (Shape{1, 2, 5, 5}));
  o.input_shapes = {{"nope", {1}}};
  EXPECT_THROW(import_onnx(test::polygraphy_model("dynamic_identity.onnx"), o), Error);
  o.input_shapes = {{"X", {1, 2, 5}}};
  EXPECT_THROW(import_onnx(test::polygraphy_model("dynamic_identity.onnx"), o), Error);
}

TEST(OnnxImport, MalformedFixturesAreClearErrors) {
  expect_import_error(test::polygraphy_model("bad_graph_with_dup_value_info.onnx"), "declared twice");
  expect_import_error(test::polygraphy_model("bad_graph_with_no_name.onnx"), "no name");
  expect_import_error(test::polygraphy_model("bad_graph_with_no_import_domains.onnx"), "opset");
  expect_import_error(test::polygraphy_model("bad_graph_with_multi_level_errors.onnx"), "no name");
  expect_import_error(test::polygraphy_model("bad_graph_with_parallel_invalid_nodes.onnx"), "shape inference");
  expect_import_error(test::polygraphy_model("empty.onnx"), "no outputs");
  expect_import_error(test::polygraphy_model("custom_op_node.onnx"), "NegPos");
  expect_import_error(test::polygraphy_model("capability.onnx"), "FAKE!");
  expect_import_error(test::polygraphy_model("does_not_exist.onnx"), "does not exist");
}

TEST(OnnxImport, NodesSharingANameGetUniqueStableNames) {
  // ONNX's checker allows shared node names (Silero VAD's OpenVINO export has 15 'F0::anon'): the
  // second and later take "_2", "_3", ... in graph order, the first keeps its name.
  OnnxModel m = load_onnx_model(test::polygraphy_model("bad_graph_with_duplicate_node_names.onnx"));
  ASSERT_EQ(m.proto->graph().node_size(), 2);
  EXPECT_EQ(m.proto->graph().node(0).name(), "identical");
  EXPECT_EQ(m.proto->graph().node(1).name(), "identical_2");
  const Graph g = import_onnx(test::polygraphy_model("bad_graph_with_duplicate_node_names.onnx"));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].name, "identical_2");
}

TEST(OnnxImport, UnsupportedOpsAreNamedByTheReferenceBackendInsideSubgraphsToo) {
  // Polygraphy's conditionally invalid model: If picks a constant whose shape MatMul accepts
  // in one branch only. Replace the else branch's op by one no backend has (import without
  // folding: it would fold the branch's Constant).
  ImportOptions unfolded;
  unfolded.fold_constants = false;
  Graph g = import_onnx(test::polygraphy_model("bad_graph_conditionally_invalid.onnx"), unfolded);
  Graph branch = g.nodes.at(0).attr_graph("else_branch");
  branch.nodes.at(0).op_type = "NoSuchOp";
  branch.nodes.at(0).name = "inner";
  g.nodes.at(0).attrs["else_branch"].g = std::make_shared<const Graph>(branch);
  try {
    ReferenceBackend ref(g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchOp ('inner')"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, ConditionallyInvalidModelFailsOnlyOnItsBadBranch) {
  const Graph g = import_onnx(test::polygraphy_model("bad_graph_conditionally_invalid.onnx"));
  const ReferenceBackend ref(g);
  int failures = 0;
  for (bool cond : {true, false}) {
    try {
      ref.run({{"cond", Tensor::from_vector<bool>({1}, {cond})}});
    } catch (const Error& e) {
      ++failures;
      EXPECT_NE(std::string(e.what()).find("MatMul"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(failures, 1);
}

TEST(OnnxImport, TruncatedAndForeignFilesAreClearErrors) {
  std::ifstream in(test::polygraphy_model("residual_block.onnx"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = temp_path("truncated.onnx");
  std::ofstream(truncated, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
  expect_import_error(truncated, "not a valid ONNX model");
  const std::string text = temp_path("text.onnx");
  std::ofstream(text) << "this is not a model\n";
  EXPECT_THROW(import_onnx(text), Error);
  const std::string empty = temp_path("empty_file.onnx");
  std::ofstream(empty).close();
  expect_import_error(empty, "is empty");
}

// x[2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape(x): the shape
// subgraph folds away and leaves a single Reshape.
TEST(OnnxImport, ShapeSubgraphsFold) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("shape_subgraph");
  auto add_value = [](onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(1);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_value(g->add_input(), "x", {2, 3, 4});
  add_value(g->add_output(), "y", {2, 12});
  auto add_node = [&](const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + outs[0]);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  };
  tensor_to_proto(Tensor::scalar<int64_t>(0), "zero", g->add_initializer());
  tensor_to_proto(Tensor::from_vector<int64_t>({1}, {0}), "axes", g->add_initializer());
  tensor_to_proto(Tensor::from_vector<int64_t>({1}, {-1}), "minus_one", g->add_initializer());
  add_node("Shape", {"x"}, {"shape"});
  add_node("Gather", {"shape", "zero"}, {"batch"});
  add_node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  auto* concat = add_node("Concat", {"batch1", "minus_one"}, {"target"});
  auto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  add_node("Reshape", {"x", "target"}, {"y"});
  OnnxModel model{std::make_shared<onnx::ModelProto>(m), "shape_subgraph"};
  Graph graph = import_onnx(model);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].op_type, "Reshape");
  EXPECT_EQ(graph.initializers.at("target").to_int64s(), (std::vector<int64_t>{2, -1}));
}

}  // namespace
}  // namespace vkg
