"""`vkgraphy check lint` beside the real `polygraphy check lint` (ONNX Runtime, the test venv): the same
findings on Polygraphy's own lint models and on broken models made for this test (lint_models.py).
"The same" means: the same exit status, the same failing and passing nodes, and the same exception and
warning entries by level, source and nodes (sources named for vkgraphy's checkers: ONNX Runtime's
findings are the reference backend's, GraphSurgeon's the graph's). vkgraphy's info entries (outputs
no one reads, parts of the graph that share no tensor) are its own; its warning for stale value_info
names the producing node, where ONNX Runtime's names the tensor alone.

Two of Polygraphy's ways are not followed (both tested): when the whole model runs, Polygraphy exits
0 and lists every node as passing even if an entry is an exception (a duplicate node name); vkgraphy
exits 1 whenever there is an exception, and a failing node is never passing."""
import glob
import json
import os
import subprocess

from vkgraphy_cli import MODELS, VENV, VENV_PYTHON, CliTestCase

EXIT_FAILED, EXIT_INPUT = 1, 3
LINT_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lint_models.py")
# Polygraphy's lint fixtures (tests/models/polygraphy), each a fault or a clean graph.
POLYGRAPHY_FIXTURES = [
    "bad_graph_conditionally_invalid", "bad_graph_with_dup_value_info", "bad_graph_with_duplicate_node_names",
    "bad_graph_with_multi_level_errors", "bad_graph_with_no_import_domains", "bad_graph_with_no_name",
    "bad_graph_with_parallel_invalid_nodes", "custom_op_node", "empty", "identity_identity", "add_with_dup_inputs",
    "capability",
]
MADE = ["unused_input_and_node", "type_mismatch", "runtime_reshape", "failure_downstream", "stale_value_info",
        "parts_and_unread_output"]
SOURCES = {"onnxruntime": "reference", "onnx_graphsurgeon": "graph", "onnx_checker": "onnx_checker",
           "onnx_loader": "onnx_loader"}

# Runs Polygraphy's lint on each "MODEL|REPORT|ARGS..." in one process; prints each exit status.
POLYGRAPHY_BATCH = r"""
import json, sys
from polygraphy.tools import main
for spec in sys.argv[1:]:
    model, report, *extra = spec.split("|")
    try:
        rc = main(["check", "lint", model, "-o", report, *extra])
    except SystemExit as e:
        rc = e.code
    print("RC " + json.dumps([report, rc]))
"""


def findings(report, theirs):
    """(level, source, nodes) of each exception and warning, sorted; node names in vkgraphy's words."""
    out = []
    for e in report["lint_entries"]:
        if e["level"] == "info":
            continue
        nodes = tuple(n.replace("polygraphy_unnamed_node_", "vkgraphy_unnamed_node_") for n in e.get("nodes", []))
        out.append((e["level"], SOURCES[e["source"]] if theirs else e["source"], nodes))
    return sorted(out)


def summary(report, key):
    return sorted(n.replace("polygraphy_unnamed_node_", "vkgraphy_unnamed_node_") for n in report["summary"][key])


class CheckLint(CliTestCase):
    def made_models(self):
        proc = subprocess.run([VENV_PYTHON, LINT_MODELS, self.tmp], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def model_path(self, name):
        return os.path.join(MODELS, name + ".onnx") if name in POLYGRAPHY_FIXTURES else self.path(name + ".onnx")

    def polygraphy_lint(self, cases):
        """{report name: exit status} of Polygraphy's lint on each (model name, report name, extra args)."""
        specs = ["|".join([self.model_path(m), self.path(r), *extra]) for m, r, extra in cases]
        proc = subprocess.run([VENV_PYTHON, "-c", POLYGRAPHY_BATCH, *specs], capture_output=True, text=True,
                              timeout=600, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        codes = dict(json.loads(l[3:]) for l in proc.stdout.splitlines() if l.startswith("RC "))
        return {os.path.basename(k): v for k, v in codes.items()}

    def vkgraphy_lint(self, model, report, *extra):
        out = self.vkgraphy("check", "lint", self.model_path(model), "-o", report, *extra, expect=None)
        rc = EXIT_FAILED if "FAILED |" in out else 0
        return rc, out

    def assert_same(self, name, theirs_rc, theirs, ours_rc, ours):
        self.assertEqual(findings(ours, False), findings(theirs, True), name)
        self.assertEqual(summary(ours, "failing"), summary(theirs, "failing"), name)
        # Polygraphy lists a failing node as passing too when the whole model ran.
        self.assertEqual(summary(ours, "passing"),
                         sorted(set(summary(theirs, "passing")) - set(summary(theirs, "failing"))), name)
        has_exception = any(e["level"] == "exception" for e in theirs["lint_entries"])
        self.assertEqual(ours_rc, EXIT_FAILED if has_exception else theirs_rc, name)

    def test_same_findings_as_polygraphy(self):
        self.made_models()
        names = [n for n in POLYGRAPHY_FIXTURES + MADE if n != "stale_value_info"]
        codes = self.polygraphy_lint([(n, f"pg_{n}.json", []) for n in names])
        for name in names:
            with self.subTest(model=name):
                rc, out = self.vkgraphy_lint(name, f"vk_{name}.json")
                ours = self.read_json(f"vk_{name}.json")
                self.assertEqual("LINT |" in out, bool(ours["lint_entries"]), out)  # each finding is printed
                self.assert_same(name, codes[f"pg_{name}.json"], self.read_json(f"pg_{name}.json"), rc, ours)

    def test_data_dependent_faults_follow_the_loaded_inputs(self):
        """bad_graph_conditionally_invalid: the If picks a branch whose tensor MatMul cannot take when
        cond is False; both tools run it on the inputs loaded with --load-inputs."""
        subprocess.run([VENV_PYTHON, "-c", "import numpy as np, sys\nfrom polygraphy.json import save_json\n"
                        "for v in (True, False): save_json([{'cond': np.array((v,))}], sys.argv[1] + f'/cond_{v}.json')",
                        self.tmp], check=True, timeout=120)
        model = "bad_graph_conditionally_invalid"
        cases = [(model, f"pg_{v}.json", ["--load-input-data", self.path(f"cond_{v}.json")]) for v in (True, False)]
        codes = self.polygraphy_lint(cases)
        for v in (True, False):
            with self.subTest(cond=v):
                rc, _ = self.vkgraphy_lint(model, f"vk_{v}.json", "--load-inputs", f"cond_{v}.json")
                self.assert_same(model, codes[f"pg_{v}.json"], self.read_json(f"pg_{v}.json"), rc,
                                 self.read_json(f"vk_{v}.json"))
        ours = self.read_json("vk_False.json")
        self.assertEqual(ours["summary"]["failing"], ["MatMul"])
        self.assertIn("Incompatible dimensions for matrix multiplication", ours["lint_entries"][0]["message"])

    def test_messages_name_the_fault(self):
        self.made_models()
        expected = {
            "bad_graph_with_duplicate_node_names":
                "Duplicate node name: 'identical' for nodes with topological IDs: [0, 1] found.",
            "bad_graph_with_no_name": "Field 'name' of 'graph' is required to be non-empty.",
            "empty": "ONNX model has no nodes",
            "type_mismatch": "inputs have different types float32 and int64",
            "runtime_reshape": "cannot reshape float32[2, 3]",
            "failure_downstream": "Incompatible dimensions for matrix multiplication",
            "custom_op_node": "(a custom op): not checked",
        }
        for name, text in expected.items():
            with self.subTest(model=name):
                self.vkgraphy_lint(name, "r.json")
                messages = [e["message"] for e in self.read_json("r.json")["lint_entries"]]
                self.assertTrue(any(text in m for m in messages), messages)
        # The node after a failing one is not checked: neither passing nor failing.
        self.vkgraphy_lint("failure_downstream", "d.json")
        report = self.read_json("d.json")
        self.assertNotIn("after_bad", report["summary"]["passing"] + report["summary"]["failing"])

    def test_findings_of_vkgraphy_alone(self):
        """Stale value_info is a warning naming the tensor and its producer (Polygraphy: ONNX Runtime's
        warning about the merge, naming the tensor alone); unread outputs and disconnected parts are infos."""
        self.made_models()
        codes = self.polygraphy_lint([("stale_value_info", "pg.json", [])])
        [theirs] = self.read_json("pg.json")["lint_entries"]
        self.assertEqual((theirs["level"], codes["pg.json"]), ("warning", 0))
        self.assertIn("'r' source:{2,3} target:{2,4}", theirs["message"])
        rc, _ = self.vkgraphy_lint("stale_value_info", "vk.json")
        self.assertEqual(rc, 0)
        [entry] = self.read_json("vk.json")["lint_entries"]
        self.assertEqual((entry["level"], entry["source"], entry["nodes"]), ("warning", "graph", ["relu"]))
        self.assertIn("records float32 [2,4] in value_info, shape inference finds float32 [2,3]", entry["message"])
        self.vkgraphy_lint("parts_and_unread_output", "p.json")
        infos = [e for e in self.read_json("p.json")["lint_entries"] if e["level"] == "info"]
        self.assertIn({"level": "info", "source": "graph", "nodes": ["split"],
                       "message": "Output 's1' is never read (neither a graph output nor another node's input)."},
                      infos)
        parts = sorted(tuple(e["nodes"]) for e in infos if e["message"].startswith("Part "))
        self.assertEqual(parts, [("neg",), ("split", "relu")])

    def test_valid_models_beyond_vkgraphy_are_warnings(self):
        """Valid models (ONNX's own node tests, from the venv's onnx wheel) that use what vkgraphy cannot
        run: inputs it cannot make data for (sequences, optionals, strings), ops newer than its ONNX,
        a model of ai.onnx.ml ops alone, a Cast to string, forms of ops ONNX changed after opset 17
        (an optional input, float8 types). Each is a warning, never an exception."""
        node_tests = glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "onnx", "backend", "test",
                                            "data", "node"))
        self.assertTrue(node_tests, "the venv's onnx wheel has no node tests: run ./setup.sh")
        for name in ["test_sequence_map_add_2_sequences", "test_optional_get_element_sequence", "test_string_concat",
                     "test_center_crop_pad_pad", "test_ai_onnx_ml_array_feature_extractor",
                     "test_cast_FLOAT_to_STRING", "test_optional_has_element_empty_no_input_optional_input",
                     "test_cast_FLOAT_to_FLOAT8E4M3FNUZ"]:
            with self.subTest(model=name):
                out = self.vkgraphy("check", "lint", os.path.join(node_tests[0], name, "model.onnx"), "-o", "r.json")
                entries = self.read_json("r.json")["lint_entries"]
                self.assertEqual([e for e in entries if e["level"] == "exception"], [], out)
                self.assertTrue(any(e["level"] == "warning" for e in entries), out)

    def test_bad_input(self):
        # Not a model: the loader's exception in the report, exit 1.
        with open(self.path("garbage.onnx"), "wb") as f:
            f.write(b"\x08\x07\x12\xff\xff\xff garbage")
        self.vkgraphy("check", "lint", "garbage.onnx", "-o", "g.json", expect=EXIT_FAILED)
        [entry] = self.read_json("g.json")["lint_entries"]
        self.assertEqual((entry["level"], entry["source"]), ("exception", "onnx_loader"))
        self.assertIn("not a valid ONNX model", entry["message"])
        # A file that is not there, or options that do not fit the model: an error, no report.
        for args in (["missing.onnx"],
                     [os.path.join(MODELS, "identity_identity.onnx"), "--input-shapes", "nope:[1]"],
                     [os.path.join(MODELS, "identity_identity.onnx"), "--load-inputs", "missing.json"]):
            with self.subTest(args=args):
                out = self.vkgraphy("check", "lint", *args, "-o", "none.json", expect=EXIT_INPUT)
                self.assertIn("[E]", out)
                self.assertFalse(os.path.exists(self.path("none.json")))
