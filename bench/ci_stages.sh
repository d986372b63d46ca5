#!/usr/bin/env bash
# How long each stage of .ci/run takes from a fresh clone on this machine (docs/testing.md,
# "How long the suites take"): clones the repository's committed HEAD into DIR, empties a Mesa
# shader cache of its own (as on CI's clean machine), and runs .ci/run's commands one by one, each
# timed. Debian's packages and pip's cache are whatever this machine has: compare stages, not totals,
# with another machine.
#
#   bench/ci_stages.sh [DIR]     (default /tmp/vkgraphy-ci-stages; DIR is replaced)
#
# Prints one `STAGE <seconds> s rc=<status>: <command>` line per stage and the ctest's sum of test
# times; each stage's output goes to DIR.logs/<n>.log. Exits with the first failing stage's status.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/vkgraphy-ci-stages}
logs="$dir.logs"
rm -rf "$dir" "$logs"
mkdir -p "$logs"
git clone -q . "$dir" || exit 1
export MESA_SHADER_CACHE_DIR="$dir.mesa-cache"
rm -rf "$MESA_SHADER_CACHE_DIR"
mkdir -p "$MESA_SHADER_CACHE_DIR"
cd "$dir"

# The commands of .ci/run, in its order (the lines that are neither comments nor shell settings).
mapfile -t stages < <(grep -v -E '^\s*(#|$|set |cd )' .ci/run)
status=0
for i in "${!stages[@]}"; do
  start=$(date +%s)
  bash -c "${stages[$i]}" >"$logs/$i.log" 2>&1
  rc=$?
  echo "STAGE $(($(date +%s) - start)) s rc=$rc: ${stages[$i]}"
  if [ "$rc" != 0 ]; then
    echo "  (output: $logs/$i.log)"
    [ "$status" = 0 ] && status=$rc
    break
  fi
done
ctest_log=$(grep -l "Total Test time" "$logs"/*.log 2>/dev/null | head -1)
if [ -n "$ctest_log" ]; then
  sed -nE 's/.*Test +#[0-9]+: .* ([0-9.]+) sec$/\1/p' "$ctest_log" | awk '{s += $1} END {printf "ctest: %.0f test-s\n", s}'
fi
exit "$status"
