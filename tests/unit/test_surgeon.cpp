// Surgeon library (extract, dead-node removal, sanitize, tensor specs) and model summaries.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "runtime/onnx/model_summary.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/onnx/surgeon.h"
#include "tests/unit/test_data_util.h"

namespace vkg {
namespace {

OnnxModel load_checked(const std::string& name) {
  OnnxModel model = load_onnx_model(test::polygraphy_model(name));
  EXPECT_TRUE(validate_onnx_model(model).empty());
  infer_shapes(model);
  return model;
}

std::vector<std::string> node_names(const OnnxModel& model) {
  std::vector<std::string> names;
  for (const auto& n : model.proto->graph().node()) names.push_back(n.op_type() + ":" + n.output(0));
  return names;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SurgeonSpec, ParsesInputSpecs) {
  TensorSpec s = parse_input_spec("x:[1,3,224,224]:float32");
  EXPECT_EQ(s.name, "x");
  ASSERT_TRUE(s.shape && s.dtype);
  ASSERT_EQ(s.shape->size(), 4u);
  EXPECT_EQ((*s.shape)[3].value, 224);
  EXPECT_EQ(*s.dtype, DType::Float32);

  s = parse_input_spec("x:auto:auto");
  EXPECT_EQ(s.name, "x");
  EXPECT_FALSE(s.shape || s.dtype);

  s = parse_input_spec("scope:x:[batch,?,-1,3]");
  EXPECT_EQ(s.name, "scope:x");
  ASSERT_TRUE(s.shape);
  EXPECT_EQ((*s.shape)[0].param, "batch");
  EXPECT_FALSE((*s.shape)[1].known());
  EXPECT_FALSE((*s.shape)[2].known());
  EXPECT_FALSE(s.dtype);

  s = parse_input_spec("x:auto:float16");
  EXPECT_EQ(*s.dtype, DType::Float16);
  EXPECT_FALSE(s.shape);
  EXPECT_EQ(parse_input_spec("plain").name, "plain");
  EXPECT_EQ(parse_input_spec("s:[]:int64").shape->size(), 0u);

  EXPECT_THROW(parse_input_spec("x:[1,3"), Error);
  EXPECT_THROW(parse_input_spec("x:[1,,3]:float32"), Error);
  EXPECT_THROW(parse_input_spec("x:[1,3]:float17"), Error);
  EXPECT_THROW(parse_input_spec(":[1]"), Error);
  EXPECT_NE(error_of([] { parse_input_spec("x:float32"); }).find("x:auto:float32"), std::string::npos);
}

TEST(SurgeonSpec, ParsesOutputSpecsAndByteSizes) {
  EXPECT_EQ(parse_output_spec("y:float32").dtype, DType::Float32);
  EXPECT_EQ(parse_output_spec("y:float32").name, "y");
  EXPECT_FALSE(parse_output_spec("y:auto").dtype);
  EXPECT_EQ(parse_output_spec("y:auto").name, "y");
  EXPECT_EQ(parse_output_spec("a:b").name, "a:b");
  EXPECT_THROW(parse_output_spec(":float32"), Error);

  EXPECT_EQ(parse_byte_size("4096"), 4096);
  EXPECT_EQ(parse_byte_size("16M"), 16 << 20);
  EXPECT_EQ(parse_byte_size("2k"), 2048);
  EXPECT_EQ(parse_byte_size("1G"), int64_t(1) << 30);
  EXPECT_THROW(parse_byte_size("16X"), Error);
  EXPECT_THROW(parse_byte_size("-1"), Error);
  EXPECT_THROW(parse_byte_size(""), Error);
}

TEST(SurgeonExtract, KeepsOnlyTheNodesBetweenInputsAndOutputs) {
  OnnxModel model = load_checked("reducable.onnx");
  extract_subgraph(model, {parse_input_spec("identity_out_0:auto:auto"), parse_input_spec("identity_out_2")},
                   {parse_output_spec("add_out_4")});
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Add:add_out_4"}));
  const auto& g = model.proto->graph();
  ASSERT_EQ(g.input_size(), 2);
  EXPECT_EQ(g.input(0).name(), "identity_out_0");
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(g.input(0).type().tensor_type().shape().dim(0).dim_value(), 1);
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "add_out_4");
  EXPECT_NO_THROW(check_model_before_saving(model, "the extracted model", true));
}

TEST(SurgeonExtract, DefaultsToTheModelsInputsAndGivenShapes) {
  OnnxModel model = load_checked("reducable.onnx");
  extract_subgraph(model, {parse_input_spec("X0:[1]:float32"), parse_input_spec("Y0:[1]:float32")},
                   {parse_output_spec("identity_out_6:float32")});
  EXPECT_EQ(node_names(model).size(), 4u);  // identity_out_8 is dropped
  EXPECT_NO_THROW(check_model_before_saving(model, "the extracted model", true));

  OnnxModel whole = load_checked("reducable.onnx");
  extract_subgraph(whole, {}, {parse_output_spec("add_out_4")});
  EXPECT_EQ(node_names(whole).size(), 3u);
  EXPECT_EQ(whole.proto->graph().input_size(), 2);
}

TEST(SurgeonExtract, ReportsImpossibleRequests) {
  OnnxModel model = load_checked("reducable.onnx");
  const std::string missing_input =
      error_of([&] { extract_subgraph(model, {parse_input_spec("X0")}, {parse_output_spec("identity_out_6")}); });
  EXPECT_NE(missing_input.find("depends on graph input 'Y0'"), std::string::npos) << missing_input;
  EXPECT_NE(error_of([&] { extract_subgraph(model, {parse_input_spec("nope")}, {}); }).find("no tensor 'nope'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { extract_subgraph(model, {}, {parse_output_spec("nope:float32")}); }).find("no tensor"),
            std::string::npos);
  EXPECT_THROW(extract_subgraph(model, {parse_input_spec("X0"), parse_input_spec("X0")}, {}), Error);
  // The model is unchanged by failed requests.
  EXPECT_EQ(node_names(model).size(), 5u);

  // Split produces both halves: one half cannot be an input while the other is still computed.
  OnnxModel split = load_checked("multi_output.onnx");
  const std::string producer = error_of(
      [&] { extract_subgraph(split, {parse_input_spec("split_out_0_2")}, {parse_output_spec("split_out_1_3")}); });
  EXPECT_NE(producer.find("depends on graph input 'input'"), std::string::npos) << producer;
  const std::string twice = error_of([&] {
    extract_subgraph(split, {parse_input_spec("split_out_0_2"), parse_input_spec("input")},
                     {parse_output_spec("split_out_1_3")});
  });
  EXPECT_NE(twice.find("produced by node"), std::string::npos) << twice;
}

TEST(SurgeonExtract, NeedsADtypeForEveryInput) {
  OnnxModel model = load_onnx_model(test::polygraphy_model("reducable.onnx"));
  model.proto->mutable_graph()->clear_value_info();  // nothing inferred
  const std::string e = error_of(
      [&] { extract_subgraph(model, {parse_input_spec("add_out_4")}, {parse_output_spec("identity_out_6:float32")}); });
  EXPECT_NE(e.find("data type of input 'add_out_4' is unknown"), std::string::npos) << e;
  extract_subgraph(model, {parse_input_spec("add_out_4:auto:float32")}, {parse_output_spec("identity_out_6:float32")});
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Identity:identity_out_6"}));
}

TEST(SurgeonCleanup, RemovesDeadNodes) {
  OnnxModel model = load_checked("cleanable.onnx");
  EXPECT_EQ(remove_dead_nodes(model), 1u);  // the Concat
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Dropout:h", "Identity:i"}));
  EXPECT_EQ(model.proto->graph().input_size(), 2);  // graph inputs stay
  EXPECT_NO_THROW(check_model_before_saving(model, "the cleaned model", true));
}

// x0 -> Identity -> x; y = If(cond) { then: x + outer_w } else { x }: both branches read outer tensors.
OnnxModel make_if_model() {
  auto proto = std::make_shared<onnx::ModelProto>();
  proto->set_ir_version(8);
  proto->add_opset_import()->set_version(13);
  auto* g = proto->mutable_graph();
  g->set_name("if_outer");
  auto add_tensor_info = [](onnx::ValueInfoProto* vi, const std::string& name, int elem_type) {
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  };
  add_tensor_info(g->add_input(), "x0", onnx::TensorProto::FLOAT);
  add_tensor_info(g->add_input(), "cond", onnx::TensorProto::BOOL);
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  tensor_to_proto(Tensor::from_vector<float>({2}, {1, 1}), "outer_w", g->add_initializer());
  auto* identity = g->add_node();
  identity->set_op_type("Identity");
  identity->add_input("x0");
  identity->add_output("x");
  auto* node = g->add_node();
  node->set_op_type("If");
  node->add_input("cond");
  node->add_output("y");
  auto* then_branch = node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::GRAPH);
  auto* add = then_branch->mutable_g()->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("outer_w");
  add->add_output("t_out");
  add_tensor_info(then_branch->mutable_g()->add_output(), "t_out", onnx::TensorProto::FLOAT);
  auto* else_branch = node->add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::GRAPH);
  auto* id = else_branch->mutable_g()->add_node();
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("e_out");
  add_tensor_info(else_branch->mutable_g()->add_output(), "e_out", onnx::TensorProto::FLOAT);
  return OnnxModel{proto, "if_outer.onnx"};
}

TEST(SurgeonCleanup, FollowsReadsFromSubgraphs) {
  OnnxModel model = make_if_model();
  EXPECT_EQ(remove_dead_nodes(model), 0u);
  EXPECT_EQ(model.proto->graph().initializer_size(), 1);  // read only inside the then-branch

  OnnxModel sub = make_if_model();
  extract_subgraph(sub, {parse_input_spec("x0"), parse_input_spec("cond")}, {parse_output_spec("y")});
  EXPECT_EQ(node_names(sub), (std::vector<std::string>{"Identity:x", "If:y"}));
  EXPECT_EQ(sub.proto->graph().initializer_size(), 1);
  const std::string e = error_of([] {
    OnnxModel m = make_if_model();
    extract_subgraph(m, {parse_input_spec("cond")}, {parse_output_spec("y")});
  });
  EXPECT_NE(e.find("depends on graph input 'x0'"), std::string::npos) << e;
}

TEST(SurgeonSanitize, FoldsConstantsToOneAdd) {
  OnnxModel model = load_checked("const_foldable.onnx");
  SanitizeOptions options;
  options.fold_constants = true;
  const SanitizeReport report = sanitize_model(model, options);
  EXPECT_EQ(report.nodes_before, 3u);
  EXPECT_EQ(report.nodes_folded, 2u);
  EXPECT_EQ(report.nodes_after, 1u);
  ASSERT_EQ(model.proto->graph().node_size(), 1);
  EXPECT_EQ(model.proto->graph().node(0).op_type(), "Add");
  EXPECT_EQ(model.proto->graph().initializer_size(), 1);
  EXPECT_NO_THROW(check_model_before_saving(model, "the sanitized model", true));
}

TEST(SurgeonSanitize, SizeThresholdKeepsTheTile) {
  OnnxModel bloated = load_checked("constant_fold_bloater.onnx");
  SanitizeOptions options;
  options.fold_constants = true;
  sanitize_model(bloated, options);
  EXPECT_EQ(bloated.proto->graph().node_size(), 0);

  OnnxModel kept = load_checked("constant_fold_bloater.onnx");
  options.fold_size_threshold = 16;
  const SanitizeReport report = sanitize_model(kept, options);
  EXPECT_EQ(report.nodes_folded, 0u);
  ASSERT_EQ(kept.proto->graph().node_size(), 1);
  EXPECT_EQ(kept.proto->graph().node(0).op_type(), "Tile");
}

TEST(SurgeonSanitize, OverridesInputShapesAndSorts) {
  OnnxModel model = load_onnx_model(test::polygraphy_model("dynamic_identity.onnx"));
  SanitizeOptions options;
  options.input_shapes["X"] = {1, 2, 5, 7};
  sanitize_model(model, options);
  const auto& out = model.proto->graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(out.dim_size(), 4);
  EXPECT_EQ(out.dim(3).dim_value(), 7);

  OnnxModel unsorted = load_onnx_model(test::polygraphy_model("unsorted.onnx"));
  SanitizeOptions sort;
  sort.toposort = true;
  sanitize_model(unsorted, sort);
  EXPECT_EQ(unsorted.proto->graph().node(0).output(0), "identity_out_0");
}

TEST(SurgeonSanitize, InfersShapesDespiteStaleDeclaredOnes) {
  // residual_block.onnx declares its output as a scalar; strict inference over that fails.
  OnnxModel model = load_onnx_model(test::polygraphy_model("residual_block.onnx"));
  EXPECT_NO_THROW(infer_shapes(model, /*strict=*/true));
  EXPECT_GT(model.proto->graph().value_info_size(), 10);
  // The declared rank is wrong; the inferred shape replaces it.
  EXPECT_EQ(model.proto->graph().output(0).type().tensor_type().shape().dim_size(), 4);

  OnnxModel renamable = load_onnx_model(test::polygraphy_model("renamable.onnx"));
  SanitizeOptions options;
  options.cleanup = true;
  EXPECT_NO_THROW(sanitize_model(renamable, options));

  // A real shape error stays an error.
  OnnxModel bad = load_onnx_model(test::polygraphy_model("bad_graph_with_parallel_invalid_nodes.onnx"));
  EXPECT_THROW(infer_shapes(bad, /*strict=*/true), Error);
}

TEST(ModelSummary, ShowsModelLayersAndWeights) {
  OnnxModel model = load_checked("const_foldable.onnx");
  const std::string plain = summarize_onnx_model(model);
  EXPECT_NE(plain.find("ONNX Opset: 11"), std::string::npos) << plain;
  EXPECT_NE(plain.find("---- 1 Graph Input(s) ----\n{input [dtype=float32, shape=(1, 3)]}"), std::string::npos);
  EXPECT_NE(plain.find("---- 3 Initializer(s), 36 B ----"), std::string::npos) << plain;
  EXPECT_NE(plain.find("Op counts: Add x3"), std::string::npos);
  EXPECT_EQ(plain.find("Node 0"), std::string::npos);

  SummaryOptions all;
  all.layers = all.attrs = all.weights = true;
  const std::string full = summarize_onnx_model(model, all);
  EXPECT_NE(full.find("Initializer | a [dtype=float32, shape=(1, 3)] | Stats: mean=1"), std::string::npos) << full;
  EXPECT_NE(full.find("[Op: Add]\n    {Initializer | a [dtype=float32, shape=(1, 3)],\n     Initializer | b"),
            std::string::npos)
      << full;
  EXPECT_NE(full.find(" -> {c [dtype=float32, shape=(1, 3)]}"), std::string::npos) << full;
}

TEST(ModelSummary, SurvivesUnknownOpsAndWeightlessInitializers) {
  OnnxModel custom = load_onnx_model(test::polygraphy_model("custom_op_node.onnx"));
  EXPECT_FALSE(validate_onnx_model(custom).empty());
  infer_shapes(custom, /*strict=*/false);
  SummaryOptions layers;
  layers.layers = layers.attrs = true;
  EXPECT_NE(summarize_onnx_model(custom, layers).find("[Op: NegPos"), std::string::npos);

  OnnxModel weightless = load_onnx_model(test::polygraphy_model("weightless.conv.onnx"));
  SummaryOptions weights;
  weights.weights = true;
  const std::string text = summarize_onnx_model(weightless, weights);
  EXPECT_NE(text.find("Values unavailable"), std::string::npos) << text;

  OnnxModel loop = load_onnx_model(test::polygraphy_model("loop.onnx"));
  SummaryOptions attrs;
  attrs.layers = attrs.attrs = true;
  const std::string loop_text = summarize_onnx_model(loop, attrs);
  EXPECT_NE(loop_text.find("Subgraph Input(s)"), std::string::npos) << loop_text;
  EXPECT_NE(loop_text.find("in subgraphs"), std::string::npos) << loop_text;
}

TEST(ModelSummary, FormatsValuesLikeNumpy) {
  const Tensor m = Tensor::from_vector<float>({2, 2}, {1.0f, 2.5f, -3.0f, 4.0f});
  EXPECT_EQ(format_values(m), "[[ 1. 2.5]\n [-3.  4.]]");
  EXPECT_EQ(format_values(Tensor::scalar<int64_t>(7)), "7");
  EXPECT_EQ(format_values(Tensor::from_vector<bool>({2}, {true, false})), "[ True False]");
  std::vector<int32_t> big(2000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = int32_t(i);
  EXPECT_EQ(format_values(Tensor::from_vector<int32_t>({2000}, big)), "[   0    1    2 ... 1997 1998 1999]");
  EXPECT_EQ(format_values(Tensor(DType::Float32, {0, 3})), "[[]]");
  EXPECT_NE(summarize_tensor("x", m, true).find("x [dtype=float32, shape=(2, 2)] | Stats: mean=1.125"),
            std::string::npos);
}

}  // namespace
}  // namespace vkg
