#!/bin/bash
# Builds a model whose layers have near-tied tactics N times (default 10) with
# default options, with --deterministic's tie rule alone (VKGRAPHY_CACHE_DIR
# empty: no kept measurements), and with --deterministic as users run it
# (measurements kept in a fresh default timing cache), and counts the distinct
# tactic replays each way. Timing-driven choices make default builds differ;
# the tie rule alone narrows that; kept measurements remove it.
#
#   bench/replay_nondeterminism.sh [N] [MODEL] [extra builder options...]
#
# Needs a built tree (./setup.sh). Uses the device vkgraphy picks by default
# (lavapipe on a machine without a GPU); pass --device via VKGRAPHY_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-10}
model=${2:-$here/tests/models/vk/near_tie.onnx}
shift $(( $# > 2 ? 2 : $# )) || true
bin=${VKGRAPHY_BIN:-$here/build/vkgraphy}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count_distinct() {
  local mode=$1; shift
  for i in $(seq 1 "$n"); do
    "$bin" ${VKGRAPHY_ARGS:-} convert "$model" -o "$tmp/e.engine" --save-tactics "$tmp/$mode.$i.json" -q "$@" >/dev/null
    /usr/bin/python3 -c "import json,sys; print(' '.join(l['name']+'='+l['tactic'] for l in json.load(open(sys.argv[1]))['layers']))" \
      "$tmp/$mode.$i.json" >> "$tmp/$mode.txt"
  done
  sort "$tmp/$mode.txt" | uniq -c | sort -rn > "$tmp/$mode.counts"
  echo "$mode: $(wc -l < "$tmp/$mode.counts") distinct replay(s) in $n builds"
  /usr/bin/python3 - "$tmp/$mode.txt" <<'PY'
import collections, sys
rows = [dict(kv.split("=", 1) for kv in line.split()) for line in open(sys.argv[1])]
for layer in rows[0]:
    seen = collections.Counter(r[layer] for r in rows)
    if len(seen) > 1:
        print(f"    {layer}: " + ", ".join(f"{t} x{c}" for t, c in seen.most_common()))
PY
}

echo "model: $model, $n builds each"
count_distinct default "$@"
VKGRAPHY_CACHE_DIR= count_distinct tie-rule-only --deterministic "$@"
VKGRAPHY_CACHE_DIR="$tmp/cache" count_distinct deterministic --deterministic "$@"
