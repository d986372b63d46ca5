"""`debug build` and `debug repeat` with --jobs and --devices (debug/side_by_side.h): iterations side by
side on lavapipe (two jobs on its one CPU device, each with one of its threads), recorded exactly as a
serial run records them: the same results per iteration, the same debug replay, artifacts sorted under
their own names; --until good/bad drops what ran past the stop; Ctrl-C keeps the finished iterations and
the replay resumes them; options that cannot run side by side are clear errors."""
import glob
import os
import re
import signal
import subprocess
import time

from test_vk import fp16_tolerance
from vkgraphy_cli import BIN, CliTestCase, VK_MODELS

FP16_TOL = fp16_tolerance("fp16_overflow.onnx")

FAULTY = "VKGRAPHY_FAULTY_TACTICS"
MIXED, INTERRUPTED, INPUT = 5, 130, 3
MODEL = os.path.join(VK_MODELS, "branchy.onnx")


def sorted_names(tmp):
    """{iteration: "good"/"bad"} from the sorted replay.json copies."""
    out = {}
    for path in glob.glob(os.path.join(tmp, "vkgraphy_artifacts", "*", "replay_iter*.json")):
        out[int(re.search(r"_iter(\d+)_", path).group(1))] = os.path.basename(os.path.dirname(path))
    return out


class DebugJobs(CliTestCase):
    def build(self, *extra, expect=MIXED, until="6"):
        # Random tactics (SEED + iteration) with a faulty softmax tactic: which iterations fail is fixed by the seed.
        return self.vkgraphy("debug", "build", MODEL, "--tactic-selection", "random:26", "--until", until,
                             "--save-tactics", "replay.json", "--artifacts", "replay.json", *extra, "--check", BIN,
                             "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json",
                             env={FAULTY: "softmax.row.f32"}, expect=expect)

    def results(self):
        return [(e["iteration"], e["passed"], e["description"])
                for e in self.read_json("vkgraphy_debug_replay.json")["iterations"]]

    def fresh(self):
        for path in ["vkgraphy_debug_replay.json"]:
            os.remove(self.path(path))
        subprocess.run(["rm", "-rf", self.path("vkgraphy_artifacts")], check=True)

    def test_side_by_side_records_what_one_at_a_time_records(self):
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        serial = self.build()
        serial_results, serial_sorted = self.results(), sorted_names(self.tmp)
        self.assertEqual(len(serial_results), 6)
        self.assertIn(False, [p for _, p, _ in serial_results])
        self.assertIn(True, [p for _, p, _ in serial_results])
        self.fresh()
        out = self.build("--jobs", "2", "--devices", "0", "0")
        self.assertEqual(self.results(), serial_results)
        self.assertEqual(sorted_names(self.tmp), serial_sorted)
        self.assertIn("job 1 on llvmpipe", out)
        self.assertEqual(re.findall(r"(PASSED|FAILED) \| Iteration (\d+)", out),
                         re.findall(r"(PASSED|FAILED) \| Iteration (\d+)", serial))
        # No job's copies are left behind.
        self.assertEqual(glob.glob(self.path("*.iter*")), [])

    def test_until_bad_stops_where_one_at_a_time_stops(self):
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        self.build(until="bad", expect=None)
        serial = self.results()
        self.fresh()
        self.build("--jobs", "2", until="bad", expect=None)
        self.assertEqual(self.results(), serial)
        self.assertFalse(serial[-1][1])
        self.assertEqual(len(sorted_names(self.tmp)), len(serial))
        self.assertEqual(glob.glob(self.path("*.iter*")), [])

    def test_repeat_side_by_side(self):
        # Each check writes its artifact under the name its command line gives (a job's own copy).
        out = self.vkgraphy("debug", "repeat", "--until", "4", "--jobs", "2", "--artifacts", "a.txt", "--check", "sh",
                            "-c", 'echo "$LP_NUM_THREADS $VKGRAPHY_DEVICE" > "$0"', "a.txt")
        self.assertIn("Passed: 4/4", out)
        good = sorted(glob.glob(self.path("vkgraphy_artifacts/good/a_iter*.txt")))
        self.assertEqual(len(good), 4)
        threads = str(max(1, (os.cpu_count() or 1) // 2))
        for path in good:
            with open(path) as f:
                self.assertEqual(f.read().split(), [threads, "0"])

    def test_ctrl_c_keeps_the_finished_iterations_and_resumes(self):
        proc = subprocess.Popen([BIN, "debug", "repeat", "--until", "1000", "--jobs", "2", "--artifacts", "a.txt",
                                 "--check", "sh", "-c", 'echo x > "$0"; sleep 0.3', "a.txt"], cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        replay = self.path("vkgraphy_debug_replay.json")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.exists(replay) and len(self.read_json("vkgraphy_debug_replay.json")["iterations"]) >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, INTERRUPTED, out)
        done = len(self.read_json("vkgraphy_debug_replay.json")["iterations"])
        self.assertIn(f"Finished {done} iteration(s) | Passed: {done}/{done}", out)
        self.assertEqual(len(glob.glob(self.path("vkgraphy_artifacts/good/a_iter*.txt"))), done)
        self.assertEqual(glob.glob(self.path("*.iter*")), [])
        # Resumed from the replay: the finished iterations are not checked again.
        out = self.vkgraphy("debug", "repeat", "--until", str(done + 2), "--jobs", "2", "--load-debug-replay",
                            "vkgraphy_debug_replay.json", "--save-debug-replay", "again.json", "--check", "true")
        self.assertEqual(out.count("Result from debug replay"), done)
        self.assertIn(f"Passed: {done + 2}/{done + 2}", out)

    def test_precision_linear_side_by_side_finds_what_one_at_a_time_finds(self):
        path = os.path.join(VK_MODELS, "fp16_overflow.onnx")
        self.vkgraphy("run", path, "--ref", "--save-outputs", "golden.json")
        answers, results = {}, {}
        for jobs in ("1", "3"):
            out = self.vkgraphy("debug", "precision", path, "--fp16", "--mode", "linear", "--prune", "--jobs", jobs,
                                "--check", BIN, "run", "vkgraphy_debug.engine", "--vk", "--load-outputs",
                                "golden.json", *FP16_TOL)
            answers[jobs] = re.search(r"Build with: (.*)", out).group(1)
            results[jobs] = self.results()
            self.fresh()
        self.assertEqual(answers["3"], answers["1"])
        self.assertIn("big:fp32", answers["1"])
        # The same iterations with the same results (jobs past the first pass were dropped), then --prune.
        self.assertEqual(results["3"], results["1"])
        self.assertEqual(glob.glob(self.path("*.iter*")), [])

    def test_what_cannot_run_side_by_side(self):
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        cases = [
            (["debug", "repeat", "--until", "2", "--jobs", "2"], "--jobs needs a --check command"),
            (["debug", "repeat", "--until", "2", "--jobs", "2", "--artifacts", "out.txt", "--check", "true"],
             "--artifacts 'out.txt' is named neither by the --check command nor by this tool's options"),
            (["debug", "repeat", "--until", "2", "--jobs", "2", "--devices", "no-such-device", "--check", "true"],
             "no-such-device"),
            (["debug", "repeat", "--until", "2", "--executor", "slurm", "--devices", "0", "--check", "true"],
             "with --executor slurm each task's GPU comes from Slurm's allocation"),
            (["debug", "precision", os.path.join(VK_MODELS, "fp16_overflow.onnx"), "--fp16", "--jobs", "2", "--check",
              "true"], "--jobs and --executor run the iterations of --mode linear side by side"),
        ]
        for args, text in cases:
            with self.subTest(args=args):
                out = self.vkgraphy(*args, expect=INPUT)
                self.assertIn(text, out)
        # A build that fails in a job fails the tool as it would one at a time.
        for jobs in ("1", "2"):
            out = self.vkgraphy("debug", "build", MODEL, "--until", "2", "--jobs", jobs, "--tactics-deny", "*",
                                "--check", "true", expect=INPUT)
            self.assertIn("no tactic can serve", out)
