"""`vkgraphy run`: reference runs, saving/loading/comparing outputs, marking, errors, global options."""
import base64
import io
import json
import os
import re
import shutil

import numpy as np

from vkgraphy_cli import CliTestCase, SOURCE_DIR, model

EXIT_FAILED, EXIT_USAGE, EXIT_INPUT = 1, 2, 3


def load_polygraphy_outputs(path):
    """Reads a RunResults file the way Polygraphy does, with numpy only."""
    with open(path) as f:
        data = json.load(f)
    assert data["polygraphy_class"] == "RunResults"
    runs = {}
    for runner, iterations in data["lst"]:
        runs[runner] = []
        for it in iterations:
            outs = {}
            for name, arr in it["outputs"].items():
                if arr.get("polygraphy_class") != "ndarray":
                    arr = arr["values"]
                outs[name] = np.load(io.BytesIO(base64.b64decode(arr["array"])), allow_pickle=False)
            runs[runner].append(outs)
    return runs


class RunReference(CliTestCase):
    def test_residual_block_runs(self):
        out = self.vkgraphy("run", model("residual_block.onnx"), "--ref", "--input-shapes", "gpu_0/data_0:[1,3,224,224]")
        self.assertIn("PASSED | Runner: ref-runner-N0", out)

    def test_save_then_compare_passes_and_tampering_fails(self):
        golden = self.path("golden.json")
        self.vkgraphy("run", model("conv.onnx"), "--ref", "--save-outputs", golden)
        runs = load_polygraphy_outputs(golden)
        (iterations,) = runs.values()
        self.assertEqual(len(iterations), 1)
        out = self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", golden)
        self.assertIn("PASSED", out)
        # Change one value of the golden output: the comparison must fail with exit code 1.
        with open(golden) as f:
            data = json.load(f)
        arr = data["lst"][0][1][0]["outputs"]
        name = next(iter(arr))
        entry = arr[name] if arr[name]["polygraphy_class"] == "ndarray" else arr[name]["values"]
        values = np.load(io.BytesIO(base64.b64decode(entry["array"])))
        values.flat[0] += 1.0
        buf = io.BytesIO()
        np.save(buf, values)
        entry["array"] = base64.b64encode(buf.getvalue()).decode()
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump(data, f)
        out = self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", bad, expect=EXIT_FAILED)
        self.assertIn("FAILED", out)
        # A loose enough tolerance passes again.
        self.vkgraphy("run", model("conv.onnx"), "--ref", "--load-outputs", bad, "--atol", "2")

    def test_polygraphy_written_golden_round_trips(self):
        data_dir = os.path.join(SOURCE_DIR, "tests", "data")
        golden = os.path.join(data_dir, "polygraphy_golden_identity.json")
        inputs = os.path.join(data_dir, "polygraphy_golden_identity_inputs.json")
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", inputs, "--load-outputs", golden,
                            "--save-outputs", self.path("again.json"))
        self.assertIn("PASSED", out)
        runs = load_polygraphy_outputs(self.path("again.json"))
        self.assertEqual(len(runs), 2)

    def test_mark_all_returns_every_tensor(self):
        out_path = self.path("all.json")
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "mark", "all", "--save-outputs", out_path)
        (iterations,) = load_polygraphy_outputs(out_path).values()
        self.assertEqual(set(iterations[0]), {"identity_out_0", "identity_out_2", "add_out_4", "identity_out_6",
                                              "identity_out_8"})

    def test_named_and_excluded_outputs(self):
        out_path = self.path("some.json")
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "add_out_4", "identity_out_0",
                      "--save-outputs", out_path)
        (iterations,) = load_polygraphy_outputs(out_path).values()
        self.assertEqual(set(iterations[0]), {"add_out_4", "identity_out_0"})
        self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "mark", "all",
                      "--onnx-exclude-outputs", "add_out_4", "--save-outputs", out_path)
        (iterations,) = load_polygraphy_outputs(out_path).values()
        self.assertNotIn("add_out_4", iterations[0])
        self.assertIn("identity_out_0", iterations[0])
        out = self.vkgraphy("run", model("reducable.onnx"), "--ref", "--onnx-outputs", "nope", expect=EXIT_INPUT)
        self.assertIn("'nope'", out)

    def test_iterations_and_saved_inputs(self):
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--iterations", "3", "--save-inputs", self.path("in.json"),
                      "--save-outputs", self.path("out.json"))
        with open(self.path("in.json")) as f:
            self.assertEqual(len(json.load(f)), 3)
        (iterations,) = load_polygraphy_outputs(self.path("out.json")).values()
        self.assertEqual(len(iterations), 3)

    def test_dynamic_shapes_need_input_shapes(self):
        out = self.vkgraphy("run", model("dynamic_identity.onnx"), "--ref", "--input-shapes", "X:[1,2,5,5]",
                            "--save-outputs", self.path("o.json"))
        (iterations,) = load_polygraphy_outputs(self.path("o.json")).values()
        self.assertEqual(iterations[0]["Y"].shape, (1, 2, 5, 5))


class RunErrors(CliTestCase):
    BAD_MODELS = ["bad_graph_conditionally_invalid.onnx", "bad_graph_with_dup_value_info.onnx",
                  "bad_graph_with_duplicate_node_names.onnx", "bad_graph_with_multi_level_errors.onnx",
                  "bad_graph_with_no_import_domains.onnx", "bad_graph_with_no_name.onnx",
                  "bad_graph_with_parallel_invalid_nodes.onnx", "empty.onnx", "custom_op_node.onnx",
                  "capability.onnx"]

    def test_malformed_models_give_one_clear_error(self):
        for name in self.BAD_MODELS:
            with self.subTest(model=name):
                out = self.vkgraphy("run", model(name), "--ref", expect=EXIT_INPUT)
                errors = [l for l in out.splitlines() if l.startswith("[E]")]
                self.assertEqual(len(errors), 1, out)

    def test_missing_truncated_and_foreign_files(self):
        self.vkgraphy("run", self.path("missing.onnx"), "--ref", expect=EXIT_INPUT)
        with open(model("residual_block.onnx"), "rb") as f:
            data = f.read()
        with open(self.path("truncated.onnx"), "wb") as f:
            f.write(data[: len(data) // 3])
        self.assertIn("not a valid ONNX model", self.vkgraphy("run", "truncated.onnx", "--ref", expect=EXIT_INPUT))
        with open(self.path("notes.onnx"), "w") as f:
            f.write("hello, this is not a model\n")
        self.vkgraphy("run", "notes.onnx", "--ref", expect=EXIT_INPUT)

    def test_bad_data_files(self):
        with open(self.path("broken.json"), "w") as f:
            f.write("{not json")
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-outputs", "broken.json", expect=EXIT_INPUT)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", "broken.json", expect=EXIT_INPUT)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--load-inputs", "nothing.json", expect=EXIT_INPUT)

    def test_usage_errors(self):
        self.vkgraphy("run", expect=EXIT_USAGE)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--no-such-flag", expect=EXIT_USAGE)
        self.vkgraphy("run", model("identity.onnx"), "--ref", "--input-shapes", "x[1,2]", expect=EXIT_INPUT)


class GlobalOptions(CliTestCase):
    def test_verbosity_levels(self):
        normal = self.vkgraphy("run", model("identity.onnx"), "--ref")
        verbose = self.vkgraphy("run", model("identity.onnx"), "--ref", "-v")
        quiet = self.vkgraphy("run", model("identity.onnx"), "--ref", "-qq")
        silent = self.vkgraphy("run", model("identity.onnx"), "--ref", "--silent")
        self.assertIn("[V]", verbose)
        self.assertNotIn("[V]", normal)
        self.assertNotIn("[I]", quiet)
        self.assertEqual(silent.strip(), "")
        self.assertIn("[V]", self.vkgraphy("run", model("identity.onnx"), "--ref", "--verbosity", "verbose"))

    def test_log_format_and_file(self):
        out = self.vkgraphy("run", model("identity.onnx"), "--ref", "--log-format", "timestamp", "line-info",
                            "--log-file", self.path("log.txt"))
        self.assertRegex(out, r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] \[I\] \[[a-z_]+\.cpp:\d+\]")
        with open(self.path("log.txt")) as f:
            self.assertIn("PASSED", f.read())
        self.assertNotIn("\033[", out)  # no colours when not on a terminal
