"""`vkgraphy data concat` and `data merge` beside the real `polygraphy data concat/merge` on files the
real Polygraphy wrote (ONNX Runtime, the test venv), read back with Polygraphy's own loader; and the
workflow merge exists for: `debug reduce` checking a subgraph on the model's real activations."""
import os
import subprocess

from vkgraphy_cli import BIN, VENV, VENV_PYTHON, VK_MODELS, CliTestCase

EXIT_INPUT = 3
POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
EXAMPLE = os.path.join(VK_MODELS, "example.onnx")  # x -> ... -> feat -> ReduceSumSquare -> energy ... -> y

# Reads data files with Polygraphy's loader and prints, per iteration (and runner), each tensor's
# name, dtype, shape and a digest of its bytes: equal lines mean equal files, whatever their layout.
DIGEST = r"""
import hashlib, sys
import numpy as np
from polygraphy.comparator import RunResults
from polygraphy.json import load_json
for path in sys.argv[1:]:
    data = load_json(path)
    runs = list(data.items()) if isinstance(data, RunResults) else [("inputs", data if isinstance(data, list) else [data])]
    print("file", len(runs), "run(s)")
    for runner, iterations in runs:
        print("run", runner.split("-N")[0], len(iterations), "iteration(s)")
        for i, it in enumerate(iterations):
            for name in sorted(it.keys()):
                a = np.ascontiguousarray(np.asarray(it[name]))
                print(i, name, a.dtype, a.shape, hashlib.sha256(a.tobytes()).hexdigest()[:16])
"""


class DataTools(CliTestCase):
    def polygraphy(self, *args):
        proc = subprocess.run([POLYGRAPHY, *map(str, args)], cwd=self.tmp, capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def digest(self, *names):
        proc = subprocess.run([VENV_PYTHON, "-c", DIGEST, *map(self.path, names)], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def save_polygraphy_runs(self):
        """Two runs of ONNX Runtime: 2 iterations with every tensor an output, then 1 iteration."""
        self.polygraphy("run", EXAMPLE, "--onnxrt", "--iterations", "2", "--seed", "1", "--save-inputs", "in1.json",
                        "--save-outputs", "out1.json", "--onnx-outputs", "mark", "all")
        self.polygraphy("run", EXAMPLE, "--onnxrt", "--seed", "2", "--save-inputs", "in2.json", "--save-outputs",
                        "out2.json")

    def test_concat_is_polygraphys(self):
        self.save_polygraphy_runs()
        for kind, files in (("inputs", ["in1.json", "in2.json"]), ("outputs", ["out1.json", "out2.json"]),
                            ("one file", ["out2.json"])):
            with self.subTest(kind):
                self.polygraphy("data", "concat", *map(self.path, files), "-o", "theirs.json")
                self.vkgraphy("data", "concat", *files, "-o", "ours.json")
                self.assertEqual(self.digest("ours.json"), self.digest("theirs.json"))

    def test_concat_of_inputs_holds_every_iteration_in_order(self):
        self.save_polygraphy_runs()
        self.vkgraphy("data", "concat", "in1.json", "in2.json", "in1.json", "-o", "ours.json")
        ours = self.digest("ours.json").splitlines()
        first, second = self.digest("in1.json").splitlines(), self.digest("in2.json").splitlines()
        self.assertIn("run inputs 5 iteration(s)", ours)
        x_lines = [line.split(" ", 1)[1] for line in ours if " x " in line]
        expected = [line.split(" ", 1)[1] for line in first + second + first if " x " in line]
        self.assertEqual(x_lines, expected)

    def test_merge_is_polygraphys(self):
        """One iteration: inputs and every tensor of one runner, the same file as Polygraphy's."""
        self.save_polygraphy_runs()
        self.polygraphy("run", EXAMPLE, "--onnxrt", "--seed", "2", "--save-outputs", "layerwise2.json",
                        "--onnx-outputs", "mark", "all")
        self.polygraphy("data", "merge", self.path("in2.json"), self.path("layerwise2.json"), "-o", "theirs.json")
        self.vkgraphy("data", "merge", "in2.json", "layerwise2.json", "-o", "ours.json")
        ours = self.digest("ours.json")
        self.assertEqual(ours, self.digest("theirs.json"))
        for name in ("x", "feat", "energy", "y"):
            self.assertIn(f" {name} float32", ours)

    def test_merge_keeps_each_iteration_its_own_tensors(self):
        """Iteration i of the merged file holds iteration i of each file. (Polygraphy 0.53.6 pads its
        list with one dict repeated, so every iteration of its merge of in1 and out1 ends up holding
        the last iteration's tensors.)"""
        self.save_polygraphy_runs()
        out = self.vkgraphy("data", "merge", "in1.json", "out1.json", "-o", "ours.json")
        self.assertIn("Saved an input file of 2 iteration(s)", out)
        ours = set(self.digest("ours.json").splitlines()[2:])
        sources = set(self.digest("in1.json").splitlines()[2:] + self.digest("out1.json").splitlines()[2:])
        self.assertEqual(ours, sources)
        self.assertEqual(len({line for line in ours if line.split()[1] == "x"}), 2)  # two different x

    def test_merge_warns_about_replaced_tensors_and_uneven_iterations(self):
        self.save_polygraphy_runs()
        out = self.vkgraphy("data", "merge", "in1.json", "in2.json", "-o", "ours.json")
        self.assertIn("different numbers of iterations: 2 so far, 1 in 'in2.json'", out)
        self.assertIn("'in2.json' replaces tensor 'x' of an earlier file", out)
        lines = self.digest("ours.json").splitlines()
        self.assertIn("run inputs 2 iteration(s)", lines)
        in2_x = [l for l in self.digest("in2.json").splitlines() if " x " in l][0]
        self.assertIn(in2_x, lines)  # iteration 0: in2's x

    def test_bad_input_is_a_clear_error_and_writes_nothing(self):
        self.save_polygraphy_runs()
        out = self.vkgraphy("data", "concat", "in1.json", "out1.json", "-o", "bad.json", expect=EXIT_INPUT)
        self.assertIn("cannot concatenate input data ('in1.json') with output data ('out1.json')", out)
        with open(self.path("broken.json"), "w") as f:
            f.write('{"lst": [["r", [{"outputs": {')
        for tool in ("concat", "merge"):
            out = self.vkgraphy("data", tool, "in1.json", "broken.json", "-o", "bad.json", expect=EXIT_INPUT)
            self.assertIn("broken.json", out)
        out = self.vkgraphy("data", "merge", "missing.json", "-o", "bad.json", expect=2)
        self.assertIn("missing.json", out)
        self.assertFalse(os.path.exists(self.path("bad.json")))

    def test_reduce_checks_a_subgraph_on_real_activations(self):
        """Polygraphy's documented workflow on the README example: every tensor saved, merged with the
        inputs into one file that --load-inputs feeds to each subgraph. The sum of squares overflows
        fp16 only on the activations the model computes (random inputs in [0, 1] for `feat` do not), so
        with them the reduction ends at that one node."""
        self.vkgraphy("run", EXAMPLE, "--ref", "--onnx-outputs", "mark", "all", "--save-inputs", "inputs.json",
                      "--save-outputs", "layerwise.json")
        self.vkgraphy("data", "merge", "inputs.json", "layerwise.json", "-o", "layerwise_inputs.json")
        check = [BIN, "run", "vkgraphy_debug.onnx", "--vk", "--ref", "--layer-precisions", "*:fp16",
                 "--precision-constraints", "obey", "--atol", "0.1", "--rtol", "1e-2"]
        out = self.vkgraphy("debug", "reduce", EXAMPLE, "-o", "reduced.onnx", "--mode", "linear", "--load-inputs",
                            "layerwise_inputs.json", "--check", *check, "--load-inputs", "layerwise_inputs.json",
                            timeout=600)
        self.assertIn("Minimum failing subgraph: inputs [feat] -> outputs [energy] (1 node)", out)
        fp16 = ["--vk", "--ref", "--layer-precisions", "*:fp16", "--precision-constraints", "obey", "--atol", "0.1",
                "--rtol", "1e-2"]
        self.vkgraphy("run", "reduced.onnx", *fp16, "--load-inputs", "layerwise_inputs.json", expect=1)
        self.vkgraphy("run", "reduced.onnx", *fp16)  # generated inputs: no overflow, passes
