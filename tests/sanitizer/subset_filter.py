#!/usr/bin/env python3
"""Reads `vkgraphy_unit_tests --gtest_list_tests` on stdin and prints the --gtest_filter of the
tests the sanitizer stage runs: those subset.txt (argv[1]) marks `run`, and those it does not
name at all (added after the selection). Tests it names that no longer exist are ignored."""
import sys

marked = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line and not line.startswith("#"):
        mark, name = line.split(None, 1)
        marked[name] = mark

suite, selected = "", []
for line in sys.stdin:
    if not line.strip():
        continue
    if not line.startswith(" "):
        suite = line.split("#")[0].strip()  # "Suite." (parameterized: "Prefix/Suite.")
        continue
    name = suite + line.split("#")[0].strip()
    if marked.get(name, "run") == "run":
        selected.append(name)
if not selected:
    sys.exit("error: no unit test selected for the sanitizer run")
print(":".join(selected))
