"""The README's "A few things to try", run as written and in order.

The commands are read from README.md itself, so the README cannot drift from the
tool: each runs with bash in a scratch folder that holds `build`, `tests` and
`.venv` as the repository root does, and each must do what its comment says
(the checks below, one per command, in README order). A command added to or
removed from the README fails test_the_commands_are_the_ones_checked until it
is given a check here.
"""
import os
import re
import subprocess
import time
import unittest

from vkgraphy_cli import BIN, SOURCE_DIR, VENV, CliTestCase

README = os.path.join(SOURCE_DIR, "README.md")


def readme_commands():
    """The commands of the README's "A few things to try" block: continuation lines
    joined, comments (whole lines and trailing "  # ...") dropped."""
    with open(README) as f:
        text = f.read()
    section = text[text.index("## A few things to try"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands, pending = [], ""
    for line in block.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        line = re.sub(r"\s{2,}# .*$", "", line)
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        commands.append(" ".join((pending + line).split()))
        pending = ""
    return commands


def layers_of(output):
    """(name, tactic, precision) of each engine layer in `inspect model ENGINE --show layers` output."""
    return re.findall(r"Layer \d+\s+\| (\S+) \[Op: \w+\] \| Tactic: (\S+) \| Precision: (\w+)", output)


class ReadmeTest(CliTestCase):
    # Each command's check: (how the command starts, expected exit code, check(self, output)).
    # Output is stdout and stderr together.
    CHECKS = [
        ("cp tests/models/vk/example.onnx model.onnx", 0, lambda t, out: t.assertTrue(t.exists("model.onnx"))),
        ("./build/vkgraphy run model.onnx --ref --save-outputs golden.json", 0,
         lambda t, out: t.assertEqual(t.saved_outputs("golden.json"), ["y"])),
        ("./build/vkgraphy run model.onnx --ref --load-outputs golden.json --atol 1e-4 --check-error-stat max", 0,
         lambda t, out: t.assertIn("Checking max error", out)),
        ("./build/vkgraphy check accuracy accuracy.json --check-error-stat median --atol 1e-6", 0,
         lambda t, out: (t.assertIn("Passed: 1/1 iterations | Pass Rate: 100.00%", out),
                         t.assertIn("PASSED | Accuracy results passed the requested thresholds.", out))),
        (".venv/bin/polygraphy run model.onnx --onnxrt --save-outputs polygraphy_golden.json", 0,
         lambda t, out: t.assertTrue(t.exists("polygraphy_golden.json"))),
        ("./build/vkgraphy run model.onnx --ref --load-outputs polygraphy_golden.json", 0,
         lambda t, out: t.assertRegex(out, r"Accuracy Comparison \| ref-runner\S+ vs\. onnxrt-runner")),
        ("./build/vkgraphy run model.onnx --ref --onnx-outputs mark all --save-inputs inputs.json --save-outputs all.json", 0,
         lambda t, out: t.assertIn("energy", t.saved_outputs("all.json"))),
        ("./build/vkgraphy run model.onnx --vk --ref --vk-outputs mark all --onnx-outputs mark all --atol 1e-4", 0,
         lambda t, out: t.assertRegex(out, r"PASSED \| All outputs matched \| Outputs: \['y', 'conv1', .*'energy'")),
        ("./build/vkgraphy debug precision model.onnx --fp16 --save-layer-precisions fp32_layers.json", 0,
         lambda t, out: (t.assertIn("To pass the check, run these 2 layer(s) in fp32: energy, norm", out),
                         t.assertEqual(t.read_json("fp32_layers.json")["layer_precisions"],
                                       {"energy": "fp32", "norm": "fp32"}))),
        ("./build/vkgraphy convert model.onnx -o model.engine --fp16 --load-layer-precisions fp32_layers.json "
         "--save-tactics replay.json --save-timing-cache cache.json", 0,
         # fp16 or fp32 per layer as timing decides (reformats then vary); six of the seven layers are
         # timed: on lavapipe the global pooling has one candidate the CPU cost model keeps (builder.md).
         lambda t, out: t.assertRegex(out, r"Built engine in .* layers .* [1-9]\d* tactic\(s\) timed in 6 layer")),
        ("./build/vkgraphy run model.engine --vk --load-outputs golden.json --atol 0.1 --rtol 1e-2", 0,
         lambda t, out: t.assertIn("PASSED | All outputs matched", out)),
        ("./build/vkgraphy run model.engine --vk --iterations 20 --profile", 0,
         lambda t, out: t.assertIn("per-layer device time (median of 20 iteration(s))", out)),
        ("./build/vkgraphy convert model.onnx -o again.engine --fp16 --load-layer-precisions fp32_layers.json "
         "--load-tactics replay.json", 0,
         lambda t, out: t.assertEqual(t.engine_layers("again.engine"), t.engine_layers("model.engine"))),
        ("./build/vkgraphy convert model.onnx -o fast.engine --fp16 --load-layer-precisions fp32_layers.json "
         "--load-timing-cache cache.json", 0,
         lambda t, out: (t.assertIn(" 0 tactic(s) timed in 0 layer(s)", out),
                         t.assertIn("6 layer(s) from the timing cache", out),
                         t.assertEqual(t.engine_layers("fast.engine"), t.engine_layers("model.engine")))),
        ("./build/vkgraphy convert model.onnx -o fp32.engine -v", 0,
         lambda t, out: (t.assertEqual(out.count("<- chosen"), 6), t.assertIn("(not timed)", out),
                         t.assertTrue(t.exists("model.engine")))),
        ("./build/vkgraphy inspect model fp32.engine --show layers", 0,
         lambda t, out: t.assertEqual([p for _, _, p in layers_of(out)], ["fp32"] * 7)),
        ("VKGRAPHY_FAULTY_TACTICS=conv.direct.f32 ./build/vkgraphy debug build model.onnx --until 10", 5,
         lambda t, out: (t.assertRegex(out, r"Finished 10 iteration\(s\) \| Passed: [1-9]/10"),
                         t.assertTrue(t.exists("replay.json")))),
        ("./build/vkgraphy inspect diff-tactics --dir vkgraphy_artifacts", 0,
         lambda t, out: t.assertIn("The failure follows tactic conv.direct.f32 (fp32) in whichever layer runs it",
                                   out)),
        ("./build/vkgraphy run model.onnx --vk --load-layer-precisions tests/models/vk/example_gpu_fp16_replay.json",
         1, lambda t, out: (t.assertIn("Loaded 9 layer precision(s)", out),
                            t.assertIn("FAILED | Mismatched outputs: ['y']", out))),
        ("./build/vkgraphy debug reduce model.onnx -o reduced.onnx --mode linear", 0,
         # Which subgraph is smallest depends on the fp16 tactics timing chose (a rounding error
         # near the tolerance may or may not fail), so the test checks what holds for any choice:
         # the model fails, and the subgraph written is smaller and loads.
         lambda t, out: (t.assertIn("[E] FAILED | Iteration 0", out),
                         t.assertRegex(out, r"Minimum failing subgraph: inputs \[\S+\] -> outputs \[\S+\] \([1-9] nodes?\)"),
                         t.assertRegex(t.run_here("./build/vkgraphy inspect model reduced.onnx")[1],
                                       r"---- [1-9] Node\(s\) ----"))),
        ("./build/vkgraphy data concat golden.json golden.json -o golden_x2.json", 0,
         lambda t, out: (t.assertIn("Saved an output file of 1 runner(s), 2 iteration(s) in all", out),
                         t.assertEqual(len(t.read_json("golden_x2.json")["lst"][0][1]), 2))),
        ("./build/vkgraphy data merge inputs.json all.json -o layerwise_inputs.json", 0,
         lambda t, out: (t.assertIn("Saved an input file of 1 iteration(s)", out),
                         t.assertTrue({"x", "feat", "energy", "y"} <= set(t.read_json("layerwise_inputs.json")[0])))),
        ("./build/vkgraphy inspect model model.onnx --show layers attrs weights", 0,
         lambda t, out: t.assertIn("energy.axes = [1, 2, 3]", out)),
        ("./build/vkgraphy inspect data golden.json", 0, lambda t, out: t.assertIn("y [dtype=float32, shape=(1, 10)]", out)),
        ("./build/vkgraphy inspect device --vk-validation", 0,
         lambda t, out: t.assertIn("Khronos validation layer: on", out)),
        ("./build/vkgraphy inspect capability model.onnx", 0,
         lambda t, out: (t.assertIn("Graph is fully supported by the Vulkan builder", out),
                         t.assertFalse(t.exists("vkgraphy_capability_dumps")))),
        ("./build/vkgraphy check lint model.onnx -o lint.json", 0,
         lambda t, out: (t.assertIn("PASSED | 10 node(s) passing, 0 failing, 0 finding(s)", out),
                         t.assertEqual(t.read_json("lint.json")["lint_entries"], []))),
        ("./build/vkgraphy surgeon extract model.onnx --inputs feat:auto:auto --outputs norm:auto -o sub.onnx", 0,
         lambda t, out: t.assertIn("Extracted 2 of 10 node(s)", out)),
        ("./build/vkgraphy surgeon sanitize model.onnx --fold-constants --override-input-shapes x:[4,3,32,32]", 0,
         lambda t, out: (t.assertIn("[W] Input 'x': fixed dimension 0 changes from 1 to 4", out),
                         t.assertIn("y [dtype=float32, shape=(4, 10)]",
                                    t.run_here("./build/vkgraphy inspect model clean.onnx")[1]))),
        ("./build/vkgraphy surgeon insert model.onnx --inputs feat --outputs normalized --op LeakyRelu", 0,
         lambda t, out: (t.assertIn("Inserted a LeakyRelu node, replacing 3 node(s)", out),
                         t.assertIn("Op counts: Conv x2, Relu x2, Flatten x1, Gemm x1, GlobalAveragePool x1, LeakyRelu x1",
                                    t.run_here("./build/vkgraphy inspect model inserted.onnx")[1]))),
        ("./build/vkgraphy surgeon weight-strip model.onnx -o weightless.onnx", 0,
         lambda t, out: t.assertIn("Finished stripping 6 weights", out)),
        ("./build/vkgraphy surgeon weight-reconstruct weightless.onnx -o proxy.onnx", 0,
         lambda t, out: (t.assertIn("Finished reconstructing 6 weights", out),
                         t.assertIn("Op counts: Conv x2", t.run_here("./build/vkgraphy inspect model proxy.onnx")[1]))),
        (".venv/bin/python -c \"import vkgraphy;", 0, lambda t, out: t.assertIn("<CompareResult PASSED, 1 output(s)>", out)),
        (".venv/bin/polygraphy run model.onnx --vkgraphy --onnxrt --vkgraphy-fp16 --atol 0.1 --rtol 1e-2 "
         "--vkgraphy-load-layer-precisions", 0,
         lambda t, out: t.assertRegex(out, r"PASSED \| Runtime: .* --vkgraphy --onnxrt")),
        (".venv/bin/polygraphy run model.onnx --vkgraphy --onnxrt --vkgraphy-fp16 --atol 0.1 --rtol 1e-2", 1,
         lambda t, out: (t.assertIn("Accuracy Summary | vkgraphy-runner", out), t.assertIn("FAILED | Runtime", out))),
        (".venv/bin/polygraphy debug reduce model.onnx -o polygraphy_reduced.onnx --mode linear", 0,
         lambda t, out: t.assertRegex(t.run_here("./build/vkgraphy inspect model polygraphy_reduced.onnx")[1],
                                      r"---- [1-9] Node\(s\) ----")),
    ]

    def setUp(self):
        super().setUp()
        # The scratch folder stands for the repository root.
        os.symlink(os.path.dirname(os.path.abspath(BIN)), self.path("build"))
        os.symlink(os.path.abspath(os.path.join(SOURCE_DIR, "tests")), self.path("tests"))
        os.symlink(VENV, self.path(".venv"))

    def exists(self, name):
        return os.path.exists(self.path(name))

    def saved_outputs(self, name):
        return list(self.read_json(name)["lst"][0][1][0]["outputs"])

    def run_here(self, command):
        proc = subprocess.run(["bash", "-c", command], cwd=self.tmp, capture_output=True, text=True, timeout=600)
        return proc.returncode, proc.stdout + proc.stderr

    def engine_layers(self, engine):
        rc, out = self.run_here(f"./build/vkgraphy inspect model {engine} --show layers")
        self.assertEqual(rc, 0, out)
        return layers_of(out)

    def test_the_commands_are_the_ones_checked(self):
        commands = readme_commands()
        self.assertEqual(len(commands), len(self.CHECKS), "\n".join(commands))
        for command, (start, _, _) in zip(commands, self.CHECKS):
            self.assertTrue(command.startswith(start), f"README command\n  {command}\nis checked as\n  {start}")

    def test_readme_commands_in_order(self):
        commands = readme_commands()
        self.assertEqual(len(commands), len(self.CHECKS))
        for command, (_, expect, check) in zip(commands, self.CHECKS):
            t0 = time.monotonic()
            rc, out = self.run_here(command)
            with self.subTest(command=command):
                self.assertEqual(rc, expect, f"{command}\n{out}")
                # vkgraphy's commands are quiet: no warning but those the commands ask for (a fixed
                # dimension changed) or Polygraphy prints too (relative error with zeros).
                if "./build/vkgraphy" in command:
                    warnings = [l for l in out.splitlines() if l.startswith("[W]") and not any(
                        w in l for w in ("fixed dimension", "Some values are 0"))]
                    self.assertEqual(warnings, [], f"{command}\n{out}")
                check(self, out)
            print(f"{time.monotonic() - t0:6.2f} s  {command[:110]}")


if __name__ == "__main__":
    unittest.main()
