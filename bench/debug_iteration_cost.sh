#!/bin/sh
# What a debug iteration costs beyond the work it does: the loop's own
# overhead (replay files, skip_current, iteration info, artifact sorting,
# logging) and, for reduce, making each candidate model. Each figure is a
# ratio against a baseline run in this script: the same check run directly.
#
#   bench/debug_iteration_cost.sh [ITERATIONS]     (default 40; run from the repository root)
#
# Uses build/vkgraphy and Debian's /usr/bin/python3 (for the fake checker).
set -eu
N=${1:-40}
BIN=$(pwd)/build/vkgraphy
ROOT=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

now() { date +%s.%N; }
ms() { echo "$1 $2 $3" | awk '{ printf "%.2f", ($2 - $1) * 1000 / $3 }'; }

# 1. The loop around a trivial check.
t0=$(now); i=0; while [ $i -lt "$N" ]; do true; i=$((i + 1)); done; t1=$(now)
direct=$(ms "$t0" "$t1" "$N")
t0=$(now); "$BIN" -q debug repeat --until "$N" --artifacts art.txt --iter-info info.json \
    --check sh -c 'echo x > art.txt' > /dev/null 2>&1 || true; t1=$(now)
loop=$(ms "$t0" "$t1" "$N")
t0=$(now); i=0; while [ $i -lt "$N" ]; do sh -c 'echo x > art.txt'; i=$((i + 1)); done; t1=$(now)
check=$(ms "$t0" "$t1" "$N")
echo "repeat: ${loop} ms/iteration with the loop, ${check} ms running the same check directly (true alone: ${direct} ms)"

# 2. reduce: candidate models made, saved and checked by the fake checker.
CHECKER="/usr/bin/python3 $ROOT/tests/cli/fake_reduce_checker.py"
MODEL=$ROOT/tests/models/polygraphy/reducable.onnx
t0=$(now)
"$BIN" -q debug reduce "$MODEL" -o reduced.onnx --mode linear --save-debug-replay r.json \
    --check $CHECKER vkgraphy_debug.onnx --fail-node onnx_graphsurgeon_node_5 > /dev/null 2>&1
t1=$(now)
iters=$(/usr/bin/python3 -c "import json; print(len(json.load(open('r.json'))['iterations']))")
reduce=$(ms "$t0" "$t1" "$iters")
t0=$(now); i=0; while [ $i -lt "$iters" ]; do $CHECKER "$MODEL" --fail-node x > /dev/null; i=$((i + 1)); done; t1=$(now)
checker=$(ms "$t0" "$t1" "$iters")
echo "reduce (reducable.onnx, linear, $iters iterations): ${reduce} ms/iteration, ${checker} ms running the checker directly"
echo "$reduce $checker" | awk '{ printf "reduce overhead per iteration: %.2f ms (%.1f%% of an iteration)\n", $1 - $2, ($1 - $2) * 100 / $1 }'
echo "$loop $check" | awk '{ printf "loop overhead per iteration: %.2f ms\n", $1 - $2 }'
