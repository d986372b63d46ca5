"""The benchmark drivers' own behaviour (not their figures): the GPU run's parts, steps, time
limits and summary (bench/gpu.sh), the tactic bench's extra cases, bench/peers.py's model
selection and bench/alternate.sh's rounds, on lavapipe and without the peers' packages."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

from vkgraphy_cli import BIN, SOURCE_DIR, VENV_PYTHON

GPU_SH = os.path.join(SOURCE_DIR, "bench", "gpu.sh")
ALTERNATE_SH = os.path.join(SOURCE_DIR, "bench", "alternate.sh")
TACTIC_BENCH = os.path.join(os.path.dirname(os.path.abspath(BIN)), "bench", "vkgraphy_tactic_bench")


class GpuRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        # vkgraphy on PATH, as the bundle's launcher puts it there.
        self.bin = os.path.join(self.tmp.name, "bin")
        os.mkdir(self.bin)
        os.symlink(os.path.abspath(BIN), os.path.join(self.bin, "vkgraphy"))
        self.out = os.path.join(self.tmp.name, "out")

    def gpu_sh(self, *args, path=True, **env):
        e = dict(os.environ, OUT=self.out, **env)
        if path:
            e["PATH"] = self.bin + os.pathsep + e["PATH"]
        return subprocess.run(["bash", GPU_SH, *args], capture_output=True, text=True, env=e, timeout=300)

    def summary(self, part, ext=".summary"):
        with open(os.path.join(self.out, part + ext)) as f:
            return f.read()

    def test_usage_errors(self):
        for args, message in ((["gpu"], "usage: bench/gpu.sh"), ([], "usage: bench/gpu.sh"),
                              (["tests", "peers-ocr"], "part tests has no step 'peers-ocr'")):
            r = self.gpu_sh(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(message, r.stderr)

    def test_needs_vkgraphy_on_path(self):
        r = self.gpu_sh("tests", "device", path=False, PATH="/usr/bin:/bin")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("vkgraphy is not on PATH", self.summary("tests"))

    def test_a_step_runs_and_the_device_is_in_the_summary(self):
        r = self.gpu_sh("tests", "device")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        summary = self.summary("tests")
        self.assertRegex(summary, r"^GPU RUN part=tests date=\d{4}-\d\d-\d\dT[\d:]+Z gpu=\S+ commit=")
        self.assertIn("STEP device rc=0", summary)
        self.assertIn("Vulkan devices", summary)  # inspect device, whole
        self.assertIn("Vulkan devices", self.summary("tests", ".log"))

    def test_steps_past_the_deadline_are_reported_not_run(self):
        r = self.gpu_sh("models", GPU_DEADLINE="0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        summary = self.summary("models")
        for step in ("device", "peers-ocr"):
            self.assertIn(f"STEP {step} skipped=out of time (GPU_DEADLINE); rerun: bench/gpu.sh models {step}",
                          summary)
        self.assertNotIn("rc=", summary)

    def test_a_step_over_its_limit_is_stopped_and_says_so(self):
        # Unit tests that would take a minute, with 5 s left: they get what is left of those 5 s, then are stopped.
        fake = os.path.join(self.bin, "vkgraphy_unit_tests")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho started\nexec sleep 60\n")
        os.chmod(fake, 0o755)
        r = self.gpu_sh("tests", "unit", GPU_DEADLINE="5", GPU_MIN_STEP_S="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # Stopped at its limit (what was left of the 5 s), give or take the machine's load: not after 60 s.
        step = re.search(r"STEP unit rc=124 seconds=(\d+) \(over its (\d+) s limit\)", self.summary("tests"))
        self.assertIsNotNone(step, self.summary("tests"))
        seconds, limit = int(step.group(1)), int(step.group(2))
        self.assertTrue(1 <= limit <= 5, step.group(0))
        self.assertTrue(limit <= seconds <= limit + 10, step.group(0))
        self.assertIn("started", self.summary("tests", ".log"))

    def test_the_memory_paths_of_the_engines_peers_built(self):
        # An engine where peers-ocr leaves det's fp32 engine: run with the device's memory path and with
        # staging forced, the latency and host overhead in the summary; rec's, not built, said so.
        work = os.path.join(self.tmp.name, "peers")
        art = os.path.join(work, "artifacts", "ppocrv4-det")
        os.makedirs(art)
        r = subprocess.run([BIN, "convert", os.path.join(SOURCE_DIR, "tests", "models", "vk", "example.onnx"), "-o",
                            os.path.join(art, "fp32.engine")], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.gpu_sh("models", "paths-ocr", GPU_PEERS_WORK=work, PEERS_WARMUP_MS="5")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        summary = self.summary("models")
        self.assertIn("STEP paths-ppocrv4-det-default rc=0", summary)
        self.assertIn("STEP paths-ppocrv4-det-staging rc=0", summary)
        self.assertIn("memory path: staging", summary)
        self.assertRegex(summary, r"Host overhead .*median [0-9.]+ ms")
        self.assertIn("STEP paths-ppocrv4-rec skipped=no ", summary)

    def fake(self, name):
        # A stand-in for a bundled binary that prints the arguments it was given.
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write('#!/bin/sh\necho "args: $*"\n')
        os.chmod(path, 0o755)

    def test_the_conformance_step_runs_only_when_named_and_the_filters_pass_through(self):
        self.fake("vkgraphy_unit_tests")
        self.fake("vkgraphy_tactic_bench")
        r = self.gpu_sh("tests", "conformance", CONFORMANCE_FILTER="coopmatv")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("args: --gtest_brief=1 --gtest_filter=*TacticConformance*coopmatv*", self.summary("tests", ".log"))
        self.assertIn("STEP conformance rc=0", self.summary("tests"))
        r = self.gpu_sh("tests", GPU_DEADLINE="0")  # every default step, reported skipped
        self.assertIn("STEP unit skipped=out of time", self.summary("tests"))
        self.assertNotIn("conformance", self.summary("tests"))
        r = self.gpu_sh("bench", "peak")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("args: --no-reference --peak --case Peak", self.summary("bench", ".log"))
        r = self.gpu_sh("bench", "gemm4096", GEMM_FILTER="gemm.coopmatv*,gemm.smemv*")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("--filter gemm.coopmatv*,gemm.smemv*", self.summary("bench", ".log"))


class TacticBenchCases(unittest.TestCase):
    def bench(self, *args):
        return subprocess.run([TACTIC_BENCH, *args], capture_output=True, text=True, timeout=300)

    def test_an_added_matmul_without_the_reference(self):
        r = self.bench("--matmul", "8x16x4", "--case", "MatMul 8x16x4", "--filter", "gemm.naive.f32", "--samples", "1",
                       "--no-reference")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"MatMul 8x16x4 +gemm\.naive\.f32 +\d+\.\d+ +\d+\.\d+")
        self.assertNotIn("cpu reference backend", r.stdout)
        self.assertNotIn("MatMul 512^3", r.stdout)

    def test_a_cube_with_the_reference(self):
        r = self.bench("--matmul", "12", "--case", "MatMul 12^3", "--filter", "gemm.naive.f32", "--samples", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"MatMul 12\^3 +cpu reference backend")
        self.assertRegex(r.stdout, r"MatMul 12\^3 +gemm\.naive\.f32")

    def test_comma_separated_filters_and_the_warm_up(self):
        r = self.bench("--matmul", "8x16x4", "--case", "MatMul 8x16x4", "--filter", "gemm.naive.f32,gemm.reg4x4.f32",
                       "--samples", "1", "--no-reference")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"MatMul 8x16x4 +gemm\.naive\.f32 ")
        self.assertRegex(r.stdout, r"MatMul 8x16x4 +gemm\.reg4x4\.f32 ")
        self.assertNotIn("gemm.block", r.stdout)
        self.assertIn("warm-up: 0 ms", r.stdout)  # lavapipe, a CPU device: none by default
        r = self.bench("--matmul", "8x16x4", "--case", "MatMul 8x16x4", "--filter", "gemm.naive.f32", "--samples", "1",
                       "--no-reference", "--warm-up-ms", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warm-up: 2 ms", r.stdout)

    def test_malformed_matmul_specs(self):
        for spec in ("4x", "1x2", "0", "-3", "axbxc", "1x2x3x4", "9999999"):
            r = self.bench("--matmul", spec)
            self.assertEqual(r.returncode, 2, spec)
            self.assertIn(f"--matmul: takes N or MxKxN (positive integers), not '{spec}'", r.stderr)

    def test_the_peaks(self):
        # lavapipe runs the multiply-add peaks and declines the cooperative matrices, saying why.
        r = self.bench("--peak", "--case", "Peak", "--samples", "1", "--no-reference")
        self.assertEqual(r.returncode, 0, r.stderr)
        for chains in ("x8", "x3"):
            self.assertRegex(r.stdout, r"Peak +fma\.f32 \(vec4 " + chains + r"\) +\d+\.\d+ +\d+\.\d+")
            self.assertRegex(r.stdout, r"Peak +fma\.f16 \(vec4 " + chains + r"\) +\d+\.\d+ +\d+\.\d+")
        for label in ("coopmat.f16 4x4 registers", "coopmat.f16 4x4 shared", "coopmat.f16acc32 2x2 shared"):
            self.assertRegex(r.stdout, re.escape(label) + r" +- +- +\(the device offers no 16x16x16 fp16 cooperative "
                                                          r"matrices with fp(16|32) accumulators")
        self.assertNotIn("MatMul", r.stdout)
        # Without --peak there is no Peak case.
        r = self.bench("--case", "Peak", "--samples", "1", "--no-reference")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("fma.f32", r.stdout)

    def test_malformed_numbers_are_usage_errors(self):
        # Parsed by CLI11: "abc" or "-1" is an error, never 0 or the default.
        for args, message in ((["--samples", "abc"], "--samples"), (["--samples", "0"], "--samples"),
                              (["--warm-up-ms", "-1"], "--warm-up-ms"), (["--warm-up-ms", "1ms"], "--warm-up-ms"),
                              (["--conv", "16,32,1"], "--conv: takes CIN,COUT,K,SIZE"), (["--frobnicate"], "--frobnicate")):
            r = self.bench(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr, args)


class HostBench(unittest.TestCase):
    def test_conversions_and_usage_errors(self):
        bench = os.path.join(os.path.dirname(TACTIC_BENCH), "vkgraphy_host_bench")
        r = subprocess.run([bench, "--elements", "1001", "--repeats", "2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1001 values, best of 2", r.stdout)
        for label in ("fp32 -> fp16 Tensor::cast", "fp32 -> fp16 one at a time", "fp16 -> fp32 Tensor::cast",
                      "fp16 -> fp32 one at a time"):
            self.assertRegex(r.stdout, re.escape(label) + r" +\d+\.\d+ +\d+\.\d+")
        r = subprocess.run([bench, "--elements", "many"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--elements", r.stderr)


class AlternateEngines(unittest.TestCase):
    def alternate(self, *args):
        env = dict(os.environ, VKGRAPHY_BIN=os.path.abspath(BIN))
        return subprocess.run(["bash", ALTERNATE_SH, *args], capture_output=True, text=True, env=env, timeout=300)

    def test_rounds_alternate_and_the_summary_gives_the_median_ratio(self):
        with tempfile.TemporaryDirectory() as tmp:
            engine = os.path.join(tmp, "example.engine")
            r = subprocess.run([BIN, "convert", os.path.join(SOURCE_DIR, "tests", "models", "vk", "example.onnx"), "-o",
                                engine], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = self.alternate("--rounds", "3", "--iterations", "2", engine, engine)
            self.assertEqual(r.returncode, 0, r.stderr)
            rounds = [line for line in r.stdout.splitlines() if line.startswith("round ")]
            self.assertEqual(len(rounds), 3, r.stdout)
            self.assertRegex(r.stdout, r"ALTERNATE a=\S+ b=\S+ rounds=3 median_a_ms=\d+\.\d+ median_b_ms=\d+\.\d+ "
                                       r"ratio_a_over_b=\d+\.\d+")

    def test_usage_errors(self):
        self.assertEqual(self.alternate("only_one.engine").returncode, 2)
        r = self.alternate("missing_a.engine", "missing_b.engine")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no engine file 'missing_a.engine'", r.stderr)
        self.assertEqual(self.alternate("--frobnicate", "a", "b").returncode, 2)


class PeersSelection(unittest.TestCase):
    def peers(self, *args):
        return subprocess.run([VENV_PYTHON, os.path.join(SOURCE_DIR, "bench", "peers.py"), *args],
                              capture_output=True, text=True, timeout=120)

    def test_unknown_models_and_runtimes(self):
        with tempfile.TemporaryDirectory() as work:
            r = self.peers("prepare", "--work", work, "--models", "resnet50,alexnet")
            self.assertEqual(r.returncode, 2)
            self.assertIn("unknown alexnet; choose from resnet50,ppocrv4-det,ppocrv4-rec,transformer", r.stderr)
            r = self.peers("prepare", "--work", work, "--runtimes", "tensorrt")
            self.assertEqual(r.returncode, 2)
            self.assertIn("unknown tensorrt", r.stderr)

    def test_resnet50_needs_its_file(self):
        with tempfile.TemporaryDirectory() as work:
            r = self.peers("prepare", "--work", work, "--models", "resnet50")
            self.assertEqual(r.returncode, 2)
            self.assertIn("resnet50 needs --resnet50 FILE", r.stderr)

    def test_prepare_copies_only_the_models_named(self):
        with tempfile.TemporaryDirectory() as work:
            # ONNX Runtime converts nothing: the transformer is only copied, nothing is downloaded.
            r = self.peers("prepare", "--work", work, "--models", "transformer", "--runtimes", "onnxruntime-cpu",
                           "--transformer", os.path.join(SOURCE_DIR, "tests", "models", "vk", "transformer.onnx"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(os.listdir(os.path.join(work, "models")), ["transformer.onnx"])
            self.assertTrue(os.path.isfile(os.path.join(work, "artifacts", "transformer", "model.sha256")))

    def test_the_warm_up_lasts_its_time_before_the_timed_inferences(self):
        # timed(): 2 warm-up inferences and as many more as 60 ms take, then 3 timed ones.
        script = ("import sys, time; sys.path.insert(0, sys.argv[1]); import peers\n"
                  "calls = []\n"
                  "def infer():\n    calls.append(time.perf_counter()); time.sleep(0.005); return len(calls)\n"
                  "t0 = time.perf_counter(); times, out = peers.timed(infer, 2, 3, 60.0)\n"
                  "print(len(calls), len(times), out, round((calls[-3] - t0) * 1e3))\n")
        r = subprocess.run([VENV_PYTHON, "-c", script, os.path.join(SOURCE_DIR, "bench")], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        calls, timed, out, first_timed_ms = map(int, r.stdout.split())
        self.assertEqual(timed, 3)
        self.assertEqual(out, calls)  # the last timed inference's output
        self.assertGreaterEqual(calls, 2 + 3 + 1)  # 60 ms of 5 ms inferences: more than the 2
        self.assertGreaterEqual(first_timed_ms, 60)


if __name__ == "__main__":
    sys.exit(unittest.main())
