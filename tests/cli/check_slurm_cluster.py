"""The harness's own check, run by hand after changing slurm_cluster.py (`cd tests/cli && python3 -m unittest
check_slurm_cluster`; not a ctest test: test_debug_slurm.py exercises the same cluster through vkgraphy).
The single-node Slurm cluster of slurm_cluster.py: an array of four tasks that each ask for one of the
node's two GRES gpus runs every task, never more than two at once, each running pair on distinct gpu
indices (CUDA_VISIBLE_DEVICES = SLURM_JOB_GPUS); a failing task shows as FAILED; a running array task
that is requeued (`scontrol requeue JOB_TASK`, as for a preempted task) is stopped with SIGTERM and runs
again with SLURM_RESTART_COUNT=1. Skipped, with the reason, where Slurm cannot run (not installed, not
root, a daemon that does not start)."""
import os
import time
import unittest

from slurm_cluster import ClusterPerClass

GPUS = 2


def sweep(intervals):
    """The largest number of (start, end) intervals that overlap at one moment."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


class SlurmClusterTest(ClusterPerClass, unittest.TestCase):
    def setUp(self):
        self.require_cluster(30)

    def sbatch(self, *args):
        return self.cluster.run("sbatch", "--parsable", "--chdir", self.cluster.work, *args).stdout.strip()

    def wait_for(self, what, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                self.fail("%s: not within %s s; squeue: %s" % (what, timeout, self.cluster.jobs()))
            time.sleep(0.1)

    def test_array_tasks_share_the_gpus(self):
        out = os.path.join(self.cluster.work, "gpus_%a")
        script = ('echo "$(date +%s.%N) $CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS"; sleep 3; date +%s.%N')
        job = self.sbatch("--array=0-3", "--gres=gpu:1", "--output", out, "--wrap", script)
        most_running = 0
        deadline = time.monotonic() + 40
        while (jobs := self.cluster.jobs()):
            most_running = max(most_running, sum(state == "RUNNING" for state in jobs.values()))
            self.assertLess(time.monotonic(), deadline, "array %s still queued: %s" % (job, jobs))
            time.sleep(0.1)
        self.assertLessEqual(most_running, GPUS)
        runs = []
        for task in range(4):
            with open(out.replace("%a", str(task))) as f:
                lines = f.read().split("\n")
            start, visible, job_gpus = lines[0].split()
            self.assertEqual(visible, job_gpus, "task %d: CUDA_VISIBLE_DEVICES vs SLURM_JOB_GPUS" % task)
            self.assertIn(visible, [str(i) for i in range(GPUS)], "task %d" % task)
            runs.append((float(start), float(lines[1]), visible))
            self.assertEqual(self.cluster.job_info("%s_%d" % (job, task)).get("JobState"), "COMPLETED")
        self.assertEqual(sweep([(s, e) for s, e, _ in runs]), GPUS, runs)
        for i, (s1, e1, gpu1) in enumerate(runs):
            for s2, e2, gpu2 in runs[i + 1:]:
                if s1 < e2 and s2 < e1:
                    self.assertNotEqual(gpu1, gpu2, "tasks running at once on one gpu: %s" % runs)

    def test_failed_task_shows_as_failed(self):
        job = self.sbatch("--output", "/dev/null", "--wrap", "exit 3")
        self.wait_for("job %s ends" % job, lambda: self.cluster.job_info(job).get("JobState") not in
                      ("PENDING", "RUNNING", "COMPLETING"))
        info = self.cluster.job_info(job)
        self.assertEqual((info.get("JobState"), info.get("ExitCode")), ("FAILED", "3:0"))

    def test_requeued_task_runs_again(self):
        out = os.path.join(self.cluster.work, "requeue_%a")
        # Task 1 waits to be requeued on its first run, and ends at once on its second.
        script = ('trap "echo term; exit 143" TERM; echo "start ${SLURM_RESTART_COUNT:-0}"; '
                  'if [ "$SLURM_ARRAY_TASK_ID" = 1 ] && [ -z "$SLURM_RESTART_COUNT" ]; then sleep 60 & wait; fi')
        job = self.sbatch("--array=0-1", "--gres=gpu:1", "--open-mode=append", "--output", out, "--wrap", script)
        task = "%s_1" % job
        log = out.replace("%a", "1")

        def started():
            if not os.path.exists(log):
                return False
            with open(log) as f:
                return "start 0" in f.read()
        self.wait_for("task %s starts" % task, started)
        self.cluster.run("scontrol", "requeue", task)
        # A requeued job waits cred_expire + 1 s (6 s here) before it may start again.
        self.wait_for("task %s runs again" % task, lambda: self.cluster.job_info(task).get("JobState") == "COMPLETED")
        self.assertEqual(self.cluster.job_info(task).get("Restarts"), "1")
        with open(log) as f:
            lines = [line for line in f.read().splitlines() if not line.startswith("slurmstepd")]
        self.assertEqual(lines, ["start 0", "term", "start 1"])
        with open(out.replace("%a", "0")) as f:
            self.assertEqual(f.read().split(), ["start", "0"])


if __name__ == "__main__":
    unittest.main()
