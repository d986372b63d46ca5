#!/usr/bin/env bash
# Reference-backend latency on a 224x224 ResNet-50 (random weights), beside ONNX Runtime
# (PyPI onnxruntime, CPU, same thread count, all graph optimizations) timed in the same script.
#   bench/reference_vs_onnxruntime.sh [ITERATIONS]     (run from the repository root after ./setup.sh)
# ONNX Runtime comes from the benchmarks' virtual environment build/bench/peers-venv
# (bench/peers_requirements.txt), created on first use: that needs PyPI the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-5}
threads=${VKGRAPHY_REF_THREADS:-$(nproc)}
work=build/bench
mkdir -p "$work"
if [ ! -x ./build/vkgraphy ]; then
  echo "error: ./build/vkgraphy not found: build vkgraphy first (./setup.sh)" >&2
  exit 1
fi
if [ ! -f "$work/resnet50.onnx" ]; then
  /usr/bin/python3 bench/models/make_resnet50.py "$work/resnet50.onnx.tmp"
  mv "$work/resnet50.onnx.tmp" "$work/resnet50.onnx"
fi

ref_line=$(VKGRAPHY_REF_THREADS=$threads ./build/vkgraphy run "$work/resnet50.onnx" --ref --iterations "$iterations" \
  | grep "Average inference time")
ref_ms=$(sed -E 's/.*Average inference time: ([0-9.]+) ms.*/\1/' <<<"$ref_line")

# shellcheck source=bench/peers_venv.sh
. bench/peers_venv.sh
peers_venv
ort_ms=$("$PEERS_PY" bench/peers.py ort-latency "$work/resnet50.onnx" "$iterations" "$threads" \
  | awk '/ort_ms_median/ {print $2}')
[ -n "$ort_ms" ] || { echo "error: no ONNX Runtime timing" >&2; exit 1; }

echo "ResNet-50 224x224 batch 1, $threads threads, $iterations iterations"
echo "  vkgraphy reference backend: mean ${ref_ms} ms"
echo "  ONNX Runtime (CPU):         median ${ort_ms} ms"
awk -v r="$ref_ms" -v o="$ort_ms" 'BEGIN { printf "  reference / onnxruntime:    %.2fx\n", r / o }'
