"""`vkgraphy surgeon insert` beside the real `polygraphy surgeon insert` (the test venv): the same
nodes, wiring, attributes and graph inputs and outputs, and the same outputs in ONNX Runtime; and
clear errors that write nothing."""
import os
import subprocess

from vkgraphy_cli import VENV, VENV_PYTHON, VK_MODELS, CliTestCase

EXIT_USAGE, EXIT_INPUT = 2, 3
POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
EXAMPLE = os.path.join(VK_MODELS, "example.onnx")  # x -> conv1 -> relu1 -> conv2 -> feat -> ... -> y

# Prints a model as lines that equal models share: graph inputs and outputs with their element
# types, each node's op, inputs, outputs and attributes, and its outputs in ONNX Runtime on one input.
DESCRIBE = r"""
import sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
m = onnx.load(sys.argv[1])
g = m.graph
for v in g.input:
    print("input", v.name, v.type.tensor_type.elem_type)
for v in g.output:
    print("output", v.name, v.type.tensor_type.elem_type)
for n in g.node:
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    attrs = {k: (v.decode() if isinstance(v, bytes) else [x.decode() for x in v] if v and isinstance(v, list) and isinstance(v[0], bytes) else v) for k, v in attrs.items()}
    print("node", n.op_type, list(n.input), list(n.output), sorted(attrs.items()))
if sys.argv[2] == "run":
    feed = {"x": np.random.RandomState(0).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)}
    sess = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
    for out, value in zip(sess.get_outputs(), sess.run(None, feed)):
        print("value", out.name, value.shape, np.array2string(value.ravel()[:8], precision=5))
"""


class SurgeonInsert(CliTestCase):
    def describe(self, name, run=True):
        proc = subprocess.run([VENV_PYTHON, "-c", DESCRIBE, self.path(name), "run" if run else "norun"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def both(self, *args, run=True):
        """Inserts with Polygraphy and with vkgraphy; returns (theirs, ours) described."""
        proc = subprocess.run([POLYGRAPHY, "surgeon", "insert", EXAMPLE, *args, "-o", self.path("theirs.onnx")],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.vkgraphy("surgeon", "insert", EXAMPLE, *args, "-o", "ours.onnx")
        return self.describe("theirs.onnx", run), self.describe("ours.onnx", run)

    def test_replaces_the_subgraph_between_the_tensors(self):
        theirs, ours = self.both("--inputs", "feat", "--outputs", "normalized", "--op", "Relu", "--name", "instead")
        self.assertEqual(ours, theirs)
        self.assertNotIn("ReduceSumSquare", ours)  # energy, norm and normalize are gone
        self.assertIn("node Relu ['feat'] ['normalized'] []", ours)

    def test_attributes_as_polygraphy_types_them(self):
        theirs, ours = self.both("--inputs", "feat", "--outputs", "gap", "--op", "ReduceMean", "--attrs", "axes=[2,3]",
                                 "keepdims=1")
        self.assertEqual(ours, theirs)
        self.assertIn("node ReduceMean ['feat'] ['gap'] [('axes', [2, 3]), ('keepdims', 1)]", ours)
        theirs, ours = self.both("--inputs", "feat", "--outputs", "normalized", "--op", "LeakyRelu", "--attrs",
                                 "alpha=0.25")
        self.assertEqual(ours, theirs)
        # A quoted number is a string, a list of numbers with a point floats: checked against
        # Polygraphy on a node of an op ONNX does not define (neither runs it).
        theirs, ours = self.both("--inputs", "feat", "--outputs", "normalized", "--op", "MyPlugin", "--attrs",
                                 "tag='53'", "scales=[1,2.5]", "names=[a,b]", "mode=fast", run=False)
        self.assertEqual(ours, theirs)
        self.assertIn("('mode', 'fast'), ('names', ['a', 'b']), ('scales', [1.0, 2.5]), ('tag', '53')", ours)

    def test_an_output_that_is_an_input_gets_a_new_tensor(self):
        theirs, ours = self.both("--inputs", "feat", "--outputs", "feat", "--op", "LeakyRelu", "--attrs", "alpha=0.5")
        self.assertEqual(ours, theirs)
        self.assertIn("node LeakyRelu ['feat'] ['feat_polygraphy_surgeon_insert_output']", ours)
        self.assertIn("node ReduceSumSquare ['feat_polygraphy_surgeon_insert_output']", ours)

    def test_a_graph_output_keeps_its_name(self):
        theirs, ours = self.both("--inputs", "y", "--outputs", "y", "--op", "Softmax", "--attrs", "axis=1")
        self.assertEqual(ours, theirs)
        self.assertIn("node Softmax ['y_polygraphy_surgeon_insert_output'] ['y']", ours)
        self.assertIn("output y 1", ours)
        self.vkgraphy("run", "ours.onnx", "--ref", "--vk")

    def test_bad_requests_are_clear_errors_that_write_nothing(self):
        cases = [
            (["--inputs", "nothing", "--outputs", "feat", "--op", "Relu"], "tensor 'nothing' does not exist"),
            (["--inputs", "feat", "--outputs", "x", "--op", "Relu"], "'x' is a graph input or initializer"),
            (["--inputs", "feat", "--outputs", "normalized", "--op", "Relu", "--attrs", "bad"], "expected name=value"),
            (["--inputs", "feat", "--outputs", "normalized", "--op", "Relu", "--attrs", "k=[1,a]"], "mixes strings"),
            (["--inputs", "feat", "--outputs", "gap", "--op", "ReduceMean", "--attrs", "axes=fast"], "invalid"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                out = self.vkgraphy("surgeon", "insert", EXAMPLE, *args, "-o", "bad.onnx", expect=EXIT_INPUT)
                self.assertIn(message, out)
                self.assertFalse(os.path.exists(self.path("bad.onnx")))
        out = self.vkgraphy("surgeon", "insert", EXAMPLE, "--inputs", "feat", "--op", "Relu", "-o", "bad.onnx",
                            expect=EXIT_USAGE)
        self.assertIn("--outputs", out)
