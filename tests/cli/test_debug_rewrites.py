"""`--disable-rewrite KIND[:NODE]` and `vkgraphy debug rewrites` (docs/debug.md) on lavapipe, validation
on: the builder's rewrites switched off one kind or one instance at a time, and the search that names
the rewrite a fault was injected into (VKGRAPHY_FAULTY_REWRITES, a testing switch) in O(log n)
builds. The model, made here with onnx.helper, holds eight rewrites of six kinds."""
import math
import os
import re

import numpy as np
from onnx import helper, numpy_helper

from test_fusion import bn_node, bn_params, const, make_model
from vkgraphy_cli import BIN, CliTestCase

# Exit codes (docs/debug.md).
NO_FAILURE, NOT_FOUND, USAGE = 7, 8, 2
TOLERANCE = ["--atol", "1e-4", "--rtol", "1e-4"]
BUILD = ["--builder-optimization-level", "0"]

# What a build with every rewrite on applies to rewrites_model(), as --disable-rewrite values.
APPLIED = ["noop-alias:id", "fold-batchnorm:bn1", "fuse-activation:relu1", "fold-bias:bias2",
           "fuse-activation:sig2", "post-scale:scale2", "elementwise-chain:add3", "fuse-activation:relu3"]


def applied_rewrites(log):
    """The ids of the rewrites a -v build logged ("    fuse-activation at layer 'a+b' (nodes a, b)")."""
    m = re.search(r"Applied (\d+) rewrite\(s\)", log)
    assert m, log
    rows = re.findall(r"^\s+([a-z0-9-]+) (?:at layer '[^']*'|of '[^']*') \(nodes ([^)]*)\)$", log, re.M)
    assert len(rows) == int(m.group(1)), log
    return rows


class TestRewrites(CliTestCase):
    def rewrites_model(self):
        """conv1 + bn1 + relu1 -> conv2 + bias2 + sig2 + scale2 -> id -> mul3 (by relu1's output) + add3 + relu3."""
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
                 bn_node("bn1", "c1", "n1"),
                 helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
                 helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
                 helper.make_node("Add", ["c2", "b2"], ["a2"], name="bias2"),
                 helper.make_node("Sigmoid", ["a2"], ["s2"], name="sig2"),
                 helper.make_node("Mul", ["s2", "half"], ["h2"], name="scale2"),
                 helper.make_node("Identity", ["h2"], ["i2"], name="id"),
                 helper.make_node("Mul", ["i2", "r1"], ["m3"], name="mul3"),
                 helper.make_node("Add", ["m3", "r1"], ["a3"], name="add3"),
                 helper.make_node("Relu", ["a3"], ["y"], name="relu3")]
        inits = [const("w1", [6, 4, 3, 3]), const("b1", [6]), *bn_params("bn1", 6), const("w2", [6, 6, 3, 3]),
                 const("b2", [1, 6, 1, 1]), numpy_helper.from_array(np.array(0.5, np.float32), "half")]
        return make_model(nodes, inits, [1, 4, 8, 8], "y", path=self.path("rewrites.onnx"))

    def convert(self, path, *extra, expect=0):
        return self.vkgraphy("convert", path, "-o", self.path("e.engine"), "-v", *BUILD, *extra, expect=expect)

    def debug_rewrites(self, path, *extra, expect=0, env=None):
        return self.vkgraphy("debug", "rewrites", path, *BUILD, *TOLERANCE, *extra, expect=expect, env=env)

    def test_every_rewrite_is_recorded_and_disable_rewrite_prevents_it(self):
        path = self.rewrites_model()
        rows = applied_rewrites(self.convert(path))
        self.assertEqual(len(rows), len(APPLIED))
        log = self.convert(path, "--disable-rewrite", "fuse-activation")
        kinds = [kind for kind, _ in applied_rewrites(log)]
        self.assertNotIn("fuse-activation", kinds)
        self.assertIn("fold-batchnorm", kinds)
        self.assertIn("into layer 'conv1+bn1'", log)
        self.assertNotIn("conv1+bn1+relu1", log)
        # KIND:NODE: only where the rewrite would involve that node (the absorbed or the absorbing one).
        for node in ("sig2", "conv2"):
            log = self.convert(path, "--disable-rewrite", "fuse-activation:" + node, "--disable-rewrite", "noop-alias")
            rows = applied_rewrites(log)
            self.assertIn(("fuse-activation", "conv1, relu1"), rows)
            self.assertNotIn(("fuse-activation", "conv2, sig2"), rows)
            self.assertNotIn("noop-alias", [kind for kind, _ in rows])
        # The engine is still right with a rewrite off.
        self.vkgraphy("run", path, "--vk", "--ref", *BUILD, *TOLERANCE, "--disable-rewrite", "fold-bias:bias2")

    def test_no_fusion_is_every_kind_disabled(self):
        path = self.rewrites_model()
        every = []
        for kind in {a.split(":")[0] for a in APPLIED}:
            every += ["--disable-rewrite", kind]
        log_all = self.convert(path, *every)
        log_none = self.convert(path, "--no-fusion")
        self.assertEqual(applied_rewrites(log_all), [])
        self.assertEqual(applied_rewrites(log_none), [])
        layers = re.compile(r"Built engine in [\d.]+ s \| (\d+) layers")
        self.assertEqual(layers.search(log_all).group(1), layers.search(log_none).group(1))
        self.assertEqual(layers.search(log_none).group(1), "11")

    def test_an_unknown_kind_is_a_usage_error_listing_the_kinds(self):
        out = self.convert(self.rewrites_model(), "--disable-rewrite", "fuse-everything", expect=USAGE)
        self.assertIn("unknown rewrite kind 'fuse-everything'", out)
        for kind in ("noop-alias", "fold-batchnorm", "range-copy-view", "reformat-fp32-read", "concat-elimination"):
            self.assertIn(kind, out)
        self.assertIn("range-copy-view", self.vkgraphy("convert", "--help"))

    def assert_found(self, out, kind, node, layer, nodes):
        self.assertIn(f"Rewrite {kind} at layer '{layer}' (nodes {nodes}) makes", out)
        self.assertIn(f"build with `--disable-rewrite {kind}:{node}` to avoid it", out)
        builds = int(re.search(r"to avoid it \((\d+) build\(s\)\)", out).group(1))
        # All on, all off, then a bisection over the kinds and one over the guilty kind's instances,
        # each confirmed: O(log n) in the number of rewrites, not n.
        kinds = len({a.split(":")[0] for a in APPLIED})
        instances = sum(a.startswith(kind + ":") for a in APPLIED)
        bound = 2 + (math.ceil(math.log2(kinds)) + 1) + (math.ceil(math.log2(instances)) + 1)
        self.assertLessEqual(builds, bound, out)
        self.assertLess(builds, len(APPLIED) + 2, out)
        return builds

    def test_names_the_faulty_rewrite_with_the_default_check(self):
        path = self.rewrites_model()
        env = {"VKGRAPHY_FAULTY_REWRITES": "fuse-activation:sig2"}
        out = self.debug_rewrites(path, env=env)
        self.assert_found(out, "fuse-activation", "sig2", "conv2+bias2+sig2+scale2", "conv2, sig2")
        self.assertIn("makes output 'y' differ", out)
        self.assertIn("The build with every rewrite on applied 8 rewrite(s)", out)
        # The answer works: the fault switch stays on, the engine is right.
        self.vkgraphy("run", path, "--vk", "--ref", *BUILD, *TOLERANCE, "--disable-rewrite", "fuse-activation:sig2",
                      env=env)

    def test_names_the_faulty_rewrite_with_a_check_command(self):
        path = self.rewrites_model()
        self.vkgraphy("run", path, "--ref", "--save-outputs", self.path("golden.json"))
        out = self.debug_rewrites(path, "--check", "vkgraphy", "run", "vkgraphy_debug.engine", "--vk", "--load-outputs",
                                  self.path("golden.json"), *TOLERANCE,
                                  env={"VKGRAPHY_FAULTY_REWRITES": "fold-bias:bias2", "PATH": self.bin_path()})
        self.assert_found(out, "fold-bias", "bias2", "conv2+bias2+sig2+scale2", "conv2, bias2")
        self.assertIn("makes the engine fail the check", out)

    @staticmethod
    def bin_path():
        """PATH with the vkgraphy under test first, for a check command that runs `vkgraphy`."""
        return os.path.dirname(os.path.abspath(BIN)) + os.pathsep + os.environ.get("PATH", "")

    def test_nothing_to_find_and_not_caused_by_a_rewrite(self):
        path = self.rewrites_model()
        out = self.debug_rewrites(path, expect=NO_FAILURE)
        self.assertIn("The engine agrees with the reference with every rewrite on: nothing to find (1 build(s))", out)
        out = self.debug_rewrites(path, expect=NOT_FOUND, env={"VKGRAPHY_FAULTY_LAYERS": "conv1"})
        self.assertIn("the failure is not caused by a rewrite (2 build(s))", out)
