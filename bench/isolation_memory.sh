#!/bin/sh
# Peak memory (max RSS, from /usr/bin/time -v) of per-layer isolation on
# ResNet-50 (random weights, bench/models/make_resnet50.py, 1x3x224x224)
# against a plain `run --vk --ref` and against saving every tensor of both
# runners (`--vk-outputs mark all --onnx-outputs mark all --save-outputs`).
# Every run builds at optimization level 0 with --deterministic (no timing),
# so the three engines are built alike and the builds are short.
#
#   bench/isolation_memory.sh    (run from the repository root; uses build/vkgraphy on the default device)
set -eu
ROOT=$(pwd)
BIN=$ROOT/build/vkgraphy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 bench/models/make_resnet50.py "$TMP/resnet50.onnx" > /dev/null
COMMON="--vk --ref --deterministic --builder-optimization-level 0 --atol 1e-3 --rtol 1e-3"

peak() {  # label, then the arguments after `run MODEL`
  label=$1
  shift
  # shellcheck disable=SC2086
  /usr/bin/time -v "$BIN" run "$TMP/resnet50.onnx" $COMMON "$@" > "$TMP/$label.log" 2>&1 || true
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/$label.log")
  secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/$label.log")
  printf '%-12s %10s MB %12s\n' "$label" "$((kb / 1024))" "$secs"
}

# One unmeasured run first: Mesa compiles the pipelines and keeps them in its
# on-disk shader cache, so that no measured run pays (and holds memory for) that.
peak warmup > /dev/null
printf '%-12s %13s %12s\n' run max_rss wall
peak plain
peak isolation --isolate-layers
peak mark_all --vk-outputs mark all --onnx-outputs mark all --save-outputs "$TMP/out.json"
ls -l "$TMP/out.json" | awk '{printf "mark_all --save-outputs file: %d MB\n", $5 / 1048576}'
