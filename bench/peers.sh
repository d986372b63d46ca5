#!/usr/bin/env bash
# vkgraphy beside its peers, in one run, on the same Vulkan device and the same inputs:
#   vkgraphy-fp32, vkgraphy-fp16   engines built once with `vkgraphy convert [--fp16]`, timed with
#                                  `vkgraphy run ENGINE --vk`
#   ncnn-vulkan                    ncnn (PyPI) on its Vulkan backend, the model converted by pnnx
#   iree-vulkan                    IREE: iree-import-onnx + iree-compile for Vulkan SPIR-V, run on
#                                  the runtime's Vulkan HAL driver
#   onnxruntime-cpu                ONNX Runtime on the CPU (all graph optimizations, nproc threads):
#                                  the CPU baseline and the oracle the outputs are compared with
# on ResNet-50 (random weights, bench/models/make_resnet50.py), PP-OCRv4 det 1x3x320x320 and rec
# 1x3x48x320 (from the rapidocr-onnxruntime wheel) and tests/models/vk/transformer.onnx, batch 1.
#
#   bench/peers.sh [--quick] [--models a,b] [--runtimes r1,r2]     (from the repository root)
#
# Prints one line per measurement,
#   PEER model=NAME runtime=RUNTIME median_ms=X
#   PEER model=NAME runtime=RUNTIME skipped=REASON      (a conversion, compile or run that failed)
# then a table of each runtime's ratio to vkgraphy-fp32 per model, with the max abs difference of
# each output from ONNX Runtime's. Progress goes to stderr. --quick: 1 warm-up + 3 timed
# inferences instead of 2 + 10. Needs the build (./setup.sh) and PyPI the first time (the peers
# install into build/bench/peers-venv, pinned in bench/peers_requirements.txt); conversions are
# kept in build/bench/peers (delete it to redo them; vkgraphy's engines are rebuilt every run).
#
# Environment: VK_DRIVER_FILES (default: lavapipe's ICD, when it is installed and nothing is set),
# LP_NUM_THREADS (default nproc), PEERS_THREADS (CPU threads of ONNX Runtime and ncnn, default
# nproc), PEERS_TIMEOUT (seconds per conversion step, default 1800), PEERS_RUN_BUDGET (seconds
# for one runtime's warm-up and timed inferences on one model, default 3600, 300 with --quick: a
# runtime over it is reported skipped, saying so), PEERS_NCNN_FP16=0 (ncnn in fp32 instead of its
# default fp16 storage and arithmetic), PEERS_IREE_COMPILE_FLAGS (extra iree-compile flags, e.g.
# --iree-vulkan-target=... for a GPU), PEERS_WARMUP_MS (or --warmup-ms: each runtime keeps warming
# up until this many milliseconds have passed, default 0; a GPU needs a few hundred to raise its
# clock, bench/gpu.sh gives 500), VKGRAPHY (the binary).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick) ;;
    --models|--runtimes|--warmup|--warmup-ms|--iterations)
      [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }
      args+=("$1" "$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1' (see bench/peers.sh --help)" >&2; exit 2 ;;
  esac
  shift
done

vkgraphy=${VKGRAPHY:-./build/vkgraphy}
if [ ! -x "$vkgraphy" ]; then
  echo "error: $vkgraphy not found: build vkgraphy first (./setup.sh)" >&2
  exit 1
fi
lvp=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f "$lvp" ]; then
  export VK_DRIVER_FILES=$lvp
fi
export LP_NUM_THREADS=${LP_NUM_THREADS:-$(nproc)}

work=build/bench/peers
mkdir -p "$work"
resnet50=build/bench/resnet50.onnx
if [ ! -f "$resnet50" ]; then
  echo "Generating $resnet50" >&2
  /usr/bin/python3 bench/models/make_resnet50.py "$resnet50.tmp"
  mv "$resnet50.tmp" "$resnet50"
fi

# shellcheck source=bench/peers_venv.sh
. bench/peers_venv.sh
peers_venv

exec "$PEERS_PY" bench/peers.py run --vkgraphy "$vkgraphy" --work "$work" --resnet50 "$resnet50" \
  --transformer tests/models/vk/transformer.onnx ${args[@]+"${args[@]}"}
