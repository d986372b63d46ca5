#!/usr/bin/env bash
# Reference-backend latency on a 224x224 ResNet-50 (random weights), beside ONNX Runtime
# (npm onnxruntime-node, CPU, same thread count) timed in the same script.
#   bench/reference_vs_onnxruntime.sh [ITERATIONS]     (run from the repository root after ./setup.sh)
# Needs network access to the npm registry the first time (installs into build/bench/).
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-5}
threads=${VKGRAPHY_REF_THREADS:-$(nproc)}
work=build/bench
mkdir -p "$work"
[ -f "$work/resnet50.onnx" ] || /usr/bin/python3 bench/models/make_resnet50.py "$work/resnet50.onnx"

ref_line=$(VKGRAPHY_REF_THREADS=$threads ./build/vkgraphy run "$work/resnet50.onnx" --ref --iterations "$iterations" \
  | grep "Average inference time")
ref_ms=$(sed -E 's/.*Average inference time: ([0-9.]+) ms.*/\1/' <<<"$ref_line")

if [ ! -d "$work/node_modules/onnxruntime-node" ]; then
  (cd "$work" && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node >/dev/null)
fi
cp bench/ort_latency.js "$work/"
ort_ms=$(cd "$work" && node ort_latency.js resnet50.onnx "$iterations" "$threads" | awk '/ort_ms_median/ {print $2}')

echo "ResNet-50 224x224 batch 1, $threads threads, $iterations iterations"
echo "  vkgraphy reference backend: mean ${ref_ms} ms"
echo "  ONNX Runtime (CPU):         median ${ort_ms} ms"
awk -v r="$ref_ms" -v o="$ort_ms" 'BEGIN { printf "  reference / onnxruntime:    %.2fx\n", r / o }'
