#!/usr/bin/env bash
# The unit tests under AddressSanitizer (with LeakSanitizer) and UBSan: builds
# vkgraphy_unit_tests with -DVKGRAPHY_SANITIZE=ON into build-asan and runs them
# on lavapipe with the validation layer on, as ctest's `unit` does. Any report
# (heap/stack/global overflow, use-after-free, a leak not suppressed in
# tests/sanitizer/lsan.supp, undefined behaviour) fails the run.
#   tests/sanitizer/run.sh                 configure, build and run (CI: .ci/run)
#   tests/sanitizer/run.sh --gtest_filter=Suite.*   extra arguments go to the test binary
#   SANITIZER_BUILD_DIR=dir                another build directory (default build-asan)
#   SANITIZER_SKIP_BUILD=1                 run what is built
#   SANITIZER_FULL=1                       the conformance sweep too (see below)
# See docs/testing.md ("Sanitizers") for what it runs, how long it takes and how to
# add a justified suppression.
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=${SANITIZER_BUILD_DIR:-build-asan}
SUPP="$PWD/tests/sanitizer/lsan.supp"

if [ "${SANITIZER_SKIP_BUILD:-0}" != 1 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1: compiles faster than -O2 and keeps stack traces exact; -g1: line tables for the
  # traces without full debug info (a smaller, faster build).
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DVKGRAPHY_SANITIZE=ON "${launcher[@]}" >/dev/null
  ninja -C "$BUILD" vkgraphy_unit_tests
fi

# halt_on_error: the first report ends the run with a non-zero status (UBSan's
# reports included, which otherwise only print). detect_leaks: LeakSanitizer at
# exit, with the driver's own leaks suppressed (lsan.supp, each entry justified).
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:report_error_type=1:exitcode=87"
export LSAN_OPTIONS="suppressions=$SUPP:print_suppressions=1"

# Without arguments: every unit test, but of the op x tactic conformance sweep
# (Vulkan/TacticConformance.*) only the fp32 (and int32) variants: 125 of its 312.
# The fp16 and f16acc32 variants of a tactic run the same host code (planning,
# buffer sizes, push constants) on other shaders, so they mostly exercise
# lavapipe's JIT; with them the stage would not fit CI's budget (docs/testing.md
# has the figures). SANITIZER_FULL=1 runs them too.
args=("$@")
if [ ${#args[@]} -eq 0 ] && [ "${SANITIZER_FULL:-0}" != 1 ]; then
  args=(--gtest_filter='-Vulkan/TacticConformance.*_f16:Vulkan/TacticConformance.*_f16acc32')
fi

start=$(date +%s)
status=0
"$BUILD/tests/vkgraphy_unit_tests" --gtest_brief=1 "${args[@]}" || status=$?
echo "sanitizer run: exit status $status after $(( $(date +%s) - start )) s"
exit "$status"
