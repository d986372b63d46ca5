"""No leak over 10,000 `Engine.infer` calls: the process's resident memory stays flat."""
import gc
import os
import unittest

import numpy as np

from py_util import EXAMPLE, vkgraphy

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class LeakTest(unittest.TestCase):
    def test_ten_thousand_inferences_keep_memory_flat(self):
        engine = vkgraphy.build_engine(EXAMPLE, optimization_level=0)
        feed = vkgraphy.generate_inputs(EXAMPLE)[0]
        expected = engine.infer(feed)["y"]
        for i in range(5000):  # the executor is made, allocators and the driver settle
            out = engine.infer(feed)
            if i % 2500 == 0:
                np.testing.assert_array_equal(out["y"], expected)
        gc.collect()
        before = rss_bytes()
        for i in range(10000):
            out = engine.infer(feed)
            if i % 2500 == 0:
                np.testing.assert_array_equal(out["y"], expected)
        gc.collect()
        growth = rss_bytes() - before
        # One output array is 40 bytes and each call makes a few Python objects: 10,000 leaked calls
        # would hold well over a megabyte; allocator noise stays far below it.
        self.assertLess(growth, 1 << 20, f"resident memory grew by {growth / 1024:.0f} KiB over 10,000 infer calls")

    def test_engines_made_and_closed_do_not_accumulate(self):
        feed = vkgraphy.generate_inputs(EXAMPLE)[0]
        data = vkgraphy.build_engine(EXAMPLE, optimization_level=0).serialize()
        for _ in range(5):
            with vkgraphy.load_engine(data) as e:
                e.infer(feed)
        gc.collect()
        before = rss_bytes()
        for _ in range(30):
            with vkgraphy.load_engine(data) as e:
                e.infer(feed)
        gc.collect()
        growth = rss_bytes() - before
        self.assertLess(growth, 8 << 20, f"resident memory grew by {growth / 1024:.0f} KiB over 30 engines")


if __name__ == "__main__":
    unittest.main()
