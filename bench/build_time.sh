#!/usr/bin/env bash
# What an engine build costs on this machine's device (lavapipe in CI), and what the builder's
# cost model for CPU devices saves (BuilderConfig::prune_for_device, docs/builder.md):
#
#   bench/build_time.sh [times|prune|debug|jobs|all] (default all; from the repository root)
#
#   times  PP-OCRv4 det at 1x3x320x320 (from the rapidocr wheel ./setup.sh downloads): a cold build
#          (empty Mesa shader cache and timing cache) in fp32 and fp16, with the cost model and
#          without (--no-prune, as before it), and with the cost model but the driver specializing
#          the shaders (--vk-disable-host-specialization, as before host specialization), then a warm
#          rebuild of each (Mesa's shader cache and the build's timing cache present)
#   prune  the check of the cost model: det and rec, in fp32 and in fp16, with every tactic timed
#          (optimization level 5) with --no-prune, and again with the cost model; per layer, the
#          fastest candidate of the first build against the fastest of those the second kept, in
#          the first build's measurements, summed over the layers: the engine time pruning gives up
#   debug  `debug build --until 20` on det (a check that always passes), with a warm Mesa cache,
#          and again with --vk-disable-host-specialization
#   jobs   the same one iteration at a time and side by side (--jobs 2 --devices 0 0: two jobs on
#          lavapipe's one device, a core each)
#   workers  det cold in fp32 and fp16 with the compile workers (the default: one per core beyond the
#          first) and without (--compile-workers 0), each engine's first run in a process of its own
#          (compiling its pipelines ahead with workers, or not), and the same without texel views of
#          one class (--vk-disable-canonical-texel-views), with the Mesa cache entries each made
#
# Writes its figures to stdout; docs/bench.md ("Build time on lavapipe") records them.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/build/vkgraphy
PY=/usr/bin/python3
what=${1:-all}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The models, from the wheel tests/model_wheels.txt names (./setup.sh downloads it into .venv).
wheel=$(ls "$PWD"/.venv/model-wheels/rapidocr_onnxruntime-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "error: no rapidocr wheel in .venv/model-wheels (run ./setup.sh)" >&2; exit 1; }
(cd "$TMP" && unzip -q -j "$wheel" 'rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx' \
  'rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx')
DET=("$TMP/ch_PP-OCRv4_det_infer.onnx" --input-shapes "x:[1,3,320,320]")
REC=("$TMP/ch_PP-OCRv4_rec_infer.onnx" --input-shapes "x:[1,3,48,320]")

# build NAME MESA_CACHE TIMING_CACHE MODEL... FLAGS...: one build, its wall seconds and pipelines.
build() {
  local name=$1 mesa=$2 timing=$3
  shift 3
  local t0 t1 log=$TMP/$name.log
  t0=$(date +%s.%N)
  MESA_SHADER_CACHE_DIR=$mesa VKGRAPHY_CACHE_DIR=$TMP/vkcache "$BIN" convert "$@" -o "$TMP/$name.engine" \
    --load-timing-cache "$timing" --save-timing-cache "$timing" >"$log" 2>&1
  t1=$(date +%s.%N)
  printf '%-34s %7.1f s  %s\n' "$name" "$(echo "$t1 - $t0" | bc)" \
    "$(grep -o '[0-9]* tactic(s) timed\|[0-9]* pruned for the device\|[0-9]* pipelines' "$log" | paste -sd, -)"
}

# cold_build KEY MODEL_AND_FLAGS...: the build det-KEY-cold from an empty Mesa cache ($TMP/mesa-KEY)
# and timing cache ($TMP/timing-KEY.json), which stay for a warm build after it.
cold_build() {
  local key=$1
  shift
  rm -rf "$TMP/mesa-$key" "$TMP/timing-$key.json"
  mkdir -p "$TMP/mesa-$key"
  build "det-$key-cold" "$TMP/mesa-$key" "$TMP/timing-$key.json" "$@"
}

times() {
  for prec in fp32 fp16; do
    local f=()
    [ "$prec" = fp32 ] || f=(--fp16)
    for model in pruned unpruned driver-spec; do
      local p=()
      [ "$model" != unpruned ] || p=(--no-prune)
      [ "$model" != driver-spec ] || p=(--vk-disable-host-specialization)
      cold_build "$prec-$model" "${DET[@]}" "${f[@]}" "${p[@]}"
      build "det-$prec-$model-warm" "$TMP/mesa-$prec-$model" "$TMP/timing-$prec-$model.json" "${DET[@]}" "${f[@]}" \
        "${p[@]}"
    done
  done
}

prune() {
  for prec in fp32 fp16; do
    local f=()
    [ "$prec" = fp32 ] || f=(--fp16)
    for m in det rec; do
      local model=("${DET[@]}")
      [ "$m" = det ] || model=("${REC[@]}")
      for mode in all kept; do
        local p=()
        [ "$mode" = kept ] || p=(--no-prune)
        MESA_SHADER_CACHE_DIR=$TMP/mesa-prune VKGRAPHY_CACHE_DIR=$TMP/vkcache "$BIN" convert "${model[@]}" "${f[@]}" \
          -o "$TMP/p.engine" --builder-optimization-level 5 "${p[@]}" --save-tactics "$TMP/$m-$mode.json" >/dev/null 2>&1
      done
      prune_check "$m $prec" "$TMP/$m-all.json" "$TMP/$m-kept.json"
    done
  done
}

# prune_check NAME ALL_REPLAY KEPT_REPLAY: the engine time the cost model gives up, in the first
# build's measurements.
prune_check() {
  "$PY" - "$@" <<'EOF'
import json, sys
name, every, kept = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
kept_names = {l["name"]: {c["tactic"] for c in l["candidates"]} for l in kept["layers"]}
best_all = best_kept = 0.0
worst = (1.0, "")
for layer in every["layers"]:
    timed = [c for c in layer["candidates"] if c.get("median_ns")]
    if not timed:
        continue
    cost = lambda c: c["median_ns"] + c.get("reformat_ns", 0)
    a = min(map(cost, timed))
    k_set = [c for c in timed if c["tactic"] in kept_names.get(layer["name"], ())]
    k = min(map(cost, k_set)) if k_set else a
    best_all += a
    best_kept += k
    if k / a > worst[0]:
        worst = (k / a, layer["name"])
print(f"{name}: fastest of every candidate {best_all / 1e6:.2f} ms summed over the layers, fastest of the "
      f"kept {best_kept / 1e6:.2f} ms (x{best_kept / best_all:.3f}); worst layer x{worst[0]:.2f} {worst[1][:60]}")
EOF
}

# debug_build [FLAGS...]: debug build --until 20 on det, after a build that warms Mesa's cache.
debug_build() {
  mkdir -p "$TMP/mesa-debug"
  local convert_flags=()  # the flags that change what is compiled warm the cache too
  [ "${1:-}" != --vk-disable-host-specialization ] || convert_flags=("$1")
  MESA_SHADER_CACHE_DIR=$TMP/mesa-debug "$BIN" convert "${DET[@]}" -o "$TMP/warm.engine" "${convert_flags[@]}" \
    >/dev/null 2>&1
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$TMP" && MESA_SHADER_CACHE_DIR=$TMP/mesa-debug VKGRAPHY_CACHE_DIR=$TMP/vkcache "$BIN" debug build "${DET[@]}" \
    --until 20 --check true "$@" >"$TMP/debug.log" 2>&1) || true
  t1=$(date +%s.%N)
  printf 'debug build --until 20 (det, warm Mesa cache%s): %.1f s, %s\n' "${1:+, $*}" "$(echo "$t1 - $t0" | bc)" \
    "$(grep -c 'Iteration [0-9]* |' "$TMP/debug.log" || true) iterations logged"
}

# first_run NAME MESA ENGINE [FLAGS...]: an engine's first run in a process of its own (with the
# environment RUN_ENV holds), and Mesa's new entries.
RUN_ENV=()
first_run() {
  local name=$1 mesa=$2 engine=$3
  shift 3
  local before t0 t1
  before=$(find "$mesa" -type f | wc -l)
  t0=$(date +%s.%N)
  env "${RUN_ENV[@]}" MESA_SHADER_CACHE_DIR="$mesa" "$BIN" run "$engine" --vk "${DET[@]:1}" "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  printf '%-34s %7.1f s  %d new cache entries\n' "$name" "$(echo "$t1 - $t0" | bc)" \
    "$(( $(find "$mesa" -type f | wc -l) - before ))"
}

workers() {
  for prec in fp32 fp16; do
    local f=()
    [ "$prec" = fp32 ] || f=(--fp16)
    for mode in workers none no-canonical; do
      local w=() v=()
      RUN_ENV=()
      [ "$mode" = workers ] || w=(--compile-workers 0) RUN_ENV=(VKGRAPHY_COMPILE_WORKERS=0)
      [ "$mode" != no-canonical ] || v=(--vk-disable-canonical-texel-views)
      local key=w-$prec-$mode
      cold_build "$key" "${DET[@]}" "${f[@]}" "${w[@]}" "${v[@]}"
      printf '%-34s %7d cache entries\n' "  (after the build)" "$(find "$TMP/mesa-$key" -type f | wc -l)"
      first_run "  first run" "$TMP/mesa-$key" "$TMP/det-$key-cold.engine" "${v[@]}"
    done
  done
}

case "$what" in
  times) times ;;
  prune) prune ;;
  debug) debug_build; debug_build --vk-disable-host-specialization ;;
  jobs) debug_build; debug_build --jobs 2 --devices 0 0 ;;
  workers) workers ;;
  all) times; prune; debug_build; debug_build --vk-disable-host-specialization; debug_build --jobs 2 --devices 0 0
       workers ;;
  *) echo "usage: bench/build_time.sh [times|prune|debug|jobs|workers|all]" >&2; exit 2 ;;
esac
