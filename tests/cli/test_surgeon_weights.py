"""`vkgraphy surgeon weight-strip` and `weight-reconstruct` beside the real Polygraphy's (the test
venv): the same weights stripped and marked, 2:4 sparse weights found and rebuilt sparse, and an
engine built from the proxy weights with the layers and tactics of the original's."""
import os
import subprocess

from vkgraphy_cli import VENV, VENV_PYTHON, CliTestCase

POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")

# Writes the test model: a Conv (weight and bias), a MatMul whose weight is 2:4 sparse along K and
# one fed through a Transpose, a small Gather table (under Polygraphy's 1024 elements), and a uint8
# initializer, none of them meant to be stripped.
MAKE_MODEL = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.RandomState(0)
sparse = rng.randn(16, 8).astype(np.float32)
sparse.reshape(4, 4, 8)[:, :2, :] = 0  # two zeros in every group of four along axis 0
inits = {
    "conv.w": rng.randn(8, 3, 3, 3).astype(np.float32), "conv.b": rng.randn(8).astype(np.float32),
    "fc.w": sparse, "proj.wt": rng.randn(8, 16).astype(np.float32),
    "table": rng.randn(10, 8).astype(np.float32), "ids": np.array([1, 3], dtype=np.int64),
    "shape": np.array([1, 8, 16], dtype=np.int64), "raw": np.arange(4, dtype=np.uint8),
}
nodes = [
    helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="flat"),  # [1, 8]
    helper.make_node("Transpose", ["proj.wt"], ["proj.w"], perm=[1, 0], name="proj_t"),  # [16, 8]
    helper.make_node("Gather", ["table", "ids"], ["g"], axis=0, name="gather"),  # [2, 8]
    helper.make_node("ReduceSum", ["g"], ["gs"], axes=[0], keepdims=1, name="gsum"),  # [1, 8]
    helper.make_node("Add", ["f", "gs"], ["h"], name="add"),
    helper.make_node("MatMul", ["h", "proj.wt"], ["u"], name="up"),  # [1, 16]
    helper.make_node("MatMul", ["u", "fc.w"], ["y"], name="fc"),  # [1, 8]
    helper.make_node("MatMul", ["u", "proj.w"], ["z"], name="proj"),  # [1, 8] (Transpose pattern)
    helper.make_node("Cast", ["raw"], ["rawf"], to=TensorProto.FLOAT, name="cast"),
]
graph = helper.make_graph(nodes, "weights", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
                           (("y", [1, 8]), ("z", [1, 8]), ("rawf", [4]))],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
model.ir_version = 7
onnx.save(model, sys.argv[1])
"""

# Prints each initializer: name, whether it holds data, its doc_string, and (with data) whether it
# is 2:4 sparse along the axis the second argument names per weight ("fc.w:0").
DESCRIBE = r"""
import sys
import numpy as np
import onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
axes = dict(a.split(":") for a in sys.argv[2:])
print("model", m.doc_string)
for t in m.graph.initializer:
    has_data = bool(t.raw_data) or bool(t.float_data) or bool(t.int64_data) or bool(t.int32_data)
    line = f"{t.name} data={has_data} doc={t.doc_string!r}"
    if has_data and t.name in axes:
        a = np.moveaxis(numpy_helper.to_array(t), int(axes[t.name]), 0)
        groups = a.reshape(a.shape[0] // 4, 4, -1)
        line += f" sparse={bool(((groups == 0).sum(axis=1) >= 2).all())}"
    print(line)
"""


class SurgeonWeights(CliTestCase):
    def python(self, script, *args):
        proc = subprocess.run([VENV_PYTHON, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def polygraphy(self, *args):
        proc = subprocess.run([POLYGRAPHY, *map(str, args)], cwd=self.tmp, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def describe(self, name):
        return self.python(DESCRIBE, self.path(name), "fc.w:0", "proj.wt:1").splitlines()

    def setUp(self):
        super().setUp()
        self.python(MAKE_MODEL, self.path("model.onnx"))

    def test_strips_what_polygraphy_strips(self):
        self.polygraphy("surgeon", "weight-strip", "model.onnx", "-o", "theirs.onnx")
        out = self.vkgraphy("surgeon", "weight-strip", "model.onnx", "-o", "ours.onnx")
        self.assertIn("Finished stripping 4 weights", out)
        ours = self.describe("ours.onnx")
        self.assertEqual(ours, self.describe("theirs.onnx"))
        self.assertIn("model TRT_WEIGHTLESS", ours)
        self.assertIn("fc.w data=False doc='TRT_WEIGHTLESS/SPARSE_2_4'", ours)
        for kept in ("table", "ids", "shape", "raw"):
            self.assertIn(f"{kept} data=True doc=''", ours)

    def test_exclude_list_keeps_weights(self):
        with open(self.path("keep.txt"), "w") as f:
            f.write("conv.w\nnot.a.weight\n")
        self.polygraphy("surgeon", "weight-strip", "model.onnx", "--exclude-list", "keep.txt", "-o", "theirs.onnx")
        out = self.vkgraphy("surgeon", "weight-strip", "model.onnx", "--exclude-list", "keep.txt", "-o", "ours.onnx")
        self.assertIn("not found among those stripped: not.a.weight", out)
        self.assertEqual(self.describe("ours.onnx"), self.describe("theirs.onnx"))
        self.assertIn("conv.w data=True doc=''", self.describe("ours.onnx"))

    def test_reconstructed_model_builds_the_same_engine(self):
        self.vkgraphy("surgeon", "weight-strip", "model.onnx", "-o", "stripped.onnx")
        out = self.vkgraphy("surgeon", "weight-reconstruct", "stripped.onnx", "-o", "proxy.onnx")
        self.assertIn("Finished reconstructing 4 weights", out)
        proxy = self.describe("proxy.onnx")
        self.assertIn("fc.w data=True doc='TRT_WEIGHTLESS/SPARSE_2_4' sparse=True", proxy)
        self.assertIn("proj.wt data=True doc='TRT_WEIGHTLESS/' sparse=False", proxy)
        # Seeded: the same proxy twice.
        self.vkgraphy("surgeon", "weight-reconstruct", "stripped.onnx", "-o", "again.onnx")
        with open(self.path("proxy.onnx"), "rb") as a, open(self.path("again.onnx"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        # Polygraphy reconstructs what vkgraphy stripped, and the other way round.
        self.polygraphy("surgeon", "weight-reconstruct", "stripped.onnx", "-o", "their_proxy.onnx")
        # (Polygraphy's pruning pass writes the sparse weight anew, without its doc_string.)
        self.assertTrue(any(line.startswith("fc.w data=True") and line.endswith("sparse=True")
                            for line in self.describe("their_proxy.onnx")))
        self.polygraphy("surgeon", "weight-strip", "model.onnx", "-o", "their_stripped.onnx")
        self.vkgraphy("surgeon", "weight-reconstruct", "their_stripped.onnx", "-o", "from_theirs.onnx")
        # The engines: the same layers and tactics (tactics in heuristic order; and the original's
        # timed choices replayed on the proxy).
        layers = []
        for model in ("model.onnx", "proxy.onnx"):
            self.vkgraphy("convert", model, "-o", model + ".engine", "--builder-optimization-level", "0")
            layers.append(self.vkgraphy("inspect", "model", model + ".engine", "--show", "layers").split("====", 2)[-1])
        self.assertEqual(layers[0], layers[1])
        self.vkgraphy("convert", "model.onnx", "-o", "timed.engine", "--save-tactics", "replay.json")
        self.vkgraphy("convert", "proxy.onnx", "-o", "replayed.engine", "--load-tactics", "replay.json")
        self.vkgraphy("run", "proxy.onnx", "--vk", "--ref")

    def test_stripped_model_is_refused_by_the_builder_with_a_clear_error(self):
        self.vkgraphy("surgeon", "weight-strip", "model.onnx", "-o", "stripped.onnx")
        out = self.vkgraphy("run", "stripped.onnx", "--ref", expect=3)
        self.assertIn("tensor 'conv.w' was stripped of its data (weight-strip)", out)
