#!/usr/bin/env bash
# The unit tests under AddressSanitizer (with LeakSanitizer) and UBSan: builds
# vkgraphy_unit_tests with -DVKGRAPHY_SANITIZE=ON into build-asan and runs them
# on lavapipe with the validation layer on, as ctest's `unit` does. Any report
# (heap/stack/global overflow, use-after-free, a leak not suppressed in
# tests/sanitizer/lsan.supp, undefined behaviour) fails the run.
#   tests/sanitizer/run.sh                 configure, build and run the tests subset.txt marks
#                                          `run` and those it does not name (CI: .ci/run)
#   tests/sanitizer/run.sh --gtest_filter=Suite.*   extra arguments go to the test binary
#   SANITIZER_FULL=1                       every unit test (what subset.txt stands for)
#   SANITIZER_BUILD_DIR=dir                another build directory (default build-asan)
#   SANITIZER_SHARDS=N                     test processes, as many at a time as there are cores (default: 4 a core,
#                                          or 1 when arguments are given)
#   SANITIZER_SKIP_BUILD=1                 run what is built
#   SANITIZER_PYTHON=0                     leave out the Python module's tests (run after the unit
#                                          tests when the module is built: its C++ side under ASan and UBSan)
# subset.txt is chosen by coverage (tests/sanitizer/select_subset.py). See docs/testing.md
# ("Sanitizers") for what it runs, how long it takes and how to add a justified suppression.
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=${SANITIZER_BUILD_DIR:-build-asan}
SUPP="$PWD/tests/sanitizer/lsan.supp"

# The compiler: clang++ where it is installed (setup.sh installs it), else the system's c++ (GCC).
# Both instrument with the same ASan and UBSan checks, but GCC at -O0 took 60 s over runtime/'s
# largest unity source with both sanitizers and clang 28 s (docs/testing.md); the objects the
# Release build compiled with GCC (the uninstrumented test code) link with either.
#   SANITIZER_CXX=g++ tests/sanitizer/run.sh   another compiler
CXX=${SANITIZER_CXX:-$(command -v clang++ || command -v c++ || true)}
CXX=$(command -v "${CXX:-c++}") || { echo "error: no C++ compiler '${SANITIZER_CXX:-clang++ or c++}' found" >&2; exit 1; }

if [ "${SANITIZER_SKIP_BUILD:-0}" != 1 ]; then
  extra=()
  command -v ccache >/dev/null && extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # The shaders do not depend on the C++ flags: embed the SPIR-V the Release build compiled.
  [ -d build/generated/shaders ] && extra+=("-DVKGRAPHY_SPIRV_FROM=$PWD/build/generated/shaders")
  # Nor does the tests' own code, which is not instrumented (tests/CMakeLists.txt): link the objects
  # the Release build compiled (brought up to date first) instead of compiling them again.
  if [ -f build/build.ninja ]; then
    ninja -C build vkgraphy_unit_tests
    extra+=("-DVKGRAPHY_TEST_OBJECTS_FROM=$PWD/build")
  fi
  # -O0: GCC instruments and compiles vkgraphy's code in about 60% of the time -Og takes (the
  # largest unity source of runtime/: 73 s against 122 s), and the tests run nearly as fast: the
  # driver and the validation layer under ASan's allocator take most of their time (docs/testing.md).
  # -g1: line tables for the stack traces without full debug info. A unity build, 16 sources at a
  # time, as setup.sh's. The tests' own code is not instrumented (tests/CMakeLists.txt).
  # A build directory configured with another compiler starts over (CMake cannot switch it).
  if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$CXX" "$BUILD/CMakeCache.txt"; then
    rm -rf "$BUILD"
  fi
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_COMPILER=$CXX" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" -DVKGRAPHY_SANITIZE=ON \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 "${extra[@]}" >/dev/null
  ninja -C "$BUILD" vkgraphy_unit_tests
  # The target list is read whole: with pipefail, `grep -q` closing the pipe early made ninja's
  # SIGPIPE read as "no module target" and left the module out.
  if [ "${SANITIZER_PYTHON:-1}" = 1 ] && ninja -C "$BUILD" -t targets all | grep '^_vkgraphy:' >/dev/null; then
    ninja -C "$BUILD" _vkgraphy
  fi
fi

# halt_on_error: the first report ends the run with a non-zero status (UBSan's
# reports included, which otherwise only print). detect_leaks: LeakSanitizer at
# exit, with the driver's own leaks suppressed (lsan.supp, each entry justified).
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1:exitcode=87"
export LSAN_OPTIONS="suppressions=$SUPP:print_suppressions=1"
# llvmpipe without its LLVM optimization passes, as ctest runs the suite (tests/CMakeLists.txt):
# the shaders compile faster, and those ctest compiled come from Mesa's cache.
export GALLIVM_PERF=nopt
# Without the builder's compile workers, as ctest runs the suite (tests/CMakeLists.txt): the shards
# keep the cores busy, and each build's worker would be one more instrumented process.
export VKGRAPHY_COMPILE_WORKERS=0
# The host-specialized shaders ctest left in the Release build's folder (tests/CMakeLists.txt): the
# optimizer's work under ASan's allocator is the same work again (the cache's own code runs either way).
export VKGRAPHY_SPIRV_CACHE_DIR=${VKGRAPHY_SPIRV_CACHE_DIR:-$PWD/build/spirv-cache}

# Without arguments: the tests subset.txt marks `run` (together they cover every arc of
# runtime/ and debug/ the whole suite covers) and every test it does not name (added since).
args=("$@")
if [ ${#args[@]} -eq 0 ] && [ "${SANITIZER_FULL:-0}" != 1 ]; then
  filter=$("$BUILD/tests/vkgraphy_unit_tests" --gtest_list_tests | /usr/bin/python3 tests/sanitizer/subset_filter.py tests/sanitizer/subset.txt)
  args=(--gtest_filter="$filter")
fi

# In GoogleTest's shards of the chosen tests, as many at a time as there are cores: one process keeps
# one core busy, its time going to ASan's allocator and the driver's host work. Four shards a core,
# each started as one ends, so that the shards' unequal lengths (a conformance test of 37 s beside
# tests of a second) even out: two shards, one a core, ended 44 s apart.
# With arguments (a filter, --gtest_output=json:FILE) in one process unless SANITIZER_SHARDS says.
parallel=$(nproc)
shards=$((4 * parallel))
[ $# -gt 0 ] && shards=1
[ "${SANITIZER_SHARDS:-}" ] && shards=$SANITIZER_SHARDS
start=$(date +%s)
status=0
logs=$(mktemp -d)
running=0
for ((i = 0; i < shards; ++i)); do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  (
    shard_status=0
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$BUILD/tests/vkgraphy_unit_tests" --gtest_brief=1 "${args[@]}" \
      >"$logs/$i.log" 2>&1 || shard_status=$?
    echo "$shard_status" >"$logs/$i.status"
  ) &
  running=$((running + 1))
done
wait
for ((i = 0; i < shards; ++i)); do
  shard_status=$(cat "$logs/$i.status" 2>/dev/null || echo 1)
  echo "--- shard $((i + 1)) of $shards: exit status $shard_status"
  cat "$logs/$i.log"
  [ "$status" = 0 ] && status=$shard_status
done
rm -rf "$logs"
echo "sanitizer run: exit status $status after $(( $(date +%s) - start )) s"

# The Python module's C++ side (keyword arguments, numpy conversion, engines, data calls):
# tests/python/test_module.py with the module built here. The interpreter is not instrumented, so
# ASan's runtime is preloaded; LeakSanitizer stays off there (CPython and numpy keep memory at exit
# on purpose; py_leak checks the module's own over 10,000 calls).
if [ "$status" = 0 ] && [ ${#args[@]} -le 1 ] && [ "${SANITIZER_PYTHON:-1}" = 1 ] && ls "$BUILD"/python/vkgraphy/_vkgraphy*.so >/dev/null 2>&1; then
  start=$(date +%s)
  # libstdc++ preloaded too: ASan finds the C++ runtime's __cxa_throw only when it is loaded at start.
  # The runtime of the compiler the build was configured with (SANITIZER_SKIP_BUILD may run another's build).
  built_with=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
  if [[ "$("$built_with" --version)" == *clang* ]]; then
    asan_runtime=$("$built_with" -print-file-name=libclang_rt.asan-x86_64.so)
  else
    asan_runtime=$("$built_with" -print-file-name=libasan.so)
  fi
  preload="$asan_runtime $("$built_with" -print-file-name=libstdc++.so.6)"
  (cd tests/python && LD_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}" \
    VKGRAPHY_PYTHON_DIR="$PWD/../../$BUILD/python" VKGRAPHY_BIN="$PWD/../../build/vkgraphy" \
    ../../.venv/bin/python -m unittest test_module) || status=$?
  echo "sanitizer run of the Python module: exit status $status after $(( $(date +%s) - start )) s"
fi
exit "$status"
