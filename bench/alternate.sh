#!/usr/bin/env bash
# Compares two engines on a noisy device by alternating them: ROUNDS rounds, each running both
# engines (A first in odd rounds, B first in even ones) for ITERATIONS timed inferences after 2
# warm-ups, then the ratio of their median times per inference (the host wall time `vkgraphy run`
# records) in that round. The median of the per-round ratios holds up where the device's speed
# drifts between runs (lavapipe on a shared VM moved 1.5x between runs a minute apart:
# docs/bench.md); a whole-run median does not.
#
# usage: bench/alternate.sh [--rounds N] [--iterations N] ENGINE_A ENGINE_B
#   VKGRAPHY_BIN (default build/vkgraphy), VK_DRIVER_FILES and LP_NUM_THREADS pass through.
# Prints one line per round and a summary line:
#   ALTERNATE a=<A> b=<B> rounds=<n> median_a_ms=<x> median_b_ms=<y> ratio_a_over_b=<median ratio>
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=10
iterations=8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "alternate.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [[ $# -ne 2 ]]; then
  echo "usage: bench/alternate.sh [--rounds N] [--iterations N] ENGINE_A ENGINE_B" >&2
  exit 2
fi
for e in "$1" "$2"; do
  [[ -f "$e" ]] || { echo "alternate.sh: no engine file '$e'" >&2; exit 2; }
done
bin="${VKGRAPHY_BIN:-build/vkgraphy}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The median device time (ms) of one run of engine $1.
median_ms() {
  "$bin" run "$1" --vk --warm-up 2 --iterations "$iterations" --save-outputs "$work/run.json" > "$work/run.log" 2>&1 ||
    { cat "$work/run.log" >&2; echo "alternate.sh: vkgraphy run $1 failed" >&2; exit 1; }
  /usr/bin/python3 - "$work/run.json" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["lst"][0][1]
print(f"{statistics.median(r['runtime'] * 1e3 for r in runs):.3f}")
PY
}

for ((r = 1; r <= rounds; ++r)); do
  if (( r % 2 )); then a=$(median_ms "$1"); b=$(median_ms "$2"); else b=$(median_ms "$2"); a=$(median_ms "$1"); fi
  echo "round $r: a ${a} ms, b ${b} ms" | tee -a "$work/rounds.txt"
done
/usr/bin/python3 - "$work/rounds.txt" "$1" "$2" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
a = [float(r[3]) for r in rows]
b = [float(r[6]) for r in rows]
ratio = statistics.median(x / y for x, y in zip(a, b))
print(f"ALTERNATE a={sys.argv[2]} b={sys.argv[3]} rounds={len(rows)} median_a_ms={statistics.median(a):.3f} "
      f"median_b_ms={statistics.median(b):.3f} ratio_a_over_b={ratio:.3f}")
PY
