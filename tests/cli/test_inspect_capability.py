"""`vkgraphy inspect capability`: the nodes the Vulkan builder takes on lavapipe, the model split into
supported and unsupported subgraphs saved as ONNX files, and results.txt in Polygraphy's layout
(Polygraphy's own tool asks TensorRT, which the test machine lacks)."""
import os

import onnx
from onnx import TensorProto, helper

from vkgraphy_cli import VK_MODELS, CliTestCase

DUMPS = "vkgraphy_capability_dumps"


def mixed_model(path):
    """Relu, then a float64 round trip (no Vulkan dtype), Sigmoid, a custom op, Relu: supported and
    unsupported runs in turn."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="first"),
        helper.make_node("Cast", ["a"], ["wide"], to=TensorProto.DOUBLE, name="widen"),
        helper.make_node("Cast", ["wide"], ["b"], to=TensorProto.FLOAT, name="narrow"),
        helper.make_node("Sigmoid", ["b"], ["c"], name="gate"),
        helper.make_node("Scramble", ["c"], ["d"], domain="example.custom", name="plugin"),
        helper.make_node("Relu", ["d"], ["y"], name="last"),
    ]
    graph = helper.make_graph(nodes, "mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                              # the custom op's output, which no shape inference can know
                              value_info=[helper.make_tensor_value_info("d", TensorProto.FLOAT, [1, 4, 8, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.custom", 1)])
    model.ir_version = 8
    onnx.save(model, path)


class InspectCapability(CliTestCase):
    def test_a_supported_model_writes_nothing(self):
        out = self.vkgraphy("inspect", "capability", os.path.join(VK_MODELS, "example.onnx"))
        self.assertIn("Graph is fully supported by the Vulkan builder", out)
        self.assertFalse(os.path.exists(self.path(DUMPS)))

    def test_partitions_into_supported_and_unsupported_subgraphs(self):
        mixed_model(self.path("mixed.onnx"))
        out = self.vkgraphy("inspect", "capability", "mixed.onnx")
        files = sorted(os.listdir(self.path(DUMPS)))
        self.assertEqual(files, ["results.txt", "supported_subgraph-nodes-0-0.onnx", "supported_subgraph-nodes-3-3.onnx",
                                 "supported_subgraph-nodes-5-5.onnx", "unsupported_subgraph-nodes-1-2.onnx",
                                 "unsupported_subgraph-nodes-4-4.onnx"])
        with open(self.path(os.path.join(DUMPS, "results.txt"))) as f:
            results = f.read()
        self.assertIn(results.splitlines()[2], out)  # the table is printed too
        rows = {}  # op -> [op, count, reasons (" | " between those of a run's nodes), node ranges]
        for line in results.splitlines()[3:]:
            cells = [c.strip() for c in line.split("|")]
            rows[cells[0]] = [cells[0], cells[1], " | ".join(cells[2:-1]), cells[-1]]
        self.assertEqual(rows["Cast"][1], "1")
        self.assertIn("float64", rows["Cast"][2])
        self.assertEqual(rows["Cast"][3], "[[1, 3]]")
        self.assertIn("no tactic for these ops: example.custom::Scramble", rows["Scramble"][2])
        self.assertEqual(rows["Scramble"][3], "[[4, 5]]")
        # Each subgraph is the run of nodes it names, between the tensors around it.
        cast = onnx.load(self.path(os.path.join(DUMPS, "unsupported_subgraph-nodes-1-2.onnx")))
        self.assertEqual([n.name for n in cast.graph.node], ["widen", "narrow"])
        self.assertEqual(([i.name for i in cast.graph.input], [o.name for o in cast.graph.output]), (["a"], ["b"]))
        gate = self.path(os.path.join(DUMPS, "supported_subgraph-nodes-3-3.onnx"))
        self.assertEqual([i.name for i in onnx.load(gate).graph.input], ["b"])
        self.vkgraphy("run", gate, "--vk", "--ref")  # a supported subgraph builds and runs

    def test_shapes_come_from_input_shapes(self):
        """A dynamic input leaves its consumers' shapes unknown only until --input-shapes fixes it;
        the builder's static shapes then take every node."""
        mixed_model(self.path("mixed.onnx"))
        model = onnx.load(self.path("mixed.onnx"))
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
        del model.graph.node[1:5]
        model.graph.node[1].input[0] = "a"
        onnx.save(model, self.path("dynamic.onnx"))
        out = self.vkgraphy("inspect", "capability", "dynamic.onnx", "--input-shapes", "x:[2,4,8,8]")
        self.assertIn("Graph is fully supported", out)

    def test_a_node_after_an_unknown_shape_says_so(self):
        mixed_model(self.path("mixed.onnx"))
        model = onnx.load(self.path("mixed.onnx"))
        del model.graph.value_info[:]
        onnx.save(model, self.path("unknown.onnx"))
        self.vkgraphy("inspect", "capability", "unknown.onnx")
        with open(self.path(os.path.join(DUMPS, "results.txt"))) as f:
            self.assertIn("the type or shape of its input 'd' is not known (give --input-shapes)", f.read())
        self.assertTrue(os.path.exists(self.path(os.path.join(DUMPS, "unsupported_subgraph-nodes-4-5.onnx"))))

    def test_a_branch_reading_outer_tensors_is_saved_with_them(self):
        """An If whose branches read a tensor of the graph around them: its subgraph file takes that
        tensor (and the condition) as inputs."""
        then_g = helper.make_graph([helper.make_node("Add", ["b", "b"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4])])
        else_g = helper.make_graph([helper.make_node("Neg", ["b"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 4])])
        nodes = [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Cast", ["a"], ["wide"], to=TensorProto.DOUBLE, name="widen"),
            helper.make_node("Cast", ["wide"], ["b"], to=TensorProto.FLOAT, name="narrow"),
            helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="choose"),
        ]
        graph = helper.make_graph(nodes, "branches", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
                                                      helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, self.path("branches.onnx"))
        self.vkgraphy("inspect", "capability", "branches.onnx")
        chosen = onnx.load(self.path(os.path.join(DUMPS, "supported_subgraph-nodes-3-3.onnx")))
        self.assertEqual(sorted(i.name for i in chosen.graph.input), ["b", "c"])
        self.vkgraphy("run", self.path(os.path.join(DUMPS, "supported_subgraph-nodes-3-3.onnx")), "--ref")

    def test_bad_input_is_a_clear_error(self):
        out = self.vkgraphy("inspect", "capability", "missing.onnx", expect=3)
        self.assertIn("missing.onnx", out)
