"""Errors that help (issue: a newcomer's first hour): a misspelled tool, subcommand or option is named with
the closest valid one; `--check --` separates; files of the wrong kind are named for what they are; a check
killed by its timeout says so. The exact wording users see is asserted."""
import os
import subprocess
import sys
import unittest

from vkgraphy_cli import VK_MODELS, CliTestCase, model

MODEL = model("identity.onnx")


class TestUsageErrors(CliTestCase):
    def test_misspelled_tool_and_subcommand(self):
        out = self.vkgraphy("rnu", MODEL, expect=2)
        self.assertIn("[E] 'rnu' is not a vkgraphy tool; did you mean 'run'? "
                      "(choose from: run, convert, inspect, surgeon, debug, data, check)", out)
        out = self.vkgraphy("debug", "precison", MODEL, expect=2)
        self.assertIn("[E] 'precison' is not a subcommand of 'vkgraphy debug'; did you mean 'precision'?", out)
        out = self.vkgraphy("inspect", expect=2)
        self.assertIn("[E] vkgraphy inspect needs a subcommand: ", out)
        out = self.vkgraphy("frobnicate", expect=2)
        self.assertIn("[E] 'frobnicate' is not a vkgraphy tool (choose from: ", out)

    def test_misspelled_option(self):
        out = self.vkgraphy("run", MODEL, "--ref", "--save-output", "golden.json", expect=2)
        self.assertIn("[E] vkgraphy run: unknown option '--save-output'; did you mean '--save-outputs'? "
                      "(see vkgraphy run --help)", out)
        self.assertNotIn("were not expected", out)
        out = self.vkgraphy("debug", "build", MODEL, "--untill", "2", "--check", "true", expect=2)
        self.assertIn("[E] vkgraphy debug build: unknown option '--untill'; did you mean '--until'?", out)

    def test_other_command_line_errors_are_errors_too(self):
        out = self.vkgraphy("debug", "build", MODEL, "--check", "true", expect=2)
        self.assertIn("[E] vkgraphy debug build: --until is required (see vkgraphy debug build --help)", out)

    def test_option_after_check(self):
        # Everything after --check is the check command: a debug option there is not the tool's.
        out = self.vkgraphy("debug", "build", MODEL, "--check", "true", "--until", "2", expect=2)
        self.assertIn("[E] --until is required, and it appears after --check, where everything is part of the check "
                      "command: put --until (and every option of vkgraphy debug build) before --check", out)

    def test_double_dash_separates_the_check(self):
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--check", "--", "true")
        self.assertIn("Running check command: true\n", out)
        self.assertIn("Passed: 1/1", out)

    def test_check_timeout_is_named(self):
        out = self.vkgraphy("debug", "repeat", "--until", "1", "--check-timeout", "0.5", "--check", "sleep", "5",
                            expect=6)
        self.assertIn("The check command ran longer than --check-timeout 0.5 s and was killed", out)
        self.assertIn("Check output (killed by --check-timeout after 0.5 s), summarised; -v or --show-output shows all "
                      "of it:", out)
        self.assertNotIn("exit code -1", out)

    def test_files_of_the_wrong_kind(self):
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        self.vkgraphy("convert", MODEL, "-o", "m.engine", "--builder-optimization-level", "0")
        out = self.vkgraphy("convert", MODEL, "--load-tactics", "golden.json", "-o", "x.engine", expect=3)
        self.assertIn("[E] 'golden.json': not a tactic replay: it is a Polygraphy RunResults file", out)
        out = self.vkgraphy("convert", "m.engine", "-o", "x.engine", expect=3)
        self.assertIn("[E] 'm.engine' is a vkgraphy engine file, not an ONNX model: this tool needs the ONNX model "
                      "(an engine runs with `vkgraphy run m.engine --vk`", out)
        out = self.vkgraphy("convert", "golden.json", "-o", "x.engine", expect=3)
        self.assertIn("[E] 'golden.json' is a JSON file, not an ONNX model", out)
        self.assertFalse(os.path.exists(self.path("x.engine")))


if __name__ == "__main__":
    unittest.main()


class TestEarlyChecksAndWarnings(CliTestCase):
    """Inputs that can be checked before the long work are checked first; options without effect say so."""

    def test_missing_files_and_programs_fail_before_any_build(self):
        out = self.vkgraphy("run", MODEL, "--vk", "--load-outputs", "missing.json", expect=3)
        self.assertIn("missing.json", out)
        self.assertNotIn("Building engine", out)
        out = self.vkgraphy("debug", "build", MODEL, "--until", "1", "--check", "/nonexistent/checker", expect=3)
        self.assertIn("[E] the check command '/nonexistent/checker' does not exist or is not executable", out)
        self.assertNotIn("Building engine", out)
        out = self.vkgraphy("debug", "precision", MODEL, "--fp16", "--check", "no-such-checker-program", expect=3)
        self.assertIn("[E] the check command 'no-such-checker-program' is not found on PATH", out)
        self.assertNotIn("Building engine", out)

    def test_options_without_effect_warn(self):
        out = self.vkgraphy("run", MODEL, "--ref", "--profile")
        self.assertIn("[W] --profile times the Vulkan engine's layers: without --vk it has no effect", out)
        self.vkgraphy("convert", MODEL, "-o", "m.engine", "--builder-optimization-level", "0")
        out = self.vkgraphy("run", "m.engine", "--vk", "--fp16", "--deterministic")
        self.assertIn("[W] --fp16, --deterministic: builder options have no effect on an engine file", out)
        self.vkgraphy("run", MODEL, "--ref", "--save-outputs", "golden.json")
        out = self.vkgraphy("run", MODEL, "--ref", "--iterations", "3", "--load-outputs", "golden.json")
        self.assertIn("[W] This run has 3 iteration(s) but runner '", out)
        self.assertIn("in golden.json has 1: only the first 1 are compared", out)
        out = self.vkgraphy("convert", MODEL, "-o", "x.engine", "--tactics-deny", "nomatch*",
                            "--builder-optimization-level", "0")
        self.assertIn("[W] --tactics-deny 'nomatch*' matches no tactic, so it has no effect", out)

    def test_a_replay_of_another_model_is_one_warning(self):
        other = os.path.join(VK_MODELS, "fp16_two_sites.onnx")
        self.vkgraphy("convert", other, "-o", "o.engine", "--save-tactics", "other.json",
                      "--builder-optimization-level", "0")
        out = self.vkgraphy("convert", model("matmul_2layer.onnx"), "-o", "m.engine", "--load-tactics", "other.json",
                            "--builder-optimization-level", "0")
        warnings = [line for line in out.splitlines() if "does not name" in line]
        self.assertEqual(len(warnings), 1, out)
        self.assertIn("most layers are missing: is the replay (11 layer(s)) from another model or other build "
                      "options?", warnings[0])


class TestHonestOutput(CliTestCase):
    def test_device_lines(self):
        out = self.vkgraphy("inspect", "device", "--vk-validation")
        self.assertIn("Khronos validation layer: on (any validation message is an error)", out)
        out = self.vkgraphy("-v", "run", MODEL, "--vk", "--builder-optimization-level", "0")
        self.assertEqual(out.count("Vulkan device:"), 1, out)

    def test_profile_names_what_a_reformat_converts_to(self):
        path = os.path.join(VK_MODELS, "fp16_overflow.onnx")
        # --no-fusion: the model input's reformat would otherwise become a conversion on upload.
        out = self.vkgraphy("run", path, "--vk", "--fp16", "--tactics-deny", "*.f32", "--builder-optimization-level",
                            "0", "--profile", "--atol", "1e9", "--no-fusion")
        reformats = [line for line in out.splitlines() if "Reformat" in line and "reformat." in line]
        self.assertTrue(reformats, out)
        self.assertTrue(all("->f16" in line or "->f32" in line for line in reformats), reformats)


class TestDeterministic(CliTestCase):
    def test_ten_builds_under_load_give_one_replay(self):
        # Two busy processes compete with lavapipe's threads, as other jobs on a CI machine do.
        load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            path = os.path.join(VK_MODELS, "cnn.onnx")
            replays = set()
            for i in range(10):
                self.vkgraphy("convert", path, "-o", "m.engine", "--fp16", "--deterministic", "--save-tactics",
                              f"r{i}.json")
                with open(self.path(f"r{i}.json")) as f:
                    replays.add(f.read())
        finally:
            for p in load:
                p.kill()
                p.wait()
        self.assertEqual(len(replays), 1)
        out = self.vkgraphy("-v", "convert", path, "-o", "m.engine", "--fp16", "--deterministic")
        self.assertIn("0 tactic(s) timed", out)
        self.assertIn("--deterministic: loaded", out)
        self.assertTrue(os.path.exists(os.path.join(self.tmp, ".vkgraphy-cache", "timing-cache.json")))
