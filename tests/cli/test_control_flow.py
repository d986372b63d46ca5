"""If, Loop and Scan: the reference backend runs them (subgraphs reading outer-scope tensors),
and a Vulkan engine folds an If whose condition is known at build time, from a constant or
from an input the user freezes with --freeze-inputs. An If whose condition is computed at run
time is built with both branches: the engine reads the condition back and runs the branch it
selects; a branch that cannot be built at the engine's shapes fails only when selected."""
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

from vkgraphy_cli import CliTestCase, load_inputs, load_outputs


def branch(name, op, other):
    """A branch computing op(x, outer) where `outer` is a tensor of the enclosing graph."""
    y = helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [2, 3])
    return helper.make_graph([helper.make_node(op, ["x", other], [f"{name}_y"], name=f"{name}_op")], name, [], [y])


def mismatched_if_model():
    """y = flag ? x + 1 : Transpose(x): the else branch has another shape."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [1])
    one = helper.make_tensor("one_f", TensorProto.FLOAT, [], [1.0])
    then_b = helper.make_graph([helper.make_node("Add", ["x", "one_f"], ["t_y"], name="t_add")], "then", [],
                               [helper.make_tensor_value_info("t_y", TensorProto.FLOAT, None)])
    else_b = helper.make_graph([helper.make_node("Transpose", ["x"], ["e_y"], name="e_transpose")], "else", [],
                               [helper.make_tensor_value_info("e_y", TensorProto.FLOAT, None)])
    node = helper.make_node("If", ["flag"], ["y"], name="pick", then_branch=then_b, else_branch=else_b)
    relu = helper.make_node("Relu", ["y"], ["z"], name="after")
    g = helper.make_graph([node, relu], "mismatched_if", [x, flag],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [one])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def while_model():
    """acc, n = a Loop of at most 10 trips adding x * i to acc while sum(acc) < limit (computed
    by the body), counting the iterations in n."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT, name="cast_i"),
         helper.make_node("Mul", ["x", "i_f"], ["xi"], name="mul_i"),
         helper.make_node("Add", ["acc_in", "xi"], ["acc_out"], name="acc"),
         helper.make_node("ReduceSum", ["acc_out"], ["s"], keepdims=0, name="sum"),
         helper.make_node("Less", ["s", "limit"], ["cond_out"], name="less"),
         helper.make_node("Add", ["n_in", "one_f"], ["n_out"], name="count")],
        "while_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("n_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("n_out", TensorProto.FLOAT, [])])
    inits = [helper.make_tensor("trips", TensorProto.INT64, [], [10]),
             helper.make_tensor("acc0", TensorProto.FLOAT, [2, 3], [0] * 6),
             helper.make_tensor("n0", TensorProto.FLOAT, [], [0.0]), helper.make_tensor("one_f", TensorProto.FLOAT, [], [1.0]),
             helper.make_tensor("t", TensorProto.BOOL, [], [True])]
    g = helper.make_graph([helper.make_node("Loop", ["trips", "t", "acc0", "n0"], ["acc", "n"], body=body, name="while")],
                          "while", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                    helper.make_tensor_value_info("limit", TensorProto.FLOAT, [])],
                          [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2, 3]),
                           helper.make_tensor_value_info("n", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def repeat_model(scan_output=False):
    """a = a Loop of n trips (an input) of a = 2 * a + x, optionally with a scan output of a."""
    outs = [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [2, 3])]
    if scan_output:
        outs.append(helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [2, 3]))
    body = helper.make_graph(
        [helper.make_node("Mul", ["a_in", "two"], ["a2"], name="dbl"), helper.make_node("Add", ["a2", "x"], ["a_out"], name="addx"),
         helper.make_node("Identity", ["c"], ["c_out"], name="pass")],
        "repeat_body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                        helper.make_tensor_value_info("a_in", TensorProto.FLOAT, [2, 3])], outs)
    g = helper.make_graph([helper.make_node("Loop", ["n", "", "acc0"], ["a", "as"][:1 + scan_output], body=body,
                                            name="repeat")], "repeat",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                           helper.make_tensor_value_info("n", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor("acc0", TensorProto.FLOAT, [2, 3], [0] * 6),
                           helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def model(with_loops=True):
    """y = mode == 1 ? x + bias : x * bias; s = sum of 3 Loop steps of (acc + x); c = Scan cumulative sum of x's rows."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    mode = helper.make_tensor_value_info("mode", TensorProto.INT64, [])
    one = helper.make_tensor("one", TensorProto.INT64, [], [1])
    bias = helper.make_tensor("bias", TensorProto.FLOAT, [2, 3], [0.5, -1, 2, 3, -0.25, 1])
    trips = helper.make_tensor("trips", TensorProto.INT64, [], [3])
    acc0 = helper.make_tensor("acc0", TensorProto.FLOAT, [2, 3], [0] * 6)
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="loop_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="loop_cond")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "row"], ["sum_out"], name="scan_add"),
         helper.make_node("Identity", ["sum_out"], ["row_out"], name="scan_out")],
        "scan_body",
        [helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("row_out", TensorProto.FLOAT, [3])])
    nodes = [
        helper.make_node("Equal", ["mode", "one"], ["is_one"], name="is_one"),
        helper.make_node("If", ["is_one"], ["y"], name="choose",
                         then_branch=branch("then", "Add", "bias"), else_branch=branch("else", "Mul", "bias")),
        helper.make_node("Loop", ["trips", "", "acc0"], ["s"], name="loop", body=body),
        helper.make_node("Scan", ["zeros3", "x"], ["total", "c"], name="scan", num_scan_inputs=1, body=scan_body),
    ]
    zeros3 = helper.make_tensor("zeros3", TensorProto.FLOAT, [3], [0, 0, 0])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3])]
    if not with_loops:
        nodes, outs = nodes[:2], outs[:1]
    g = helper.make_graph(nodes, "control_flow", [x, mode], outs, [one, bias, trips, acc0, zeros3])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


class TestControlFlow(CliTestCase):
    def setUp(self):
        super().setUp()
        self.model = self.path("control_flow.onnx")
        onnx.save(model(), self.model)
        self.if_model = self.path("if.onnx")
        onnx.save(model(with_loops=False), self.if_model)

    def test_reference_runs_if_loop_and_scan(self):
        bias = np.array([[0.5, -1, 2], [3, -0.25, 1]], np.float32)
        for mode in (1, 0):
            self.vkgraphy("run", self.model, "--ref", "--val-range", f"mode:[{mode},{mode}]", "--save-inputs",
                          self.path("in.json"), "--save-outputs", self.path("out.json"))
            xv = load_inputs(self.path("in.json"))[0]["x"]
            (out,), = load_outputs(self.path("out.json")).values()
            np.testing.assert_allclose(out["y"], xv + bias if mode == 1 else xv * bias, rtol=1e-6)
            np.testing.assert_allclose(out["s"], 3 * xv, rtol=1e-6)
            np.testing.assert_allclose(out["c"], np.cumsum(xv, axis=0), rtol=1e-6)

    def test_frozen_input_folds_the_if_on_vulkan(self):
        for mode in (1, 0):
            out = self.vkgraphy("run", self.if_model, "--vk", "--ref", "--builder-optimization-level", "0", "-v",
                                "--val-range", f"mode:[{mode},{mode}]", "--freeze-inputs", "mode")
            self.assertIn("input 'mode' is frozen for the Vulkan engine", out)
            self.assertIn(f"the {'then' if mode else 'else'} branch replaces it", out)
            self.assertNotIn("a condition computed on the device", out)
            self.assertIn("PASSED | All outputs matched", out)

    def test_condition_computed_on_the_device_selects_the_branch(self):
        """One engine, saved and loaded, runs whichever branch each input selects."""
        engine = self.path("if.engine")
        out = self.vkgraphy("convert", self.if_model, "-o", engine, "--builder-optimization-level", "0", "-v")
        self.assertIn("If 'choose': a condition computed on the device; branches of 1 and 1 layers", out)
        bias = np.array([[0.5, -1, 2], [3, -0.25, 1]], np.float32)
        for mode in (1, 0, 7):
            self.vkgraphy("run", engine, "--vk", "--val-range", f"mode:[{mode},{mode}]", "--save-inputs",
                          self.path("in.json"), "--save-outputs", self.path("out.json"))
            xv = load_inputs(self.path("in.json"))[0]["x"]
            (out,), = load_outputs(self.path("out.json")).values()
            np.testing.assert_allclose(out["y"], xv + bias if mode == 1 else xv * bias, rtol=1e-6)
        # Against the reference, with several iterations switching branch, and in fp16.
        out = self.vkgraphy("run", self.if_model, "--vk", "--ref", "--fp16", "--builder-optimization-level", "0",
                            "--val-range", "mode:[0,1]", "--iterations", "6", "--atol", "1e-2")
        self.assertIn("PASSED | All outputs matched", out)

    def test_a_branch_of_another_shape_fails_only_when_selected(self):
        m = self.path("mismatched.onnx")
        onnx.save(mismatched_if_model(), m)
        out = self.vkgraphy("run", m, "--vk", "--ref", "--builder-optimization-level", "0", "--val-range",
                            "flag:[1,1]")
        self.assertIn("the else branch of If 'pick' cannot run at the engine's shapes: it gives output 'y' "
                      "the type float32[3, 2], the other branch float32[2, 3]", out)
        self.assertIn("PASSED | All outputs matched", out)
        out = self.vkgraphy("run", m, "--vk", "--builder-optimization-level", "0", "--val-range", "flag:[0,0]",
                            expect=3)
        self.assertIn("[E] the else branch of If 'pick' cannot run at the engine's shapes", out)

    def test_loop_and_scan_of_static_length_unroll_on_vulkan(self):
        out = self.vkgraphy("run", self.model, "--vk", "--ref", "--builder-optimization-level", "0", "-v",
                            "--val-range", "mode:[1,1]", "--freeze-inputs", "mode")
        self.assertIn("Loop 'loop': 3 iterations with a constant trip count, unrolled", out)
        self.assertIn("Scan 'scan': sequences of a static length, unrolled", out)
        self.assertIn("PASSED | All outputs matched", out)

    def test_loop_condition_computed_on_the_device(self):
        """The body decides when to stop; the engine reads its condition back after each iteration."""
        m = self.path("while.onnx")
        onnx.save(while_model(), m)
        engine = self.path("while.engine")
        out = self.vkgraphy("convert", m, "-o", engine, "--builder-optimization-level", "0", "-v")
        self.assertIn("Loop 'while': a constant trip count and a condition computed on the device; a body of 6 layers",
                      out)
        for limit, trips in ((-1, 1), (4, None), (1000, 10)):
            self.vkgraphy("run", engine, "--vk", "--val-range", f"limit:[{limit},{limit}]", "x:[0.5,1]",
                          "--save-inputs", self.path("in.json"), "--save-outputs", self.path("out.json"))
            xv = load_inputs(self.path("in.json"))[0]["x"]
            (out,), = load_outputs(self.path("out.json")).values()
            acc, n = np.zeros_like(xv), 0
            while n < 10:  # the loop's semantics, in numpy
                acc, n = acc + xv * n, n + 1
                if not acc.sum() < limit:
                    break
            if trips is not None:
                self.assertEqual(n, trips)
            self.assertEqual(float(out["n"]), n)
            np.testing.assert_allclose(out["acc"], acc, rtol=1e-6)
        out = self.vkgraphy("run", m, "--vk", "--ref", "--fp16", "--builder-optimization-level", "0", "--val-range",
                            "limit:[0,30]", "x:[0,1]", "--iterations", "5", "--atol", "0.05")
        self.assertIn("PASSED | All outputs matched", out)

    def test_loop_trip_count_computed_on_the_device(self):
        m = self.path("repeat.onnx")
        onnx.save(repeat_model(), m)
        for n in (0, 1, 5):
            out = self.vkgraphy("run", m, "--vk", "--ref", "--builder-optimization-level", "0", "--val-range",
                                f"n:[{n},{n}]", "-v")
            self.assertIn("Loop 'repeat': a trip count or condition computed on the device", out)
            self.assertIn("PASSED | All outputs matched", out)
        onnx.save(repeat_model(scan_output=True), m)
        out = self.vkgraphy("run", m, "--vk", "--builder-optimization-level", "0", "--val-range", "n:[2,2]", expect=3)
        self.assertIn("Loop 'repeat': its 1 scan output(s) grow by one slice per iteration", out)

    def test_a_frozen_input_must_be_the_same_in_every_iteration(self):
        out = self.vkgraphy("run", self.if_model, "--vk", "--val-range", "mode:[0,5]", "--iterations", "4",
                            "--freeze-inputs", "mode", expect=3)
        self.assertIn("--freeze-inputs: input 'mode' differs between iterations 0 and", out)
        out = self.vkgraphy("run", self.if_model, "--vk", "--freeze-inputs", "nope", expect=3)
        self.assertIn("--freeze-inputs names 'nope', which is not an input of the model", out)


if __name__ == "__main__":
    unittest.main()
