"""Errors that help (issue: a newcomer's first hour): a misspelled tool, subcommand or option is named with
the closest valid one; `--check --` separates; files of the wrong kind are named for what they are; a check
killed by its timeout says so. The exact wording users see is asserted."""
import os
import unittest

from vkgraphy_cli import BIN, CliTestCase, model

MODEL = model("identity.onnx")


class TestUsageErrors(CliTestCase):
    def test_misspelled_tool_and_subcommand(self):
        out = self.vkgraphy("rnu", MODEL, expect=2)
        self.assertIn("[E] 'rnu' is not a vkgraphy tool; did you mean 'run'? "
                      "(choose from: run, convert, inspect, surgeon, debug)", out)
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
        self.assertIn("========== CHECK OUTPUT (killed by --check-timeout after 0.5 s) ==========", out)
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
