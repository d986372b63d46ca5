"""`--executor slurm` of the debug loops (debug/slurm_runner.h) against a real one-node Slurm that the test
starts itself (slurm_cluster.py: munged, slurmctld and slurmd in the foreground, two GRES gpus): iterations
run as the tasks of a job array, each with a GPU from Slurm's allocation, and are recorded exactly as a run
one at a time records them; a task that ends without an outcome is submitted again, a task Slurm requeues
(as on preemption) runs anew, and both are said; Ctrl-C cancels the tasks and the debug replay resumes the
finished iterations. Skipped, with the reason printed, where Slurm cannot start here."""
import glob
import os
import re
import signal
import subprocess
import time

from slurm_cluster import ClusterPerClass
from test_debug_jobs import FAULTY, INTERRUPTED, MODEL, sorted_names
from vkgraphy_cli import BIN, CliTestCase


class DebugOnSlurm(ClusterPerClass, CliTestCase):
    def setUp(self):
        self.require_cluster()
        super().setUp()

    def slurm(self, *args, expect=0):
        # The cluster's client environment (SLURM_CONF) for vkgraphy, its sbatch and so its tasks; one thread
        # of lavapipe per task (the two tasks share this machine's cores).
        env = {k: v for k, v in self.cluster.env.items() if k.startswith("SLURM") or k == "PATH"}
        return self.vkgraphy(*args, env=dict(env, LP_NUM_THREADS="1"), expect=expect)

    def results(self):
        return [(e["iteration"], e["passed"], e["description"])
                for e in self.read_json("vkgraphy_debug_replay.json")["iterations"]]

    def test_build_records_what_one_at_a_time_records(self):
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        build = ["debug", "build", MODEL, "--tactic-selection", "random:26", "--until", "4", "--save-tactics",
                 "replay.json", "--artifacts", "replay.json"]
        check = ["--check", BIN, "run", "vkgraphy_debug.engine", "--vk", "--load-outputs", "golden.json"]
        serial = self.vkgraphy(*build, *check, env={FAULTY: "softmax.row.f32"}, expect=None)
        serial_results, serial_sorted = self.results(), sorted_names(self.tmp)
        self.assertEqual(len(serial_results), 4)
        os.remove(self.path("vkgraphy_debug_replay.json"))
        subprocess.run(["rm", "-rf", self.path("vkgraphy_artifacts")], check=True)
        env = {k: v for k, v in self.cluster.env.items() if k.startswith("SLURM") or k == "PATH"}
        out = self.vkgraphy(*build, "--executor", "slurm", "--jobs", "2", *check,
                            env=dict(env, LP_NUM_THREADS="1", **{FAULTY: "softmax.row.f32"}), expect=None)
        self.assertIn("Submitted iteration(s) 0-3 to Slurm as job array", out)
        self.assertIn("(at most 2 at once", out)
        self.assertEqual(self.results(), serial_results)
        self.assertEqual(sorted_names(self.tmp), serial_sorted)
        self.assertEqual(re.findall(r"(PASSED|FAILED) \| Iteration (\d+)", out),
                         re.findall(r"(PASSED|FAILED) \| Iteration (\d+)", serial))
        self.assertEqual(glob.glob(self.path("*.iter*")), [])

    def test_each_task_has_a_gpu_of_its_own(self):
        # The check writes the GPU Slurm gave its task, and the time it held it, to its artifact.
        out = self.slurm("debug", "repeat", "--until", "4", "--executor", "slurm", "--jobs", "2", "--artifacts",
                         "gpu.txt", "--check", "sh", "-c",
                         'a=$(date +%s.%N); sleep 1; echo "$CUDA_VISIBLE_DEVICES $a $(date +%s.%N)" > "$0"',
                         "gpu.txt")
        self.assertIn("Passed: 4/4", out)
        held = []
        for path in glob.glob(self.path("vkgraphy_artifacts/good/gpu_iter*.txt")):
            with open(path) as f:
                gpu, start, end = f.read().split()
            held.append((gpu, float(start), float(end)))
        self.assertEqual(len(held), 4)
        self.assertTrue(all(gpu in ("0", "1") for gpu, _, _ in held), held)
        for i, (gpu, start, end) in enumerate(held):
            for other, s, e in held[i + 1:]:
                if start < e and s < end:  # side by side: on different GPUs
                    self.assertNotEqual(gpu, other, held)

    def test_until_bad_stops_and_cancels_the_tasks_past_it(self):
        # Iteration 2 fails; with --jobs 2 the array holds 8 iterations ahead, those past 2 are cancelled.
        out = self.slurm("debug", "repeat", "--until", "bad", "--executor", "slurm", "--jobs", "2", "--artifacts",
                         "a.txt", "--check", "sh", "-c", 'echo x > "$0"; sleep 1; case "$0" in *iter2*) exit 1;; esac',
                         "a.txt", expect=5)
        self.assertIn("Submitted iteration(s) 0-7 to Slurm", out)
        self.assertEqual([r[1] for r in self.results()], [True, True, False])
        self.assertRegex(out, r"Cancelled \d+ Slurm task\(s\)")
        self.cluster.wait_idle(30)
        self.assertEqual(glob.glob(self.path("*.iter*")), [])

    def test_a_task_that_ends_without_an_outcome_is_submitted_again(self):
        # Iteration 1's first task cancels itself mid-check, as a lost node or a time limit would end it ($0 is
        # the job's copy of a.txt, "a.iter1.txt").
        task = '"${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID"'
        check = ('echo x > "$0"; case "$0" in *iter1*) if [ ! -e once ]; then touch once; scancel ' + task + '; '
                 'sleep 60; fi;; esac')
        out = self.slurm("debug", "repeat", "--until", "3", "--executor", "slurm", "--jobs", "2", "--artifacts",
                         "a.txt", "--check", "sh", "-c", check, "a.txt")
        self.assertRegex(out, r"Iteration 1: Slurm task \d+_1 ended without an outcome .*submitting it again "
                              r"\(2 of 3 tries\)")
        self.assertNotIn("started again", out)  # a submission again is not a requeue by Slurm
        self.assertIn("Passed: 3/3", out)
        self.assertEqual([r[1] for r in self.results()], [True, True, True])
        self.assertEqual(len(glob.glob(self.path("vkgraphy_artifacts/good/a_iter*.txt"))), 3)

    def test_a_requeued_task_runs_anew_and_the_run_says_so(self):
        task = '"${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID"'
        check = 'if [ -z "$SLURM_RESTART_COUNT" ]; then scontrol requeue ' + task + '; sleep 60; fi'
        out = self.slurm("debug", "repeat", "--until", "1", "--executor", "slurm", "--check", "sh", "-c", check)
        self.assertRegex(out, r"Iteration 0: Slurm task \d+_0 started again \(requeued by Slurm")
        self.assertIn("Passed: 1/1", out)

    def test_ctrl_c_cancels_the_tasks_and_the_replay_resumes(self):
        env = dict(os.environ, **{k: v for k, v in self.cluster.env.items() if k.startswith("SLURM")},
                   LP_NUM_THREADS="1")
        proc = subprocess.Popen([BIN, "debug", "repeat", "--until", "50", "--executor", "slurm", "--jobs", "2",
                                 "--check", "sleep", "1"], cwd=self.tmp, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        replay = self.path("vkgraphy_debug_replay.json")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if os.path.exists(replay) and len(self.read_json("vkgraphy_debug_replay.json")["iterations"]) >= 2:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, INTERRUPTED, out)
        self.assertRegex(out, r"Cancelled \d+ Slurm task\(s\)")
        self.cluster.wait_idle(30)  # nothing of this run is left queued or running
        done = len(self.read_json("vkgraphy_debug_replay.json")["iterations"])
        self.assertIn(f"Finished {done} iteration(s) | Passed: {done}/{done}", out)
        out = self.slurm("debug", "repeat", "--until", str(done + 1), "--executor", "slurm", "--load-debug-replay",
                         "vkgraphy_debug_replay.json", "--save-debug-replay", "again.json", "--check", "true")
        self.assertEqual(out.count("Result from debug replay"), done)
        self.assertIn(f"Passed: {done + 1}/{done + 1}", out)

