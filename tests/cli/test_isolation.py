"""Per-layer isolation (`run --vk --ref --isolate-layers`) and `--vk-outputs mark layers` on lavapipe
(validation layer on): a fault put on one node in the middle of a chain is named as the first layer over
tolerance, layers after it show inherited but not introduced error, a clean model passes, the built plan is
the same with and without isolation, and marking layer outputs keeps fusions. Models are made here with
onnx.helper."""
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import test_control_flow
from vkgraphy_cli import CliTestCase

rng = np.random.default_rng(5)
TOL = ("--atol", "1e-4", "--rtol", "1e-4")


def const(name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def chain_model(path):
    """conv1+relu1 -> conv2+relu2 -> conv3 -> add (with relu1's output) + sigmoid: four layers once fused."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c3", "r1"], ["a"], name="add"),
             helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid")]
    inits = [const("w1", [6, 3, 3, 3]), const("b1", [6]), const("w2", [6, 6, 3, 3]), const("b2", [6]),
             const("w3", [6, 6, 3, 3]), const("b3", [6])]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 8, 8])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(onnx.shape_inference.infer_shapes(m), path)
    return path


def table_rows(out):
    """The isolation table's rows: layer name -> (introduced, inherited, total, verdict)."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*\d+\s+(\S+)\s+\S+\s+fp\d+\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)\s+\S+\s+(.+)$", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)), m.group(5).strip())
    return rows


def choices(replay):
    """What a tactic replay says was built (not the timings): per layer its nodes, signature, tactic, precision."""
    return [(l["name"], l.get("nodes"), l["signature"], l["tactic"], l["precision"]) for l in replay["layers"]]


class TestIsolation(CliTestCase):
    def setUp(self):
        super().setUp()
        self.model = chain_model(self.path("chain.onnx"))

    def isolate(self, *extra, expect=0, env=None):
        return self.vkgraphy("run", self.model, "--vk", "--ref", "--isolate-layers", "--deterministic", *TOL,
                             *extra, expect=expect, env=env)

    def test_fault_in_the_middle_is_the_first_layer_over_tolerance(self):
        out = self.isolate(expect=1, env={"VKGRAPHY_FAULTY_LAYERS": "conv2"})
        self.assertIn("First layer over tolerance: 'conv2+relu2'", out)
        rows = table_rows(out)
        self.assertEqual(list(rows), ["conv1+relu1", "conv2+relu2", "conv3", "add+sigmoid"], out)
        self.assertLess(rows["conv1+relu1"][0], 1e-4)
        self.assertGreater(rows["conv2+relu2"][0], 1.0)
        self.assertTrue(rows["conv2+relu2"][3].startswith("FAILED"))
        # Downstream: large inherited and total error, but the layers themselves are fine.
        for layer in ("conv3", "add+sigmoid"):
            introduced, inherited, total, verdict = rows[layer]
            self.assertLess(introduced, 1e-4, layer)
            self.assertGreater(inherited, 1e-2, layer)
            self.assertGreater(total, 1e-2, layer)
            self.assertEqual(verdict, "inherited", layer)

    def test_clean_model_passes(self):
        out = self.isolate()
        self.assertIn("Every layer's introduced error is within tolerance", out)
        rows = table_rows(out)
        self.assertEqual(len(rows), 4, out)
        for layer, (introduced, _, total, verdict) in rows.items():
            self.assertLess(introduced, 1e-4, layer)
            self.assertLess(total, 1e-4, layer)
            self.assertEqual(verdict, "ok", layer)

    def test_plan_is_the_same_with_and_without_isolation(self):
        # The tactics come from the plain build's replay (--deterministic alone can flip near-ties on a loaded
        # machine, docs/bench.md): what isolation must not change is the rest, layers, fusions, signatures.
        self.vkgraphy("run", self.model, "--vk", "--ref", "--deterministic", *TOL, "--save-tactics", "plain.json")
        self.isolate("--load-tactics", "plain.json", "--save-tactics", "isolated.json")
        self.assertEqual(choices(self.read_json("plain.json")), choices(self.read_json("isolated.json")))

    def test_mark_layers_keeps_fusions_and_compares_every_layer_output(self):
        self.vkgraphy("run", self.model, "--vk", "--ref", "--deterministic", *TOL, "--save-tactics", "plain.json")
        out = self.vkgraphy("run", self.model, "--vk", "--ref", "--load-tactics", "plain.json", *TOL, "--vk-outputs",
                            "mark", "layers", "--save-tactics", "layers.json")
        self.assertEqual(choices(self.read_json("plain.json")), choices(self.read_json("layers.json")))
        matched = re.search(r"All outputs matched \| Outputs: \[(.*)\]", out)
        self.assertIsNotNone(matched, out)
        self.assertEqual(sorted(n.strip(" '") for n in matched.group(1).split(",")), ["c3", "r1", "r2", "y"])
        # mark all keeps every tensor, so nothing fuses.
        self.vkgraphy("run", self.model, "--vk", "--ref", "--deterministic", *TOL, "--vk-outputs", "mark", "all",
                      "--onnx-outputs", "mark", "all", "--save-tactics", "all.json")
        self.assertEqual([c[0] for c in choices(self.read_json("all.json"))],
                         ["conv1", "relu1", "conv2", "relu2", "conv3", "add", "sigmoid"])

    def test_convert_marks_layers_and_writes_its_files_once(self):
        out = self.vkgraphy("convert", self.model, "-o", "layers.engine", "--vk-outputs", "mark", "layers",
                            "--save-tactics", "layers.json", "--save-timing-cache", "cache.json")
        self.assertEqual(out.count("Saved tactic replay to layers.json"), 1, out)
        self.assertEqual(out.count("Saved timing cache to cache.json"), 1, out)
        self.assertIn("--vk-outputs mark layers: marking the outputs of 4 tensor(s)", out)
        inspected = self.vkgraphy("inspect", "model", self.path("layers.engine"))
        outputs = re.search(r"---- 4 Engine Output\(s\) ----\n\s*\{(.*?)\}", inspected, re.S)
        self.assertIsNotNone(outputs, inspected)
        self.assertEqual(sorted(re.findall(r"(\w+) \[dtype", outputs.group(1))), ["c3", "r1", "r2", "y"])

    def test_mark_layers_finds_the_faulty_layer_output(self):
        out = self.vkgraphy("run", self.model, "--vk", "--ref", "--deterministic", *TOL, "--vk-outputs", "mark",
                            "layers", expect=1, env={"VKGRAPHY_FAULTY_LAYERS": "conv2"})
        self.assertRegex(out, r"FAILED \| Mismatched outputs: \[.*'r2'.*\]")
        self.assertRegex(out, r"PASSED \| Output: 'r1'")

    def test_bad_combinations(self):
        out = self.vkgraphy("run", self.model, "--vk", "--isolate-layers", expect=3)
        self.assertIn("--isolate-layers compares the Vulkan engine with the reference: give --vk and --ref", out)
        out = self.vkgraphy("run", self.model, "--ref", "--isolate-layers", expect=3)
        self.assertIn("give --vk and --ref", out)
        out = self.vkgraphy("run", self.model, "--vk", "--ref", "--isolate-layers", "--save-outputs", "o.json",
                            expect=3)
        self.assertIn("cannot be combined with --save-outputs", out)
        out = self.vkgraphy("run", self.model, "--vk", "--ref", "--isolate-layers", "--onnx-outputs", "r1", expect=3)
        self.assertIn("--isolate-layers compares every layer's outputs with the reference's own: --onnx-outputs and "
                      "--onnx-exclude-outputs cannot be combined with it", out)
        self.vkgraphy("convert", self.model, "-o", "chain.engine", "--builder-optimization-level", "0")
        out = self.vkgraphy("run", "chain.engine", "--vk", "--ref", "--isolate-layers", expect=3)
        self.assertIn("--isolate-layers needs the ONNX model", out)

    def test_control_flow_on_the_device_is_refused_unless_it_folds(self):
        onnx.save(test_control_flow.model(with_loops=False), self.path("if.onnx"))
        common = ("run", "if.onnx", "--vk", "--ref", "--isolate-layers", "--builder-optimization-level", "0")
        out = self.vkgraphy(*common, expect=3)
        self.assertIn("layer 'choose' (If) has control flow evaluated on the device", out)
        self.assertNotIn("PASSED | Every layer", out)
        out = self.vkgraphy(*common, "--freeze-inputs", "mode", "--val-range", "mode:[1,1]")
        self.assertIn("Every layer's introduced error is within tolerance", out)
