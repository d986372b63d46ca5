"""The three end-to-end workflows of docs/debug.md, run as a user runs them,
on lavapipe with the validation layer on. Bugs are made on demand with
VKGRAPHY_FAULTY_TACTICS (docs/builder.md) or by real fp16 overflow, so
nothing depends on timing luck."""
import glob
import os
import re
import subprocess
import unittest

import onnx

from test_vk import fp16_tolerance, perturb_largest
from vkgraphy_cli import BIN, VENV, VK_MODELS, CliTestCase, edit_outputs, model

POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")

FAULTY = "VKGRAPHY_FAULTY_TACTICS"
# fp16_overflow.onnx's output with big and small in fp32: the tolerance table in test_vk.py.
FP16_TOL = fp16_tolerance("fp16_overflow.onnx")
# fp16_two_sites.onnx's y spans about 43 (-26..17); with big1, small1, big2 and small2 in fp32 and the rest in fp16
# its worst error over builds at level 0, random:1-4 and without .f16 tactics was 0.024 (lavapipe, 2026-11-25):
# 0.15 is 6x that and 0.35% of the range, so one element off by 5% of the range (2.2) fails.
TWO_SITES_TOL = ["--atol", "y:0.15", "--rtol", "0"]
OVERFLOWING = ["big1", "small1", "big2", "small2"]


def vk_model(name):
    return os.path.join(VK_MODELS, name)


class TestWorkflows(CliTestCase):
    def make_golden(self, path):
        """golden.json: the model's outputs on the default data loader's inputs, from the reference backend."""
        self.vkgraphy("run", path, "--ref", "--save-outputs", "golden.json")

    def test_flaky_tactic_found_by_debug_build_and_diff_tactics(self):
        path = vk_model("branchy.onnx")
        self.make_golden(path)
        # Random tactic selection stands in for a timing-driven choice that changes from build to build;
        # SEED + iteration makes each build differ, reproducibly.
        out = self.vkgraphy("debug", "build", path, "--tactic-selection", "random:26", "--until", "10",
                            "--save-tactics", "replay.json", "--artifacts", "replay.json", "--check", BIN, "run",
                            "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json",
                            env={FAULTY: "softmax.row.f32"}, expect=5)
        good = glob.glob(self.path("vkgraphy_artifacts/good/replay_iter*.json"))
        bad = glob.glob(self.path("vkgraphy_artifacts/bad/replay_iter*.json"))
        self.assertEqual(len(good) + len(bad), 10)
        self.assertTrue(good and bad, out)
        out = self.vkgraphy("inspect", "diff-tactics", "--dir", "vkgraphy_artifacts")
        self.assertIn("The failure follows tactic softmax.row.f32", out)
        # Also reachable under debug, and with --good/--bad.
        out = self.vkgraphy("debug", "diff-tactics", "--good", "vkgraphy_artifacts/good", "--bad",
                            "vkgraphy_artifacts/bad")
        self.assertIn("The failure follows tactic softmax.row.f32", out)

    def test_validated_builds_never_keep_the_faulty_tactic(self):
        # The flaky-tactic workflow above, with --validate-tactics: every build checks each candidate on its
        # layer's real inputs first, so the faulty tactic is rejected in every iteration and every build passes.
        path = vk_model("branchy.onnx")
        self.make_golden(path)
        out = self.vkgraphy("debug", "build", path, "--validate-tactics", "--tactic-selection", "random:26", "--until",
                            "10", "--save-tactics", "replay.json", "--artifacts", "replay.json", "--check", BIN, "run",
                            "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json",
                            env={FAULTY: "softmax.row.f32"})
        self.assertEqual(len(glob.glob(self.path("vkgraphy_artifacts/good/replay_iter*.json"))), 10, out)
        self.assertEqual(glob.glob(self.path("vkgraphy_artifacts/bad/*")), [])
        self.assertRegex(out, r"tactic softmax\.row\.f32 rejected by validation: output '\S+' error \S+ > 0\.001")
        self.assertIn("Passed: 10/10", out)
        replay = self.read_json(glob.glob(self.path("vkgraphy_artifacts/good/replay_iter*.json"))[0])
        softmax = [c for layer in replay["layers"] for c in layer["candidates"] if c["tactic"] == "softmax.row.f32"]
        self.assertTrue(softmax and all(c["rejected"] and c["validation_error"] != 0 for c in softmax), softmax)
        validated = [c for layer in replay["layers"] for c in layer["candidates"] if "validation_error" in c]
        self.assertGreater(len(validated), len(softmax))

    def test_precision_names_the_overflowing_layers_and_the_printed_pins_pass(self):
        path = vk_model("fp16_overflow.onnx")
        self.make_golden(path)
        check = [BIN, "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json", *FP16_TOL]
        for mode, direction in (("bisect", "forward"), ("linear", "forward"), ("bisect", "reverse")):
            with self.subTest(mode=mode, direction=direction):
                out = self.vkgraphy("debug", "precision", path, "--fp16", "--mode", mode, "--dir", direction, "--prune",
                                    "--check", *check)
                pins = re.search(r"--layer-precisions ((?:\S+:fp32 ?)+)", out)
                self.assertIsNotNone(pins, out)
                self.assertEqual(sorted(pins.group(1).split()), ["big:fp32", "small:fp32"])
                build = re.search(r"Build with: (.*)", out)
                self.assertIsNotNone(build, out)
                build = build.group(1).split()
        # The printed options build an engine that passes, and that same engine fails against a golden
        # file with one element off by 5% of the output's range: the tolerance is tight enough to matter.
        self.vkgraphy("convert", path, *build, "-o", "pinned.engine")
        out = self.vkgraphy("run", "pinned.engine", "--vk", "--load-outputs", "golden.json", *FP16_TOL)
        self.assertIn("PASSED | All outputs matched", out)
        edit_outputs(self.path("golden.json"), self.path("perturbed.json"), lambda _, values: perturb_largest(values))
        out = self.vkgraphy("run", "pinned.engine", "--vk", "--load-outputs", "perturbed.json", *FP16_TOL, expect=1)
        self.assertIn("FAILED | Output: 'y'", out)
        self.assertIn("Mismatched elements: 1 of 32 ", out)

    def test_minimal_precision_names_exactly_the_overflowing_nodes(self):
        # Two overflow sites with six fp16-safe layers between them: the default search starts from the fp16-risk
        # analysis, checks the four flagged layers, then drops each alone (each drop fails): 5 checks, 4 layers.
        # (Polygraphy's bisect: 5 checks naming 10 layers; with --prune: 15 checks.)
        path = vk_model("fp16_two_sites.onnx")
        self.make_golden(path)
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--save-layer-precisions", "pins.json", "--check",
                            BIN, "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json",
                            *TWO_SITES_TOL)
        self.assertIn("fp16-risk analysis of a reference run (1 iteration(s)): 4 of 11 candidate layer(s) at risk:\n"
                      "        big1 (overflow)\n        small1 (overflow)\n        big2 (overflow)\n"
                      "        small2 (overflow)\n", out)
        self.assertIn("To pass the check, run these 4 layer(s) in fp32: big1, small1, big2, small2\n", out)
        # A failing check is summarised: its error lines and mismatch counts, not its latency lines.
        self.assertIn("Check output (exit code 1), summarised; -v or --show-output shows all of it:\n"
                      "    [I]             Mismatched elements: 32 of 32 (100%)\n"
                      "    [E]         FAILED | Output: 'y' | Difference exceeds tolerance (rel=0.0, abs=0.15)\n", out)
        self.assertNotIn("Latency", out)
        iterations = int(re.search(r"Finished (\d+) iteration\(s\) \| Passed: 1/", out).group(1))
        self.assertLessEqual(iterations, 6, out)
        self.assertEqual(iterations, 5, out)
        # 1-minimal: each layer was dropped alone from the answer, and each drop failed.
        for layer in OVERFLOWING:
            rest = " ".join(l for l in OVERFLOWING if l != layer)
            self.assertRegex(out, rf"RUNNING \| Iteration \d+ \| 3 layer\(s\) in fp32: {rest}\n(.*\n)*?"
                                  r"\[E\] FAILED \| Iteration")
        self.assertEqual(self.read_json("pins.json"),
                         {"format": "vkgraphy-layer-precisions", "version": 1, "precision_constraints": "obey",
                          "layer_precisions": {name: "fp32" for name in OVERFLOWING}})
        # convert and run read the answer back, and the engine passes; one element off by 5% of the range fails.
        self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "pins.json", "-o", "pinned.engine")
        layers = self.vkgraphy("inspect", "model", "pinned.engine", "--show", "layers")
        for layer in OVERFLOWING:
            self.assertRegex(layers, rf"Layer \d+ +\| {layer} \[Op: \w+\] \| Tactic: \S+ \| Precision: fp32 ")
        out = self.vkgraphy("run", "pinned.engine", "--vk", "--load-outputs", "golden.json", *TWO_SITES_TOL)
        self.assertIn("PASSED | All outputs matched", out)
        out = self.vkgraphy("run", path, "--vk", "--fp16", "--load-layer-precisions", "pins.json", "--load-outputs",
                            "golden.json", *TWO_SITES_TOL)
        self.assertIn("Loaded 4 layer precision(s) from pins.json", out)
        self.assertIn("PASSED | All outputs matched", out)
        edit_outputs(self.path("golden.json"), self.path("perturbed.json"), lambda _, values: perturb_largest(values))
        out = self.vkgraphy("run", "pinned.engine", "--vk", "--load-outputs", "perturbed.json", *TWO_SITES_TOL,
                            expect=1)
        self.assertIn("Mismatched elements: 1 of 32 ", out)

    def test_precision_pins_fused_layers_through_their_nodes(self):
        # fp16_overflow.onnx with a Relu after `big` (a no-op on its positive outputs): MatMul+Relu is one layer,
        # named "big+relu", and pins speak in node names.
        source = onnx.load(vk_model("fp16_overflow.onnx"))
        graph = source.graph
        graph.node[0].output[0] = "big_mm"
        graph.node.insert(1, onnx.helper.make_node("Relu", ["big_mm"], ["big"], name="relu"))
        path = self.path("fused_overflow.onnx")
        onnx.save(source, path)
        self.make_golden(path)
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--save-layer-precisions", "pins.json", "--check",
                            BIN, "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json", *FP16_TOL)
        self.assertIn("[I]     big+relu\n", out)
        self.assertIn("To pass the check, run these 2 layer(s) in fp32: big+relu, small\n", out)
        self.assertIn("Build with: --fp16 --layer-precisions big:fp32 relu:fp32 small:fp32 --precision-constraints obey",
                      out)
        self.assertEqual(self.read_json("pins.json")["layer_precisions"], {"big": "fp32", "relu": "fp32", "small": "fp32"})
        out = self.vkgraphy("run", path, "--vk", "--fp16", "--load-layer-precisions", "pins.json", "--load-outputs",
                            "golden.json", *FP16_TOL)
        self.assertIn("PASSED | All outputs matched", out)

    def test_precision_keeps_the_users_pins_and_patterns(self):
        # Layers the user pinned (here by a pattern) are not searched, and the answer is the configuration that
        # passed: the search's pins and the user's.
        path = vk_model("example.onnx")
        self.make_golden(path)
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--layer-precisions", "conv?:fp32",
                            "--save-layer-precisions", "pins.json", "--check", BIN, "run", "vkgraphy_debug.engine",
                            "--vk", "--load-outputs", "golden.json", "--atol", "0.1", "--rtol", "1e-2")
        self.assertIn("Layers that can take either precision (5, in network order):\n", out)
        self.assertIn("To pass the check, run these 2 layer(s) in fp32: energy, norm\n", out)
        self.assertIn("Build with: --fp16 --layer-precisions energy:fp32 norm:fp32 'conv?:fp32' "
                      "--precision-constraints obey", out)
        self.assertEqual(self.read_json("pins.json")["layer_precisions"],
                         {"conv?": "fp32", "energy": "fp32", "norm": "fp32"})
        out = self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "pins.json", "-o", "p.engine",
                            "--save-tactics", "p.json")
        precisions = {l["name"]: l["precision"] for l in self.read_json("p.json")["layers"]}
        self.assertEqual([precisions[n] for n in ("conv1+relu1", "conv2+relu2", "energy", "norm")], ["fp32"] * 4)

class TestWorkflowsWithoutGoldens(CliTestCase):
    """The workflows that compare with no golden outputs: run once (the class below repeats only
    those with goldens, made by the real Polygraphy)."""

    def test_fp16_risk_follows_the_data_loader(self):
        path = vk_model("fp16_two_sites.onnx")
        out = self.vkgraphy("inspect", "model", path, "--show", "fp16-risk")
        self.assertIn("4 of 11 node(s) with float tensors see values fp16 cannot hold (most certain first):\n"
                      "      big1 (MatMul): overflow\n"
                      "          output 'big1': 32 of 32 value(s) beyond +-65504", out)
        self.assertIn("      small2 (Mul): overflow\n          input 'big2': 32 of 32 value(s) beyond +-65504", out)
        self.assertIn("The other 7 node(s) are fp16-safe on these inputs", out)
        # Inputs 100x smaller keep big1 in range (64 * 0.005 * 4000 = 1280); big2 reads sigmoids, still about 0.5.
        out = self.vkgraphy("inspect", "model", path, "--show", "fp16-risk", "--val-range", "x:[0,0.01]")
        self.assertIn("2 of 11 node(s) with float tensors see values fp16 cannot hold", out)
        self.assertNotIn("big1 (MatMul)", out)
        # debug precision takes the same options, and says when the check's differ.
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--val-range", "x:[0,0.01]", "--check", "true")
        self.assertIn("2 of 11 candidate layer(s) at risk:\n        big2 (overflow)\n        small2 (overflow)\n", out)
        self.assertIn("The --check command has --val-range (default) but debug precision has --val-range x:[0,0.01]",
                      out)
        self.assertIn("The check passes with no layer in fp32", out)  # `true` passes without either
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--prune", "--check", "true")
        self.assertIn("--prune has no effect with --mode minimal", out)

    def test_layer_precision_files_are_checked(self):
        path = vk_model("fp16_two_sites.onnx")
        self.vkgraphy("convert", path, "--save-tactics", "replay.json", "--builder-optimization-level", "0",
                      "-o", "m.engine")
        # A replay gives the precisions its build chose (test_fp16_policy.py); a timing cache gives none.
        out = self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "replay.json", "-o", "r.engine")
        self.assertIn("Loaded 11 layer precision(s) from replay.json", out)
        self.vkgraphy("convert", path, "--save-timing-cache", "cache.json", "--builder-optimization-level", "1",
                      "-o", "c.engine")
        out = self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "cache.json", "-o", "x.engine",
                            expect=3)
        self.assertIn("'cache.json': format: not a layer-precisions file", out)
        with open(self.path("other.json"), "w") as f:
            f.write('{"format": "vkgraphy-layer-precisions", "version": 1, "layer_precisions": {"conv9": "fp32"}}')
        out = self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "other.json", "-o", "x.engine",
                            expect=3)
        self.assertIn("--layer-precisions names layer 'conv9', which the model does not have", out)
        with open(self.path("bad.json"), "w") as f:
            f.write('{"format": "vkgraphy-layer-precisions", "version": 1, "layer_precisions": {"big1": "fp8"}}')
        out = self.vkgraphy("convert", path, "--fp16", "--load-layer-precisions", "bad.json", "-o", "x.engine",
                            expect=3)
        self.assertIn("'bad.json': layer_precisions.big1:", out)
        self.assertFalse(os.path.exists(self.path("x.engine")))

    def test_precision_says_when_nothing_passes(self):
        path = vk_model("fp16_overflow.onnx")
        out = self.vkgraphy("debug", "precision", path, "--fp16", "--check", "false", expect=8)
        self.assertIn("No configuration passed", out)

    def test_precision_sanity_in_every_mode_and_direction(self):
        # Polygraphy's precision sanity test: every mode and direction with a check that passes or fails.
        # With a check that always passes, linear (which starts from no layer) finds that none needs fp32;
        # bisect never tries no layer (as in Polygraphy, it takes "no layer in fp32" as the failure being
        # debugged) and ends at the one first (forward) or last (reverse) layer. With a check that always
        # fails, bisect stops after all layers in fp32 failed; linear tries 0, 1, ... all of them.
        # reducable.onnx: Identity nodes 1 and 3 feed the Add (node 5) and are removed as no-ops (their outputs
        # alias their inputs); Identity nodes 7 and 9 write model outputs, so they stay layers.
        reducable = [f"onnx_graphsurgeon_node_{n}" for n in (5, 7, 9)]
        for name, mode, direction, pinned in (("reducable.onnx", "bisect", "forward", reducable[0]),
                                              ("reducable.onnx", "linear", "reverse", None),
                                              ("const_foldable.onnx", "linear", "forward", None),
                                              ("const_foldable.onnx", "bisect", "reverse", "Add_0")):
            layers = reducable if name == "reducable.onnx" else ["Add_0"]
            args = ("debug", "precision", model(name), "--fp16", "--mode", mode, "--dir", direction, "--check")
            with self.subTest(model=name, mode=mode, direction=direction, check="true"):
                out = self.vkgraphy(*args, "true")
                self.assertIn(f"Layers that can take either precision ({len(layers)}, in network order):\n" +
                              "".join(f"[I]     {layer}\n" for layer in layers), out)
                if pinned:
                    iterations = 2 if len(layers) == 3 else 1  # bisect: 3, then 1 layer(s), or the only one
                    self.assertIn(f"To pass the check, run these 1 layer(s) in fp32: {pinned}\n", out)
                    self.assertIn(f"Build with: --fp16 --layer-precisions {pinned}:fp32 --precision-constraints obey",
                                  out)
                else:
                    iterations = 1
                    self.assertIn("The check passes with no layer in fp32", out)
                    self.assertNotIn("--layer-precisions", out)
                self.assertIn(f"Finished {iterations} iteration(s) | Passed: {iterations}/{iterations} | "
                              "Pass Rate: 100.0%", out)
            with self.subTest(model=name, mode=mode, direction=direction, check="false"):
                out = self.vkgraphy(*args, "false", expect=8)
                iterations = len(layers) + 1 if mode == "linear" else 1
                self.assertIn(f"Finished {iterations} iteration(s) | Passed: 0/{iterations} | Pass Rate: 0.0%", out)
                self.assertIn(f"No configuration passed, not even with all {len(layers)} candidate layer(s) in fp32",
                              out)
                self.assertNotIn("Build with", out)

    def test_precision_on_a_device_without_fp16_is_an_error(self):
        out = self.vkgraphy("--vk-disable-fp16", "debug", "precision", vk_model("fp16_overflow.onnx"), "--fp16",
                            "--check", "true", expect=3)
        self.assertIn("no fp16 support", out)
        out = self.vkgraphy("debug", "precision", vk_model("fp16_overflow.onnx"), "--check", "true", expect=3)
        self.assertIn("add --fp16", out)

    def test_reduce_finds_the_softmax_of_a_transformer_layer(self):
        # 34 nodes with reshapes, transposes and residual branches: bisect needs 10 iterations.
        out = self.vkgraphy("debug", "reduce", vk_model("transformer.onnx"), "-o", "reduced.onnx", "--check", BIN, "run",
                            "vkgraphy_debug.onnx", "--vk", "--ref", "--builder-optimization-level", "0",
                            env={FAULTY: "softmax.*"})
        m = onnx.load(self.path("reduced.onnx"))
        self.assertEqual([n.op_type for n in m.graph.node], ["Softmax"])
        self.assertIn("Minimum failing subgraph", out)

    def test_reduce_isolates_the_node_with_the_faulty_tactic(self):
        path = vk_model("branchy.onnx")
        for mode in ("bisect", "linear"):
            with self.subTest(mode=mode):
                self.vkgraphy("debug", "reduce", path, "-o", "reduced.onnx", "--mode", mode, "--check", BIN, "run",
                              "vkgraphy_debug.onnx", "--vk", "--ref", "--builder-optimization-level", "0",
                              env={FAULTY: "softmax.*"})
                m = onnx.load(self.path("reduced.onnx"))
                self.assertEqual([n.name for n in m.graph.node], ["soft"])
                # The reduced model still shows the bug, and runs clean without the fault.
                self.vkgraphy("run", "reduced.onnx", "--vk", "--ref", "--builder-optimization-level", "0",
                              env={FAULTY: "softmax.*"}, expect=1)
                self.vkgraphy("run", "reduced.onnx", "--vk", "--ref", "--builder-optimization-level", "0")


class TestWorkflowsWithPolygraphyGoldens(TestWorkflows):
    """The same workflows with the real Polygraphy making the goldens on ONNX Runtime
    (`polygraphy run --onnxrt --save-outputs`): its data loader draws the inputs vkgraphy's
    draws (test_polygraphy_interop.py), so the engines under test see the same data."""

    def make_golden(self, path):
        proc = subprocess.run([POLYGRAPHY, "run", path, "--onnxrt", "--save-outputs", "golden.json"], cwd=self.tmp,
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_reduce_with_onnx_runtime_as_the_reference(self):
        # Polygraphy's own reduce recipe (--check polygraphy run polygraphy_debug.onnx --trt --onnxrt), with
        # vkgraphy's engine in TensorRT's place: ONNX Runtime's outputs of each subgraph are the reference.
        check = ["sh", "-c", f"{POLYGRAPHY} run vkgraphy_debug.onnx --onnxrt --save-outputs ort.json >/dev/null && "
                 f"{BIN} run vkgraphy_debug.onnx --vk --builder-optimization-level 0 --load-outputs ort.json"]
        self.vkgraphy("debug", "reduce", vk_model("transformer.onnx"), "-o", "reduced.onnx", "--check", *check,
                      env={FAULTY: "softmax.*"})
        m = onnx.load(self.path("reduced.onnx"))
        self.assertEqual([n.op_type for n in m.graph.node], ["Softmax"])


if __name__ == "__main__":
    unittest.main()
