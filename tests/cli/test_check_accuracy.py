"""`vkgraphy check accuracy` and `run --save-accuracy-results` beside the real Polygraphy 0.53.6: accuracy
results saved by either tool, checked again by both against a grid of tolerances and statistics
(per iteration and averaged), give the same verdicts and summaries; bad files and checks that saved
statistics cannot answer are clear errors."""
import itertools
import os
import re
import subprocess

from vkgraphy_cli import VENV, VK_MODELS, CliTestCase

EXIT_FAILED, EXIT_INPUT = 1, 3
POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
MODEL = os.path.join(VK_MODELS, "example.onnx")


def summaries(out):
    """The Accuracy Summary lines, without the runner names' timestamps."""
    return [re.sub(r"-N0-[\d/:-]+", "", l.split("] ", 1)[1]) for l in out.splitlines() if "Accuracy Summary" in l]


class CheckAccuracy(CliTestCase):
    def polygraphy(self, *args, expect=0):
        proc = subprocess.run([POLYGRAPHY, *map(str, args)], cwd=self.tmp, capture_output=True, text=True,
                              timeout=300)
        if expect is not None:
            self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        return proc.returncode, proc.stdout + proc.stderr

    def saved_results(self):
        """ours.json: vkgraphy's engine against its reference over 3 iterations (max checked);
        theirs.json: ONNX Runtime against the same reference outputs, saved by Polygraphy."""
        self.vkgraphy("run", MODEL, "--ref", "--iterations", "3", "--save-outputs", "ref.json")
        self.vkgraphy("run", MODEL, "--vk", "--iterations", "3", "--load-outputs", "ref.json", "--check-error-stat",
                      "max", "--atol", "1e-3", "--save-accuracy-results", "ours.json")
        self.polygraphy("run", MODEL, "--onnxrt", "--iterations", "3", "--load-outputs", self.path("ref.json"),
                        "--check-error-stat", "max", "--atol", "1e-3", "--save-accuracy-results", "theirs.json")

    def test_same_verdicts_as_polygraphy(self):
        self.saved_results()
        grid = itertools.product(["ours.json", "theirs.json"], ["max", "mean", "median"], ["0", "1e-7", "1e-5", "1e-3"],
                                 [[], ["--check-average"]])
        verdicts = set()
        for path, stat, atol, average in grid:
            args = [path, "--check-error-stat", stat, "--atol", atol, "--rtol", "0", *average]
            with self.subTest(args=" ".join(args)):
                theirs_rc, theirs = self.polygraphy("check", "accuracy", *args, expect=None)
                ours = self.vkgraphy("check", "accuracy", *args, expect=theirs_rc)
                self.assertEqual(summaries(ours)[:1], summaries(theirs)[:1])
                verdicts.add(theirs_rc)
        self.assertEqual(verdicts, {0, EXIT_FAILED})  # the grid holds both verdicts

    def test_saved_results_are_polygraphys_format(self):
        """vkgraphy's file loads in Polygraphy (AccuracyResults.load) with the statistics vkgraphy logged,
        and a file checked again and saved by vkgraphy carries the new tolerances."""
        self.saved_results()
        self.vkgraphy("check", "accuracy", "ours.json", "--check-error-stat", "median", "--atol", "0.5",
                      "--save-accuracy-results", "again.json")
        script = ("import sys\nfrom polygraphy.comparator import AccuracyResults\n"
                  "for path in sys.argv[1:]:\n"
                  "    r = AccuracyResults.load(path)[0]\n"
                  "    pair = list(r.keys())[0]\n"
                  "    out = r[pair][0]['y']\n"
                  "    print(path, len(r[pair]), out.thresholds.check_error_stat, out.thresholds.atol, out.max_absdiff >= 0)\n")
        proc = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", script, "ours.json", "again.json"],
                              cwd=self.tmp, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = [l for l in proc.stdout.splitlines() if l.endswith(" True")]
        self.assertEqual(lines, ["ours.json 3 max 0.001 True", "again.json 3 median 0.5 True"])

    def test_what_saved_statistics_cannot_answer(self):
        self.saved_results()
        cases = [
            (["ours.json"], "elemwise check cannot be made again"),  # the default statistic
            (["ours.json", "--check-error-stat", "quantile"], "have no quantile statistic"),
        ]
        with open(self.path("garbage.json"), "w") as f:
            f.write('{"lst": [], "polygraphy_class": "RunResults"}')
        cases.append((["garbage.json"], "is not an accuracy results file"))
        cases.append((["missing.json", "--check-error-stat", "max"], "missing.json"))
        self.polygraphy("run", MODEL, "--onnxrt", "--load-outputs", self.path("ref.json"), "--compare", "l2",
                        "--save-accuracy-results", "l2.json")
        cases.append((["l2.json", "--check-error-stat", "max"], "holds a L2Result, not the simple comparison's"))
        for args, text in cases:
            with self.subTest(args=args):
                out = self.vkgraphy("check", "accuracy", *args, "--save-accuracy-results", "none.json",
                                    expect=EXIT_INPUT)
                self.assertIn(text, out)
                self.assertFalse(os.path.exists(self.path("none.json")))
