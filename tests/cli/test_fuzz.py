"""Differential fuzzing (tests/fuzz/, docs/testing.md "Differential fuzzing"): random valid ONNX
graphs from a fixed seed, each run on a Vulkan engine (lavapipe, validation layer on) and on the
reference backend under one builder configuration in rotation, the reference checked against ONNX
Runtime on the same inputs. Also: the fuzzer fails when a tactic computes a wrong answer
(VKGRAPHY_FAULTY_TACTICS) or a graph rewrite is broken (VKGRAPHY_FAULTY_REWRITES), and the models it found bugs with (tests/models/fuzz/, listed in
cases.json) run as regression tests.

The generator and the driver need onnx 1.18 and onnxruntime: they run in the tests' virtual
environment (VKGRAPHY_VENV, made by ./setup.sh); a missing one fails these tests."""
import json
import os
import re
import shlex
import subprocess
import sys
import time
import unittest

from vkgraphy_cli import BIN, SOURCE_DIR, VENV_PYTHON, CliTestCase

FUZZ_DIR = os.path.join(SOURCE_DIR, "tests", "fuzz")
DRIVER = os.path.join(FUZZ_DIR, "fuzz_engine.py")
GENERATOR = os.path.join(FUZZ_DIR, "graph_gen.py")
REGRESSIONS = os.path.join(SOURCE_DIR, "tests", "models", "fuzz")
REGRESSION_CASES = os.path.join(REGRESSIONS, "cases.json")

# The CI stage: graphs CI_START.. of CI_SEED, one configuration each (the driver's "ci" set in
# rotation). About 1 s a graph on lavapipe with 2 cores; keep the stage under 4 minutes.
CI_SEED = 2026
CI_COUNT = 200


def summary_line(out):
    lines = [l for l in out.splitlines() if l.startswith("FUZZ SUMMARY")]
    return lines[-1] if lines else ""


def require_venv():
    if not os.access(VENV_PYTHON, os.X_OK):
        raise AssertionError(f"{VENV_PYTHON} is missing: run ./setup.sh to create the test virtual environment "
                             "(or point VKGRAPHY_VENV at one)")


class TestFuzz(CliTestCase):
    def fuzz(self, *args, env=None, timeout=900):
        require_venv()
        full_env = dict(os.environ, **(env or {}))
        proc = subprocess.run([VENV_PYTHON, DRIVER, "--vkgraphy", os.path.abspath(BIN), *map(str, args)],
                              cwd=self.tmp, capture_output=True, text=True, timeout=timeout, env=full_env)
        return proc.returncode, proc.stdout + proc.stderr

    def test_generator_is_reproducible_and_its_graphs_are_valid(self):
        """The same seed gives the same bytes; every graph passes onnx.checker (full_check) and runs
        in ONNX Runtime with the shapes it declares (graph_gen.py --self-test)."""
        require_venv()
        proc = subprocess.run([VENV_PYTHON, GENERATOR, "--self-test", "--seed", str(CI_SEED), "--count",
                               str(CI_COUNT)], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"{CI_COUNT} graphs from seed {CI_SEED}, 0 failed", proc.stdout)
        for path in ("a.onnx", "b.onnx"):
            subprocess.run([VENV_PYTHON, GENERATOR, "--seed", "5", "--index", "17", "-o", self.path(path)],
                           check=True, timeout=60)
        with open(self.path("a.onnx"), "rb") as a, open(self.path("b.onnx"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_fixed_seed_graphs_pass_in_rotating_configurations(self):
        """Graphs 0..CI_COUNT-1 of CI_SEED, graph i under the driver's "ci" configuration i mod C:
        no failure of any kind (and no KNOWN_FAILURES entry matched a failure either way)."""
        started = time.monotonic()
        rc, out = self.fuzz("--seed", CI_SEED, "--count", CI_COUNT, "--rotate", "--configs", "ci", "-q",
                            "--keep-failures", self.path("failures"))
        line = summary_line(out)
        print(f"\n{line} (wall {time.monotonic() - started:.0f} s)", file=sys.stderr)
        self.assertTrue(line, out[-3000:])
        self.assertIn(f"graphs {CI_COUNT} ", line)
        self.assertEqual(rc, 0, out[-12000:])
        self.assertRegex(line, r"\| failed 0 \(none\) \|")

    def test_a_wrong_tactic_makes_the_fuzzer_fail(self):
        """With conv and GEMM tactics computing 1 - 2x (VKGRAPHY_FAULTY_TACTICS) the fuzzer reports
        engine mismatches, each with its seed, graph, configuration and repro command, saves the
        models, and exits 1; the repro command fails as reported."""
        failures = self.path("failures")
        # --focus conv: every graph starts with a Conv
        rc, out = self.fuzz("--seed", 1, "--count", 6, "--focus", "conv", "--rotate", "--configs",
                            "opt0,random,no-fusion", "-q", "--keep-failures", failures,
                            env={"VKGRAPHY_FAULTY_TACTICS": "conv.*,gemm.*"})
        self.assertEqual(rc, 1, out)
        line = summary_line(out)
        self.assertRegex(line, r"failed [3-6] \(engine-mismatch [3-6]\)", out)
        fails = re.findall(r"^FAIL  engine-mismatch: seed 1 graph (\d+) config (\S+): max abs error", out, re.M)
        self.assertTrue(fails, out)
        repros = re.findall(r"^      repro:    (.*)$", out, re.M)
        self.assertEqual(len(repros), len(fails), out)
        index, config = fails[0]
        kept = os.path.join(failures, f"seed1_g{index}_{config}.onnx")
        self.assertTrue(os.path.exists(kept), os.listdir(failures))
        self.assertTrue(os.path.exists(kept[:-5] + ".txt"))
        # The repro command, as printed, fails again with the fault and passes without it.
        cmd = shlex.split(repros[0])
        self.assertEqual(cmd[0], os.path.abspath(BIN))
        self.assertIn(kept, cmd)
        env = dict(os.environ, VKGRAPHY_FAULTY_TACTICS="conv.*,gemm.*")
        self.assertEqual(subprocess.run(cmd, capture_output=True, timeout=300, env=env).returncode, 1)
        self.assertEqual(subprocess.run(cmd, capture_output=True, timeout=300).returncode, 0)

    def test_a_broken_rewrite_makes_the_fuzzer_fail(self):
        """With the activation fusion made faulty (VKGRAPHY_FAULTY_REWRITES) the fused builds fail and
        the --no-fusion builds of the same graphs pass: the fuzzer catches optimizer bugs, not only
        tactic bugs."""
        env = {"VKGRAPHY_FAULTY_REWRITES": "fuse-activation"}
        rc, out = self.fuzz("--seed", 3, "--count", 6, "--focus", "conv", "--configs", "opt0", "-q", env=env)
        self.assertEqual(rc, 1, out)
        self.assertRegex(summary_line(out), r"failed [1-6] \(engine-mismatch [1-6]\)", out)
        rc, out = self.fuzz("--seed", 3, "--count", 6, "--focus", "conv", "--configs", "no-fusion", "-q", env=env)
        self.assertEqual(rc, 0, out)

    def test_known_failures_say_why(self):
        require_venv()
        with open(DRIVER) as f:
            source = f.read()
        # Parsed without importing (the driver needs the virtual environment's numpy 2 and onnx 1.18).
        proc = subprocess.run([VENV_PYTHON, "-c", "import json, sys; sys.path.insert(0, sys.argv[1]); "
                               "import fuzz_engine as f; print(json.dumps([{k: e.get(k) for k in ('name', 'reason', 'features')} "
                               "for e in f.KNOWN_FAILURES]))", FUZZ_DIR],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("KNOWN_FAILURES = [", source)
        for entry in json.loads(proc.stdout):
            self.assertTrue(entry.get("name") and entry.get("reason") and entry.get("features"), entry)


def load_regression_cases():
    if not os.path.exists(REGRESSION_CASES):
        return []
    with open(REGRESSION_CASES) as f:
        return json.load(f)["cases"]


class TestFuzzRegressions(CliTestCase):
    """One test per model the fuzzer found a bug with (tests/models/fuzz/cases.json): `vkgraphy run
    MODEL --vk --ref ARGS` must pass for every ARGS of its runs. A case whose bug is not fixed yet has "known_failure" (why):
    it is an expected failure, and unittest reports it as an unexpected success once fixed, so the
    entry goes."""

    def test_every_model_is_listed(self):
        listed = {c["model"] for c in load_regression_cases()}
        on_disk = {f for f in os.listdir(REGRESSIONS) if f.endswith(".onnx")} if os.path.isdir(REGRESSIONS) else set()
        self.assertEqual(on_disk, listed)


def _regression_test(case):
    def test(self):
        model = os.path.join(REGRESSIONS, case["model"])
        for args in case["runs"]:
            with self.subTest(args=" ".join(args)):
                out = self.vkgraphy(*case.get("global_args", []), "run", model, "--vk", "--ref", *args, expect=None)
                self.assertIn("PASSED | All outputs matched", out, f"{case['model']} {' '.join(args)}\n{out[-4000:]}")
    test.__doc__ = case.get("what", "")
    return unittest.expectedFailure(test) if case.get("known_failure") else test


for _case in load_regression_cases():
    setattr(TestFuzzRegressions, "test_" + re.sub(r"\W", "_", _case["model"][:-5]), _regression_test(_case))


if __name__ == "__main__":
    unittest.main()
