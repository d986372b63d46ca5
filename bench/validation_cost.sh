#!/bin/sh
# What --validate-tactics costs at build time: each model is built with the
# same options with and without it, in this script, and the builder's own
# "Built engine in X s" figures are printed side by side with their ratio
# (validation adds one reference run and one device run per candidate). A
# first, unmeasured build per model warms the driver's shader cache (Mesa
# keeps compiled pipelines on disk), so that both measured builds find it alike.
#
#   bench/validation_cost.sh [LEVEL]    (builder optimization level, default 3; run from the repository root)
#
# Models: tests/models/vk/cnn.onnx and transformer.onnx, and PP-OCRv4 det at
# 1x3x320x320 from the rapidocr-onnxruntime wheel that ./setup.sh downloads
# into .venv/model-wheels. Uses build/vkgraphy on the default device.
set -eu
LEVEL=${1:-3}
ROOT=$(pwd)
BIN=$ROOT/build/vkgraphy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
WHEEL=$(ls "$ROOT"/.venv/model-wheels/rapidocr_onnxruntime-*.whl)
(cd "$TMP" && /usr/bin/python3 -m zipfile -e "$WHEEL" wheel > /dev/null)
DET=$(find "$TMP/wheel" -name 'ch_PP-OCRv4_det_infer.onnx' | head -1)

build_seconds() {
  "$BIN" convert "$@" -o "$TMP/e.engine" --builder-optimization-level "$LEVEL" 2>&1 |
    sed -n 's/.*Built engine in \([0-9.e+-]*\) s.*/\1/p'
}

printf '%-12s %12s %12s %8s\n' model plain_s validated_s ratio
for spec in "cnn:$ROOT/tests/models/vk/cnn.onnx" "transformer:$ROOT/tests/models/vk/transformer.onnx" \
            "det:$DET --input-shapes x:[1,3,320,320]"; do
  name=${spec%%:*}
  args=${spec#*:}
  # shellcheck disable=SC2086
  build_seconds $args > /dev/null
  # shellcheck disable=SC2086
  plain=$(build_seconds $args)
  # shellcheck disable=SC2086
  validated=$(build_seconds $args --validate-tactics)
  printf '%-12s %12s %12s %8s\n' "$name" "$plain" "$validated" \
    "$(echo "$plain $validated" | awk '{ printf "%.2fx", $2 / $1 }')"
done
