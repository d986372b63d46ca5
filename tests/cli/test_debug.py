"""The debug tools (`vkgraphy debug build|repeat|precision|reduce`): the
scenarios of Polygraphy's own debug test suite, re-created with the same
models and a fake checker (fake_reduce_checker.py: fails when named nodes are
in the model), plus vkgraphy's additions. The three end-to-end workflows of
docs/debug.md are in test_debug_workflows.py."""
import glob
import json
import os
import re
import signal
import subprocess
import time
import unittest

import onnx

from checker_server import CheckerServer
from vkgraphy_cli import BIN, CliTestCase, model, onnx_checker_errors

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
FAKE_CHECKER = [PYTHON, os.path.join(HERE, "fake_reduce_checker.py"), "vkgraphy_debug.onnx"]
FLAKY = [PYTHON, os.path.join(HERE, "flaky_checker.py")]
CHECKER_SERVER = CheckerServer(PYTHON)  # the fake checker's checks in one process (checker_server.py)
NODE = "onnx_graphsurgeon_node_{}".format

# Exit codes (docs/debug.md).
MIXED, ALL_FAILED, NO_FAILURE, NOT_FOUND, INTERRUPTED = 5, 6, 7, 8, 130


def node_names(path):
    return [n.name for n in onnx.load(path).graph.node]


def setUpModule():
    CHECKER_SERVER.start()


def tearDownModule():
    CHECKER_SERVER.stop()


class DebugTestCase(CliTestCase):
    def flaky(self, pattern, *extra):
        return FLAKY + ["--state", self.path("state"), "--pattern", pattern, *extra]

    def sorted_files(self, art_dir, which):
        return sorted(glob.glob(os.path.join(self.path(art_dir), which, "*")))


class TestBuild(DebugTestCase):
    def test_until_good_and_until_bad_sort_one_replay_each(self):
        out = self.vkgraphy("debug", "build", model("identity.onnx"), "--save-tactics=replay.json", "--show-output",
                            "--art-dir", "arts", "--until=good", "--artifacts", "replay.json", "--check", "true")
        self.assertIn("Passed: 1/1 | Pass Rate: 100.0%", out)
        out = self.vkgraphy("debug", "build", model("identity.onnx"), "--save-tactics=replay.json", "--art-dir", "arts",
                            "--until=bad", "--artifacts", "replay.json", "--check", "false", expect=ALL_FAILED)
        self.assertIn("Passed: 0/1 | Pass Rate: 0.0%", out)
        for which in ("good", "bad"):
            files = self.sorted_files("arts", which)
            self.assertEqual(len(files), 1, files)
            name = os.path.basename(files[0])
            self.assertTrue(name.startswith("replay_iter0_") and name.endswith(".json"), name)
            with open(files[0]) as f:
                self.assertEqual(json.load(f)["format"], "vkgraphy-tactic-replay")
        # The intermediate engine is removed after each iteration.
        self.assertFalse(os.path.exists(self.path("vkgraphy_debug.engine")))

    def test_every_iteration_builds_an_engine_the_check_can_run(self):
        out = self.vkgraphy("debug", "build", model("matmul.onnx"), "--until", "2", "--builder-optimization-level", "0",
                            "--check", BIN, "run", "vkgraphy_debug.engine", "--vk")
        self.assertIn("Passed: 2/2", out)


class TestRepeat(DebugTestCase):
    def test_until_good_bad_and_count(self):
        for until, pattern, iterations, passed, code in (("good", "ffp", 3, 1, MIXED), ("bad", "ppf", 3, 2, MIXED),
                                                         ("5", "pf", 5, 3, MIXED), ("2", "p", 2, 2, 0),
                                                         ("2", "f", 2, 0, ALL_FAILED)):
            with self.subTest(until=until, pattern=pattern):
                if os.path.exists(self.path("state")):
                    os.remove(self.path("state"))
                out = self.vkgraphy("debug", "repeat", "--until", until, "--check", *self.flaky(pattern), expect=code)
                rate = f"{100.0 * passed / iterations:.1f}"
                self.assertIn(f"Finished {iterations} iteration(s) | Passed: {passed}/{iterations} | Pass Rate: {rate}%",
                              out)
                self.assertEqual(out.count("RUNNING | Iteration"), iterations)

    def test_iter_info_holds_the_iteration_number(self):
        out = self.vkgraphy("debug", "repeat", "--until", "4", "--iter-info", "info.json", "--show-output", "--check",
                            *self.flaky("pf", "--iter-info", "info.json"), expect=MIXED)
        self.assertIn("Passed: 2/4", out)
        for i in range(4):
            self.assertIn(f'"iteration": {i}', out)
        self.assertFalse(os.path.exists(self.path("info.json")), "the iteration info is removed afterwards")

    def test_ignore_fail_code_and_fail_code(self):
        out = self.vkgraphy("debug", "repeat", "--until", "2", "--ignore-fail-code", "3", "--check",
                            *self.flaky("f", "--code", "3"))
        self.assertIn("Passed: 2/2", out)
        out = self.vkgraphy("debug", "repeat", "--until", "2", "--fail-code", "4", "--check",
                            *self.flaky("f", "--code", "3"))
        self.assertIn("Passed: 2/2", out)
        self.vkgraphy("debug", "repeat", "--until", "2", "--fail-code", "3", "--check", *self.flaky("f", "--code", "3"),
                      expect=ALL_FAILED)

    def test_fail_regex_is_repeatable_and_any_pattern_fails(self):
        # Exit code 0, but the output matches the second pattern.
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--fail-regex", "NOT PRINTED", "--fail-regex",
                            "check pass[e]d", "--check", *self.flaky("p"), expect=ALL_FAILED)
        self.assertIn("Passed: 0/1", out)
        self.vkgraphy("debug", "repeat", "--until", "1", "--fail-regex", "NOT PRINTED", "ALSO NOT", "--check",
                      *self.flaky("p"))

    def test_failing_output_shown_unless_hidden_and_passing_output_only_with_show_output(self):
        out = self.vkgraphy("debug", "repeat", "--until", "2", "--check", *self.flaky("pf"), expect=MIXED)
        self.assertIn("CHECK FAILED", out)
        self.assertNotIn("check passed", out)
        out = self.vkgraphy("debug", "repeat", "--until", "2", "--hide-fail-output", "--check", *self.flaky("pf"),
                            expect=MIXED)
        self.assertNotIn("CHECK FAILED", out)
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--show-output", "--check", *self.flaky("p"))
        self.assertIn("check passed", out)

    def test_check_timeout_kills_a_hung_check(self):
        start = time.monotonic()
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--check-timeout", "0.5", "--check", "sleep", "30",
                            expect=ALL_FAILED)
        self.assertLess(time.monotonic() - start, 20)
        self.assertIn("--check-timeout", out)

    def test_a_check_that_cannot_run_is_an_error(self):
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--check", "/nonexistent/checker", expect=3)
        self.assertIn("/nonexistent/checker", out)
        self.vkgraphy("debug", "repeat", "--until", "1", "--check", expect=3)

    def test_artifacts_are_sorted_and_never_overwritten(self):
        make_art = ["sh", "-c", "echo run >> count; echo data > art.txt; test $(wc -l < count) -ne 2"]
        out = self.vkgraphy("debug", "repeat", "--until", "3", "--artifacts", "art.txt", "missing.txt", "--check",
                            *make_art, expect=MIXED)
        self.assertIn("missing.txt", out)  # a missing artifact is reported, not fatal
        good, bad = self.sorted_files("vkgraphy_artifacts", "good"), self.sorted_files("vkgraphy_artifacts", "bad")
        self.assertEqual(len(good), 2)
        self.assertEqual(len(bad), 1)
        self.assertIn("art_iter1_", bad[0])
        # The same second, the same iteration number: a second session still loses nothing.
        self.vkgraphy("debug", "repeat", "--until", "3", "--artifacts", "art.txt", "--check", *make_art)
        self.assertEqual(len(self.sorted_files("vkgraphy_artifacts", "bad")) + len(
            self.sorted_files("vkgraphy_artifacts", "good")), 6)

    def test_debug_replay_skips_checks_and_skip_current_is_written(self):
        out = self.vkgraphy("debug", "repeat", "--until", "3", "--save-debug-replay", "replay.json", "--check",
                            *self.flaky("pfp"), expect=MIXED)
        replay = self.read_json("replay.json")
        self.assertEqual(replay["format"], "vkgraphy-debug-replay")
        self.assertEqual([e["passed"] for e in replay["iterations"]], [True, False, True])
        # The _skip_current file lives only while a check runs (a crash or hang leaves it to resume from).
        self.assertFalse(os.path.exists(self.path("replay_skip_current.json")))
        self.vkgraphy("debug", "repeat", "--until", "2", "--save-debug-replay", "seen.json", "--check", "sh", "-c",
                      "cp seen_skip_current.json during.json")
        self.assertEqual([e["passed"] for e in self.read_json("during.json")["iterations"]], [True, False])
        self.assertFalse(os.path.exists(self.path("seen_skip_current.json")))
        # Replayed: the check (which would fail every time) never runs.
        out = self.vkgraphy("debug", "repeat", "--until", "3", "--load-debug-replay", "replay.json",
                            "--save-debug-replay", "again.json", "--check", "/nonexistent/checker", expect=MIXED)
        self.assertIn("Passed: 2/3", out)
        self.assertEqual(self.read_json("again.json")["iterations"], replay["iterations"])

    def test_ctrl_c_stops_cleanly_keeping_sorted_artifacts_and_the_replay(self):
        proc = subprocess.Popen([BIN, "debug", "repeat", "--until", "1000", "--artifacts", "a.txt", "--check", "sh",
                                 "-c", "echo x > a.txt; sleep 0.3"], cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        replay = self.path("vkgraphy_debug_replay.json")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.exists(replay) and len(self.read_json("vkgraphy_debug_replay.json")["iterations"]) >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # as the terminal's Ctrl-C (the check runs in its own process group)
        out, _ = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, INTERRUPTED, out)
        done = len(self.read_json("vkgraphy_debug_replay.json")["iterations"])
        self.assertGreaterEqual(done, 2)
        self.assertIn(f"Finished {done} iteration(s) | Passed: {done}/{done}", out)
        self.assertIn("interrupted", out)
        self.assertEqual(len(self.sorted_files("vkgraphy_artifacts", "good")), done)

    def test_bad_debug_replay_is_a_clear_error(self):
        self.write_json("bad.json", {"format": "vkgraphy-debug-replay", "version": 1, "tool": "repeat",
                                     "iterations": [{"iteration": 0}]})
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--load-debug-replay", "bad.json", "--check", "true",
                            expect=3)
        self.assertIn("iterations[0]", out)

    def interactive(self, stdin, *args, expect=0):
        proc = subprocess.run([BIN, "debug", *args], cwd=self.tmp, input=stdin, capture_output=True, text=True,
                              timeout=120)
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, expect, out)
        return out

    def test_interactive_answers_with_invalid_ones_first(self):
        out = self.interactive("maybe\n\nf\npass\nx\nF\n", "repeat", "--until", "3", expect=MIXED)
        self.assertIn("Did 'this iteration' [p]ass or [f]ail?", out)
        self.assertEqual(out.count("Please answer"), 3)
        self.assertIn("Passed: 1/3", out)

    def test_interactive_end_of_input_stops_cleanly(self):
        out = self.interactive("p\n", "repeat", "--until", "5", expect=INTERRUPTED)
        self.assertIn("end of input", out)
        self.assertIn("Finished 1 iteration(s) | Passed: 1/1", out)

    def test_interactive_build_names_the_engine(self):
        out = self.interactive("f\n", "build", model("identity.onnx"), "--until", "bad", expect=ALL_FAILED)
        self.assertIn("Did 'vkgraphy_debug.engine' [p]ass or [f]ail?", out)

    def test_existing_iter_artifact_is_not_overwritten(self):
        with open(self.path("vkgraphy_debug.engine"), "w") as f:
            f.write("mine")
        out = self.vkgraphy("debug", "build", model("identity.onnx"), "--until", "1", "--check", "true", expect=3)
        self.assertIn("refusing to overwrite", out)
        with open(self.path("vkgraphy_debug.engine")) as f:
            self.assertEqual(f.read(), "mine")


class TestReduce(DebugTestCase):
    def reduce(self, model_name, *args, expect=0):
        return self.vkgraphy("debug", "reduce", model(model_name), "-o", "reduced.onnx", *args, expect=expect)

    def test_isolates_each_node_in_linear_and_bisect_modes(self):
        # Polygraphy's bisect leaves 3 nodes for node 1 and 2 for node 7; vkgraphy's prune phase isolates them.
        # --min-good, as in Polygraphy, is written when some candidate passed the check, and is the passing
        # candidate closest in size to the reduced model: the largest smaller one, else the smallest one at
        # least as large (docs/debug.md). Here the reduced model is one node, so it is the smallest passing
        # candidate. Only bisect for node 3 checks no passing candidate (each one it tries holds node 3).
        written = []
        for mode in ("linear", "bisect"):
            for n in (1, 3, 5, 7, 9):
                with self.subTest(mode=mode, node=n):
                    good = f"good_{mode}_{n}.onnx"
                    out = self.reduce("reducable.onnx", "--mode", mode, "--show-output", "--min-good", good,
                                      "--check", *FAKE_CHECKER, "--fail-node", NODE(n))
                    self.assertEqual(node_names(self.path("reduced.onnx")), [NODE(n)])
                    candidates = re.findall(r"RUNNING \| Iteration (\d+) \| [^|:]+: (inputs \[(.*?)\] -> outputs "
                                            r"\[(.*?)\] \((\d+) nodes?\))", out)
                    passed = set(re.findall(r"PASSED \| Iteration (\d+) \|", out))
                    passing = {c[1]: c[2:] for c in candidates if c[0] in passed}
                    if (mode, n) == ("bisect", 3):
                        self.assertEqual(passing, {}, out)
                        self.assertIn(f"No passing subgraph close in size to the reduced model was found; {good} was "
                                      "not written", out)
                        self.assertFalse(os.path.exists(self.path(good)))
                        continue
                    self.assertTrue(passing, out)
                    saved = re.search(rf"Saved a passing model close in size \((.*)\) to {re.escape(good)}\n", out)
                    self.assertIsNotNone(saved, out)
                    self.assertIn(saved.group(1), passing)
                    inputs, outputs, count = passing[saved.group(1)]
                    self.assertEqual(int(count), min(int(c[2]) for c in passing.values()))
                    m = onnx.load(self.path(good))
                    self.assertEqual(len(m.graph.node), int(count))
                    self.assertNotIn(NODE(n), [node.name for node in m.graph.node])
                    self.assertEqual(sorted(i.name for i in m.graph.input), sorted(inputs.split(", ")))
                    self.assertEqual(sorted(o.name for o in m.graph.output), sorted(outputs.split(", ")))
                    # It passes the check that the reduced model fails.
                    check = subprocess.run([*FAKE_CHECKER[:2], self.path(good), "--fail-node", NODE(n)],
                                           capture_output=True, text=True, timeout=60)
                    self.assertEqual((check.returncode, check.stdout), (0, "Passed!\n"))
                    written.append(self.path(good))
        self.assertEqual(len(written), 9)
        errors = onnx_checker_errors(written)
        self.assertEqual({os.path.basename(p): e for p, e in errors.items() if e}, {})

    def test_isolated_nodes_have_the_expected_inputs_and_outputs(self):
        expected = {1: (["X0"], ["identity_out_0"]), 3: (["Y0"], ["identity_out_2"]),
                    5: (["identity_out_0", "identity_out_2"], ["add_out_4"]), 7: (["add_out_4"], ["identity_out_6"]),
                    9: (["add_out_4"], ["identity_out_8"])}
        reduced = []
        for n, (inputs, outputs) in expected.items():
            with self.subTest(node=n):
                self.vkgraphy("debug", "reduce", model("reducable.onnx"), "-o", f"reduced_{n}.onnx", "--mode", "linear",
                              "--check", *FAKE_CHECKER, "--fail-node", NODE(n))
                reduced.append(self.path(f"reduced_{n}.onnx"))
                m = onnx.load(reduced[-1])
                self.assertEqual(sorted(i.name for i in m.graph.input), inputs)
                self.assertEqual([o.name for o in m.graph.output], outputs)
        errors = onnx_checker_errors(reduced)
        self.assertEqual({os.path.basename(p): e for p, e in errors.items() if e}, {})

    def test_no_reduce_inputs_keeps_the_inputs(self):
        self.reduce("reducable.onnx", "--no-reduce-inputs", "--mode=linear", "--check", *FAKE_CHECKER, "--fail-node",
                    NODE(7))
        m = onnx.load(self.path("reduced.onnx"))
        self.assertEqual(len(m.graph.node), 4)
        self.assertEqual(len(m.graph.input), 2)
        self.assertEqual([o.name for o in m.graph.output], ["identity_out_6"])

    def test_no_reduce_outputs_keeps_the_outputs(self):
        self.reduce("reducable.onnx", "--no-reduce-outputs", "--mode=linear", "--check", *FAKE_CHECKER, "--fail-node",
                    NODE(3))
        m = onnx.load(self.path("reduced.onnx"))
        self.assertEqual(len(m.graph.node), 4)
        self.assertEqual([i.name for i in m.graph.input], ["Y0"])
        self.assertEqual(len(m.graph.output), 2)
        self.assertIn(NODE(7), [n.name for n in m.graph.node])

    def test_custom_fail_code(self):
        # The checker exits 2 when it passes; only 1 is a failure.
        self.reduce("reducable.onnx", "--fail-code=1", "--check", *FAKE_CHECKER, "--fail-node", NODE(5),
                    "--default-return-code=2")
        self.assertEqual(node_names(self.path("reduced.onnx")), [NODE(5)])

    def test_custom_fail_regex(self):
        for fail_code in ([], ["--fail-code=0"]):
            with self.subTest(fail_code=fail_code):
                self.reduce("reducable.onnx", "--fail-regex", "REALLY BAD", "BAD NODE", *fail_code, "--check",
                            *FAKE_CHECKER, "--fail-node", NODE(5), "--fail-return-code=0")
                self.assertEqual(node_names(self.path("reduced.onnx")), [NODE(5)])

    def test_failures_needing_two_nodes_keep_both(self):
        for fail_nodes in ([NODE(1), NODE(3)], [NODE(7), NODE(9)]):
            for mode in ("bisect", "linear"):
                with self.subTest(fail_nodes=fail_nodes, mode=mode):
                    self.reduce("reducable.onnx", "--mode", mode, "--check", *FAKE_CHECKER, "--fail-node", *fail_nodes)
                    names = node_names(self.path("reduced.onnx"))
                    self.assertTrue(all(f in names for f in fail_nodes), names)
                    self.assertLessEqual(len(names), 3)

    def test_model_input_shapes_with_and_without_fallback_shape_inference(self):
        for opts in ([], ["--force-fallback-shape-inference"]):
            with self.subTest(opts=opts):
                self.reduce("dynamic_identity.onnx", "--show-output", "--model-input-shapes=X:[1,2,5,5]", *opts,
                            "--check", "false")
                m = onnx.load(self.path("reduced.onnx"))
                dims = lambda vi: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
                self.assertEqual(dims(m.graph.input[0]), (1, 2, 5, 5))
                self.assertEqual(dims(m.graph.output[0]), (1, 2, 5, 5))

    def test_constant_nodes_never_become_inputs(self):
        self.reduce("reducable_with_const.onnx", "--no-shape-inference", "--mode=linear", "--check", *FAKE_CHECKER,
                    "--fail-node", NODE(3))
        m = onnx.load(self.path("reduced.onnx"))
        self.assertEqual([n.name for n in m.graph.node], [NODE(3)])
        self.assertEqual(len(m.graph.input), 0)

    def test_every_subgraph_of_multi_output_is_valid(self):
        for mode in ("linear", "bisect"):
            for fail in (NODE(1), NODE(4), NODE(6)):
                with self.subTest(mode=mode, fail=fail):
                    out = self.reduce("multi_output.onnx", "--mode", mode, "--show-output", "--check", *FAKE_CHECKER,
                                      "--fail-node", fail)
                    self.assertNotIn("INVALID MODEL", out)
                    self.assertEqual(node_names(self.path("reduced.onnx")), [fail])

    def test_a_model_that_passes_is_reported_not_reduced(self):
        out = self.reduce("reducable.onnx", "--check", *FAKE_CHECKER, "--fail-node", "no_such_node", expect=NO_FAILURE)
        self.assertIn("passes the check", out)
        self.assertFalse(os.path.exists(self.path("reduced.onnx")))
        self.assertIn("Finished 1 iteration(s)", out)

    def test_warns_when_the_check_uses_other_data_loader_options(self):
        # Frozen branches hold values made from reduce's own inputs: the check must see the same ones.
        failing_check = ["sh", "-c", "exit 1", "sh", "--seed", "5"]
        out = self.reduce("reducable.onnx", "--check", *failing_check)
        self.assertIn("--seed 5 but debug reduce has --seed (default)", out)
        out = self.reduce("reducable.onnx", "--seed", "5", "--check", *failing_check)
        self.assertNotIn("data-loader options", out)

    def test_replaying_a_debug_replay_runs_no_check(self):
        self.reduce("reducable.onnx", "--save-debug-replay", "replay.json", "--check", *FAKE_CHECKER, "--fail-node",
                    NODE(5))
        first = onnx.load(self.path("reduced.onnx"))
        os.remove(self.path("reduced.onnx"))
        out = self.reduce("reducable.onnx", "--load-debug-replay", "replay.json", "--check", "/nonexistent/checker")
        self.assertEqual(onnx.load(self.path("reduced.onnx")), first)
        self.assertNotIn("Running check command", out)

    def test_interactive_reduce(self):
        # Original fails; then answer every candidate "f" (after an invalid answer).
        proc = subprocess.run([BIN, "debug", "reduce", model("reducable.onnx"), "-o", "reduced.onnx", "--mode", "linear"],
                              cwd=self.tmp, input="?\n" + "f\n" * 40, capture_output=True, text=True, timeout=120)
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn("Did 'vkgraphy_debug.onnx' [p]ass or [f]ail?", out)
        self.assertEqual(len(node_names(self.path("reduced.onnx"))), 1)

    def test_needs_an_output(self):
        out = self.vkgraphy("debug", "reduce", model("reducable.onnx"), "--check", "false", expect=3)
        self.assertIn("--output", out)


if __name__ == "__main__":
    unittest.main()
