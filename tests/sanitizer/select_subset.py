#!/usr/bin/env python3
"""Chooses the unit tests CI's sanitizer stage runs: the cheapest set that covers every arc
(branch edge) of runtime/ and debug/ that the whole suite covers.

    tests/sanitizer/select_subset.py [--build-dir build-cov] [--skip-build] [--keep DIR] [--times JSON]

1. builds vkgraphy_unit_tests with runtime/ and debug/ instrumented (-DVKGRAPHY_COVERAGE=ON,
   -O0 like the sanitizer build, the SPIR-V of the Release build in ./build);
2. runs the whole suite once on lavapipe; tests/sanitizer/coverage_listener.cpp writes each
   test's arc counters (gcov's .gcda files) and its time;
3. reads which arcs each test ran, and picks tests greedily by new arcs per second until the
   chosen ones cover every arc the suite covers. A test's seconds are its time in the sanitizer
   build when --times names that run's gtest JSON (`SANITIZER_FULL=1 tests/sanitizer/run.sh
   --gtest_output=json:FILE`): there the driver's LLVM runs under ASan's allocator, so times differ
   from the instrumented build's, which are used otherwise;
4. writes tests/sanitizer/subset.txt: every test of the suite, `run` or `covered`.

tests/sanitizer/run.sh runs the `run` tests, and every test that subset.txt does not name (a
test added since the selection), so nothing new goes unsanitized until the next selection.
Run this script again when the suite or the code under test changed much (docs/testing.md).
"""
import argparse
import datetime
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

GCDA_MAGIC = 0x67636461  # "gcda"
TAG_FUNCTION = 0x01000000
TAG_ARC_COUNTERS = 0x01A10000
PER_TEST_OVERHEAD_MS = 20  # gtest's own cost of a test, so that free tests are not free


def build(build_dir: pathlib.Path) -> None:
    spirv = ROOT / "build" / "generated" / "shaders"
    if not spirv.is_dir():
        sys.exit(f"error: {spirv} is missing: run ./setup.sh (the Release build) first")
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -DNDEBUG",
                    "-DVKGRAPHY_COVERAGE=ON", "-DCMAKE_UNITY_BUILD=ON", "-DCMAKE_UNITY_BUILD_BATCH_SIZE=16",
                    f"-DVKGRAPHY_SPIRV_FROM={spirv}"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", str(build_dir), "vkgraphy_unit_tests"], check=True)


def run_suite(build_dir: pathlib.Path, out: pathlib.Path) -> None:
    env = dict(os.environ, VKGRAPHY_COVERAGE_DIR=str(out), VK_DRIVER_FILES=LAVAPIPE)
    env.pop("GCOV_PREFIX", None)
    binary = build_dir / "tests" / "vkgraphy_unit_tests"
    result = subprocess.run([str(binary), "--gtest_brief=1"], env=env)
    if result.returncode != 0:
        sys.exit(f"error: the instrumented suite failed (exit {result.returncode}): fix it before selecting")


def covered_arcs(gcda: pathlib.Path, unit: str, arc_ids: dict) -> set:
    """The arcs with a non-zero counter in one .gcda file. GCC 12's format: a header of magic,
    version, stamp and checksum, then records of tag, length in bytes and data (a counter block
    with a negative length is all zeros and has no data)."""
    data = gcda.read_bytes()
    magic, = struct.unpack_from("<I", data, 0)
    if magic != GCDA_MAGIC:
        raise ValueError(f"{gcda}: not a .gcda file")
    arcs = set()
    pos, function = 16, None
    while pos + 8 <= len(data):
        tag, length = struct.unpack_from("<Ii", data, pos)
        pos += 8
        if tag == TAG_FUNCTION:
            function = struct.unpack_from("<I", data, pos)[0] if length >= 4 else None
        elif tag == TAG_ARC_COUNTERS and length > 0 and function is not None:
            counts = struct.unpack_from(f"<{length // 8}Q", data, pos)
            for index, count in enumerate(counts):
                if count:
                    arcs.add(arc_ids.setdefault((unit, function, index), len(arc_ids)))
        pos += max(length, 0)
    return arcs


def read_tests(out: pathlib.Path):
    arc_ids, tests = {}, []
    for test_dir in sorted((p for p in out.iterdir() if p.is_dir()), key=lambda p: int(p.name)):
        name, millis = (test_dir / "test.txt").read_text().split("\n")[:2]
        arcs = set()
        for gcda in test_dir.rglob("*.gcda"):
            unit = str(gcda.relative_to(test_dir))
            arcs |= covered_arcs(gcda, unit, arc_ids)
        tests.append((name, int(millis), arcs))
    return tests


def sanitizer_times(path: str) -> dict:
    """Milliseconds per test from a gtest JSON report."""
    report = json.loads(pathlib.Path(path).read_text())
    return {f"{suite['name']}.{test['name']}": round(float(test["time"].rstrip("s")) * 1000)
            for suite in report["testsuites"] for test in suite["testsuite"]}


def choose(tests):
    """Greedy weighted set cover: the test with the most new arcs per millisecond first."""
    remaining = set().union(*(arcs for _, _, arcs in tests))
    total = len(remaining)
    chosen, candidates = [], list(tests)
    while remaining:
        best = max(candidates, key=lambda t: len(t[2] & remaining) / (t[1] + PER_TEST_OVERHEAD_MS))
        gain = best[2] & remaining
        if not gain:
            break
        chosen.append(best[0])
        remaining -= gain
        candidates.remove(best)
    return chosen, total


def write_subset(path: pathlib.Path, tests, chosen, total_arcs, timing: str) -> None:
    chosen_set = set(chosen)
    all_ms = sum(ms for _, ms, _ in tests)
    chosen_ms = sum(ms for name, ms, _ in tests if name in chosen_set)
    lines = [
        "# The unit tests CI's sanitizer stage runs (tests/sanitizer/run.sh), chosen by",
        "# tests/sanitizer/select_subset.py: `run` tests cover every arc of runtime/ and debug/ that",
        "# the whole suite covers; a `covered` test adds none. Tests not named here run too.",
        f"# {datetime.date.today()}: {len(chosen)} of {len(tests)} tests, {total_arcs} arcs; "
        f"{chosen_ms / 1000:.0f} s of the suite's {all_ms / 1000:.0f} s in {timing}.",
    ]
    lines += [("run " if name in chosen_set else "covered ") + name for name, _, _ in tests]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    print(f"{path}: {len(chosen)} of {len(tests)} tests cover all {total_arcs} arcs "
          f"({chosen_ms / 1000:.0f} of {all_ms / 1000:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build-cov"))
    parser.add_argument("--skip-build", action="store_true", help="use what --build-dir holds")
    parser.add_argument("--keep", help="keep the per-test counters in this folder (default: a temporary one)")
    parser.add_argument("--out", default=str(ROOT / "tests" / "sanitizer" / "subset.txt"))
    parser.add_argument("--times", help="gtest JSON of a full sanitizer run: choose by its times")
    args = parser.parse_args()
    build_dir = pathlib.Path(args.build_dir).resolve()
    if not args.skip_build:
        build(build_dir)
    out = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="vkgraphy_coverage_")).resolve()
    if args.keep and out.is_dir() and any(out.iterdir()):
        print(f"reading the counters already in {out}")
    else:
        out.mkdir(parents=True, exist_ok=True)
        run_suite(build_dir, out)
    tests = read_tests(out)
    timing = "the instrumented build"
    if args.times:
        times = sanitizer_times(args.times)
        missing = [name for name, _, _ in tests if name not in times]
        if missing:
            sys.exit(f"error: {args.times} has no time for {len(missing)} tests, e.g. {missing[0]}")
        tests = [(name, times[name], arcs) for name, _, arcs in tests]
        timing = "the sanitizer build"
    chosen, total = choose(tests)
    write_subset(pathlib.Path(args.out), tests, chosen, total, timing)
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
