#!/bin/sh
# The fuzzing soak, outside CI: thousands of random graphs (tests/fuzz/graph_gen.py), every one
# under every builder configuration of tests/fuzz/fuzz_engine.py (docs/testing.md, "Differential
# fuzzing"). Failing models and their repro commands go to $SOAK_DIR/failures.
#
#   tests/fuzz/soak.sh [COUNT [SEED]]         default: 1000 graphs from seed 1
#   SOAK_JOBS=2 SOAK_CONFIGS=all SOAK_DIR=/tmp/vkgraphy-soak tests/fuzz/soak.sh 5000 7
#
# Every configuration of 1000 graphs is about 11000 vkgraphy runs: hours on lavapipe with 2 cores.
# SOAK_ROTATE=1 runs one configuration per graph instead (about 1 s a graph). The summary is the
# last lines of $SOAK_DIR/soak-SEED.log; the exit code is the driver's (1 when anything failed).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
count=${1:-1000}
seed=${2:-1}
dir=${SOAK_DIR:-/tmp/vkgraphy-soak}
python=${VKGRAPHY_VENV:-$root/.venv}/bin/python
mkdir -p "$dir/failures"
rotate=
if [ "${SOAK_ROTATE:-0}" = 1 ]; then rotate=--rotate; fi
echo "soak: $count graphs from seed $seed, configurations ${SOAK_CONFIGS:-all}${rotate:+ (rotated)}, log $dir/soak-$seed.log"
status=0
"$python" "$root/tests/fuzz/fuzz_engine.py" --seed "$seed" --count "$count" --configs "${SOAK_CONFIGS:-all}" $rotate \
  --jobs "${SOAK_JOBS:-1}" --timeout "${SOAK_TIMEOUT:-120}" --keep-failures "$dir/failures" -q \
  ${VKGRAPHY_BIN:+--vkgraphy "$VKGRAPHY_BIN"} > "$dir/soak-$seed.log" 2>&1 || status=$?
grep -E '^(FUZZ SUMMARY|KNOWN_FAILURES)' "$dir/soak-$seed.log" || tail -n 20 "$dir/soak-$seed.log"
exit $status
