#!/usr/bin/env bash
# The GPU run: every measurement and test that needs a real GPU, in a few prepared parts, each short
# enough for one call on a GPU machine that is lent briefly. Run there from the checkout's root, with
# the vkgraphy bundle's launcher (which puts vkgraphy and the test binaries on PATH and points the
# Vulkan loader at the NVIDIA driver) and what bench/gpu_prepare.sh PART made here beside it:
#
#   bash .gpu/gpu-run.sh 'bench/gpu.sh PART [STEP...]'
#
#   bench   device, peak (the device's arithmetic ceilings: fp32 and fp16 multiply-adds, cooperative
#           matrices from registers and from shared memory, through VK_KHR_cooperative_matrix where the
#           device has it), gemm4096 (every MatMul tactic and precision at 4096^3, timestamps;
#           GEMM_FILTER: globs of the tactics to run, comma-separated), gemm4096-nv (the peaks and the
#           tensor-core tactics again through VK_NV_cooperative_matrix), cublas (torch_baseline.py matmul: fp32 with TF32 off, and fp16),
#           peers-resnet50 (vkgraphy fp32 and fp16, ncnn's Vulkan backend converted there by pnnx,
#           ONNX Runtime), torch-resnet50 (onnx2torch), tactics (the tactic bench's built-in GEMM
#           and Conv cases)
#   tests   device, unit (the unit tests, validation layer on), node (ONNX 1.12's node tests on
#           Vulkan), node23 (the opset 18-23 node tests of tests/requirements.txt's onnx, carried),
#           cli (the model, engine-file and measurement CLI tests, then again forcing staging);
#           named only: conformance (the tactic conformance tests of the tactics CONFORMANCE_FILTER
#           names, default gemm, validation layer on: new variants without the whole unit run; the
#           tensor-core ones through VK_KHR_cooperative_matrix where the device has it), conformance-nv
#           (the same through VK_NV_cooperative_matrix)
#   models  device, peers-ocr (PP-OCRv4 det and rec and the transformer: vkgraphy, ncnn from the
#           carried conversions, ONNX Runtime; PEERS_MODELS and PEERS_RUNTIMES: subsets), profile-ocr
#           (the per-layer device times and tactics of the det and rec engines peers-ocr built, fp32
#           and fp16: the first run had det fp32 at 3.6x its fp16 engine), paths-ocr (the fp32
#           engines' latency and host overhead with the device's memory path, resizable BAR on the
#           H200, and with staging forced: which way the inputs and outputs should travel),
#           torch-ocr (the same models through onnx2torch), recurrent (each recurrent tactic alone on
#           a bidirectional LSTM of ddddocr's shape, bench/models/make_lstm.py: one dispatch per step
#           against one workgroup per direction)
#   iree    device, peers-iree (PP-OCRv4 det and rec and the transformer on IREE's Vulkan HAL, from
#           the modules gpu_prepare.sh compiled for Ampere, beside vkgraphy fp32 and ONNX Runtime)
#
# Naming STEPs runs only those (a rerun of what an earlier call left out). Every step has a time
# limit, and the part stops starting steps once GPU_DEADLINE seconds (default 540) have passed, so
# that it ends inside one call; a step left out or over its limit is reported, never silent. A step
# with less than GPU_MIN_STEP_S seconds (default 20) left before the deadline is not started.
# IREE's compiler does not travel (an 84 MB wheel, more than the machine receives with the
# checkout): the iree part runs modules compiled here; elsewhere iree-vulkan is reported skipped,
# saying so.
#
# Writes $OUT/PART.log (everything) and $OUT/PART.summary (the step results and the figures: the
# PEER, TORCH and tactic-bench lines), where OUT defaults to build/gpu. docs/bench.md says where
# the figures go.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

part=${1:-}
shift || true
extra=()
case "$part" in
  bench) all=(device peak gemm4096 gemm4096-nv cublas peers-resnet50 torch-resnet50 tactics) ;;
  tests) all=(device unit node node23 cli) extra=(conformance conformance-nv) ;;
  models) all=(device peers-ocr profile-ocr paths-ocr torch-ocr recurrent) ;;
  iree) all=(device peers-iree) ;;
  *) echo "usage: bench/gpu.sh bench|tests|models|iree [STEP...]" >&2; exit 2 ;;
esac
steps=("${@:-${all[@]}}")
for s in "${steps[@]}"; do
  [[ " ${all[*]} ${extra[*]} " == *" $s "* ]] ||
    { echo "error: part $part has no step '$s' (${all[*]} ${extra[*]})" >&2; exit 2; }
done

OUT=${OUT:-build/gpu}
mkdir -p "$OUT"
log=$OUT/$part.log
summary=$OUT/$part.summary
: >"$log"
: >"$summary"
carry=.gpu-carry/$part
deadline=$((SECONDS + ${GPU_DEADLINE:-540}))
min_step=${GPU_MIN_STEP_S:-20}
py=$(command -v python3)

note() { echo "$*" | tee -a "$log" >>"$summary"; }
command -v vkgraphy >/dev/null || { note "error: vkgraphy is not on PATH (run through the bundle's gpu-run.sh)"; exit 1; }
# NVIDIA's Vulkan ICD manifest names libGLX_nvidia.so.0, which in a headless container returns no
# vkCreateInstance ("loader_scanned_icd_add: Could not get 'vkCreateInstance'"; seen on the H200
# machine, driver 580, 2026-11-26); the same driver's EGL library serves Vulkan there.
if ! vkgraphy inspect device >/dev/null 2>&1; then
  for lib in /usr/local/nvidia/lib64/libEGL_nvidia.so.0 /usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.0 \
             /usr/lib64/libEGL_nvidia.so.0 /usr/lib/libEGL_nvidia.so.0; do
    [ -f "$lib" ] || continue
    icd=/tmp/vkg-nvidia-egl-icd.json
    printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$lib" >"$icd"
    if VK_DRIVER_FILES=$icd vkgraphy inspect device >/dev/null 2>&1; then
      export VK_DRIVER_FILES=$icd
      note "note: Vulkan through $lib (the GLX ICD gave no instance here)"
    fi
    break
  done
fi
# The unit test that reads vkgraphy's files back with numpy: this image's Python has numpy, and no
# Debian /usr/bin/python3 with it.
export VKGRAPHY_NUMPY_PYTHON=${VKGRAPHY_NUMPY_PYTHON:-$(command -v python3)}
# What the figures need beside them: when, on what, from which commit (gpu_prepare.sh records it).
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
note "GPU RUN part=$part date=$(date -u +%Y-%m-%dT%H:%M:%SZ) gpu=${gpu:-unknown} $(cat "$carry/source.txt" 2>/dev/null || echo "commit=unknown")"

# run_step NAME LIMIT_S CMD...: CMD's output into the log, its figures into the summary (all of
# it with SUMMARY_ALL=1).
run_step() {
  local name=$1 limit=$2 pattern='^(PEER|TORCH) |^\| |^# (devices|Speed)|^(MatMul|Conv|DWConv|ConvT|Mul|Peak) |Latency \(|Host overhead|memory path|^device:|ONNX node tests|PASSED|FAILED|^Ran |^OK'
  [ -z "${SUMMARY_ALL:-}" ] || pattern=.
  shift 2
  local left=$((deadline - SECONDS))
  if [ "$left" -lt "$min_step" ]; then
    note "STEP $name skipped=out of time (GPU_DEADLINE); rerun: bench/gpu.sh $part $name"
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  echo "== $name (limit $limit s): $*" >>"$log"
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@" >"$OUT/step.out" 2>&1
  rc=$?
  cat "$OUT/step.out" >>"$log"
  grep -E "$pattern" "$OUT/step.out" >>"$summary"
  rm -f "$OUT/step.out"
  note "STEP $name rc=$rc seconds=$((SECONDS - t0))$([ "$rc" = 124 ] && echo " (over its $limit s limit)")"
}

# unit_shards N LIMIT_S: the unit tests in N shards at once (one run on the GPU took more than five
# minutes, most of it compiling pipelines on the CPU, which has 16 cores there), each under its own
# time limit and line-buffered into its own file, so that a shard over its limit still shows the
# test it was in. The log gets every shard's output; the summary its count, failures and verdict.
unit_shards() {
  local n=$1 limit=$2 i rc=0 pids=() left=$((deadline - SECONDS)) t0=$SECONDS
  if [ "$left" -lt "$min_step" ]; then
    note "STEP unit skipped=out of time (GPU_DEADLINE); rerun: bench/gpu.sh $part unit"
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  local buffer=(); command -v stdbuf >/dev/null && buffer=(stdbuf -oL -eL)
  echo "== unit (limit $limit s, $n shards): vkgraphy_unit_tests" >>"$log"
  for ((i = 0; i < n; i++)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout --kill-after=10 "$limit" "${buffer[@]}" \
      vkgraphy_unit_tests >"$OUT/unit.$i.out" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    local r=$?
    [ "$r" = 0 ] || rc=$r
    {
      echo "-- unit shard $i/$n: rc=$r, $(grep -c '^\[       OK \]' "$OUT/unit.$i.out") passed"
      grep -E '^\[  FAILED  \]|^\[  PASSED  \]|^\[==========\] [0-9]+ tests' "$OUT/unit.$i.out"
      [ "$r" != 124 ] && [ "$r" != 137 ] ||
        echo "   over the limit in: $(grep '^\[ RUN' "$OUT/unit.$i.out" | tail -1 | grep . || echo '(no test started)')"
    } | tee -a "$summary" >>"$log"
    cat "$OUT/unit.$i.out" >>"$log"
    rm -f "$OUT/unit.$i.out"
  done
  note "STEP unit rc=$rc seconds=$((SECONDS - t0))$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo " (over its $limit s limit)")"
}

# Wheels carried by gpu_prepare.sh, into a folder on PYTHONPATH.
if [ -d "$carry/wheels" ] && ls "$carry"/wheels/*.whl >/dev/null 2>&1; then
  if "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/vkg-site \
      "$carry"/wheels/*.whl >>"$log" 2>&1; then
    export PYTHONPATH=/tmp/vkg-site${PYTHONPATH:+:$PYTHONPATH}
  else
    note "error: installing the carried wheels failed (see $part.log)"
  fi
fi

# bench/peers.py on the GPU, every runtime, in a work folder outside the checkout that starts from
# the carried one (models and conversions): what it makes there never travels back
# (GPU_PEERS_WORK: another folder, for the tests).
work=${GPU_PEERS_WORK:-/tmp/vkg-peers}
mkdir -p "$work"
[ ! -d "$carry/peers" ] || cp -r "$carry/peers/." "$work/"
# Every runtime warms up for PEERS_WARMUP_MS before it is timed: a GPU raises its clock only after
# tens of milliseconds of work, and the 2 warm-up inferences of a 1 ms model are not that.
export PEERS_WARMUP_MS=${PEERS_WARMUP_MS:-500}
peers=("$py" bench/peers.py run --vkgraphy "$(command -v vkgraphy)" --work "$work"
       --transformer tests/models/vk/transformer.onnx)
resnet50=$work/resnet50.onnx
# peers_inputs MODEL N: into the array `inputs`, the input peers-ocr ran MODEL on (the same data every
# iteration), else N iterations of random data.
peers_inputs() {
  inputs=(--iterations "$2")
  [ ! -f "$work/artifacts/$1/inputs.json" ] || inputs=(--load-inputs "$work/artifacts/$1/inputs.json")
}
make_resnet50() {
  [ -f "$resnet50" ] || "$py" bench/models/make_resnet50.py "$resnet50" >>"$log" 2>&1 ||
    note "error: bench/models/make_resnet50.py failed (see $part.log)"
}

for step in "${steps[@]}"; do
  case "$step" in
    device) SUMMARY_ALL=1 run_step device 60 vkgraphy inspect device ;;
    peak) run_step peak 60 vkgraphy_tactic_bench --no-reference --peak --case Peak --samples 10 ;;
    gemm4096)
      run_step gemm4096 200 vkgraphy_tactic_bench --no-reference --matmul 4096 --case 'MatMul 4096^3' --samples 10 \
        --filter "${GEMM_FILTER:-*}" ;;
    gemm4096-nv)
      # The tensor-core tactics again through VK_NV_cooperative_matrix, where the device also has KHR's
      # (gemm4096 and peak take KHR's then): the two extensions side by side, with NV's peaks.
      run_step peak-nv 60 vkgraphy_tactic_bench --no-reference --peak --case Peak --samples 10 \
        --vk-disable-cooperative-matrix-khr
      run_step gemm4096-nv 120 vkgraphy_tactic_bench --no-reference --matmul 4096 --case 'MatMul 4096^3' --samples 10 \
        --filter 'gemm.coopmat*' --vk-disable-cooperative-matrix-khr ;;
    cublas) run_step cublas 90 "$py" bench/torch_baseline.py matmul --size 4096 ;;
    peers-resnet50)
      make_resnet50
      run_step peers-resnet50 300 "${peers[@]}" --models resnet50 --resnet50 "$resnet50" ;;
    torch-resnet50)
      make_resnet50
      run_step torch-resnet50 120 "$py" bench/torch_baseline.py model resnet50 "$resnet50" --warmup-ms "$PEERS_WARMUP_MS" ;;
    tactics) run_step tactics 180 vkgraphy_tactic_bench --no-reference --samples 10 ;;
    unit) unit_shards 8 300 ;;
    conformance)
      run_step conformance 150 env VKGRAPHY_VK_VALIDATION=1 vkgraphy_unit_tests --gtest_brief=1 \
        --gtest_filter="*TacticConformance*${CONFORMANCE_FILTER:-gemm}*:CooperativeMatrix*" ;;
    conformance-nv)
      # The same through VK_NV_cooperative_matrix where the device also has KHR's.
      run_step conformance-nv 150 env VKGRAPHY_VK_VALIDATION=1 VKGRAPHY_TEST_DISABLE_COOPERATIVE_MATRIX_KHR=1 \
        vkgraphy_unit_tests --gtest_brief=1 --gtest_filter="*TacticConformance*${CONFORMANCE_FILTER:-gemm}*" ;;
    node)
      run_step node 150 vkgraphy_node_tests --backend vk --dir "$VKG_NODE_TESTS" \
        --exceptions tests/node/known_exceptions_vk.txt ;;
    node23)
      if [ -f "$carry/node-opset23.tar.xz" ]; then
        mkdir -p /tmp/vkg-node23 && tar -C /tmp/vkg-node23 -xJf "$carry/node-opset23.tar.xz"
        run_step node23 150 vkgraphy_node_tests --backend vk --dir /tmp/vkg-node23/node \
          --exceptions tests/node/known_exceptions_opset23.txt
      else
        note "STEP node23 skipped=no $carry/node-opset23.tar.xz (bench/gpu_prepare.sh tests makes it)"
      fi ;;
    cli)
      # The CLI tests' virtual environment is only their Python with onnx: this machine's (a
      # wrapper, not a link: a link to a venv's interpreter loses the venv).
      mkdir -p /tmp/vkg-venv/bin && rm -f /tmp/vkg-venv/bin/python
      printf '#!/bin/sh\nexec "%s" "$@"\n' "$py" >/tmp/vkg-venv/bin/python && chmod +x /tmp/vkg-venv/bin/python
      classes=(test_vk.TestModels test_vk.TestEngineFiles test_vk.TestCompareAndMeasure test_vk.TestMemoryPath)
      cli=(env -C tests/cli VKGRAPHY_BIN="$(command -v vkgraphy)" VKGRAPHY_SOURCE_DIR="$PWD"
           VKGRAPHY_MODELS="$PWD/tests/models" VKGRAPHY_VENV=/tmp/vkg-venv)
      run_step cli 150 "${cli[@]}" "$py" -m unittest "${classes[@]}"
      run_step cli-staging 150 "${cli[@]}" VKGRAPHY_VK_FORCE_STAGING=1 "$py" -m unittest "${classes[@]}" ;;
    peers-ocr)
      run_step peers-ocr 360 "${peers[@]}" --models "${PEERS_MODELS:-ppocrv4-det,ppocrv4-rec,transformer}" \
        ${PEERS_RUNTIMES:+--runtimes "$PEERS_RUNTIMES"} ;;
    peers-iree)
      # The flags gpu_prepare.sh compiled the carried modules with: peers.py then finds them made.
      run_step peers-iree 300 env PEERS_IREE_COMPILE_FLAGS="$(cat "$carry/iree-flags" 2>/dev/null)" "${peers[@]}" \
        --models ppocrv4-det,ppocrv4-rec,transformer --runtimes vkgraphy-fp32,iree-vulkan,onnxruntime-cpu ;;
    profile-ocr)
      for m in ppocrv4-det ppocrv4-rec; do
        for tag in fp32 fp16; do
          engine=$work/artifacts/$m/$tag.engine
          if [ -f "$engine" ]; then
            # The peers' own run first (its latency lines: device time against host overhead; the
            # first GPU run's rec fp32 took 7.5 ms there and 2.8 ms here), then the profile on the
            # peers' input.
            grep -h "Latency\|Host overhead" "$work/artifacts/$m/$tag.run.log" 2>/dev/null | sed "s/^/peers $m $tag: /" |
              tee -a "$log" >>"$summary"
            peers_inputs "$m" 10
            SUMMARY_ALL=1 run_step "profile-$m-$tag" 60 vkgraphy run "$engine" --vk --profile --warm-up 2 \
              --warm-up-ms "$PEERS_WARMUP_MS" "${inputs[@]}"
          else
            note "STEP profile-$m-$tag skipped=no $engine (peers-ocr builds it)"
          fi
        done
      done ;;
    paths-ocr)
      for m in ppocrv4-det ppocrv4-rec; do
        engine=$work/artifacts/$m/fp32.engine
        if [ ! -f "$engine" ]; then
          note "STEP paths-$m skipped=no $engine (peers-ocr builds it)"
          continue
        fi
        peers_inputs "$m" 20
        for path in default staging; do
          flags=()
          [ "$path" = default ] || flags=(--vk-force-staging)
          run_step "paths-$m-$path" 60 vkgraphy run "$engine" --vk ${flags[@]+"${flags[@]}"} --warm-up 2 \
            --warm-up-ms "$PEERS_WARMUP_MS" "${inputs[@]}" -v
        done
      done ;;
    recurrent)
      lstm=$work/lstm512.onnx
      [ -f "$lstm" ] || "$py" bench/models/make_lstm.py "$lstm" >>"$log" 2>&1 ||
        note "error: bench/models/make_lstm.py failed (see $part.log)"
      for t in recurrent.steps recurrent.workgroup32 recurrent.workgroup128; do
        for v in f32 f16acc32; do
          flags=()
          [ "$v" = f32 ] || flags=(--fp16)
          run_step "recurrent-$t.$v" 60 vkgraphy run "$lstm" --vk --ref ${flags[@]+"${flags[@]}"} --tactics-allow "$t.$v" \
            --atol 2e-3 --rtol 2e-3 --iterations 50 --warm-up-ms "$PEERS_WARMUP_MS"
        done
      done ;;
    torch-ocr)
      for m in ppocrv4-det ppocrv4-rec transformer; do
        f=$work/models/$m.onnx
        [ "$m" = transformer ] && f=tests/models/vk/transformer.onnx
        run_step "torch-$m" 60 "$py" bench/torch_baseline.py model "$m" "$f" --warmup-ms "$PEERS_WARMUP_MS"
      done ;;
  esac
done
echo "bench/gpu.sh $part: $summary"
