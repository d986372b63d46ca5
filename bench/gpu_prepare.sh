#!/usr/bin/env bash
# Prepares here, where PyPI is reachable, what one part of the GPU run (bench/gpu.sh PART) needs
# beside the vkgraphy bundle, for a GPU machine that has Python 3.12 with PyTorch, onnx and
# onnxruntime but no package registry:
#
#   bench/gpu_prepare.sh PART        (from the repository root; PART: bench, tests or models)
#
# writes .gpu-carry/PART, which git ignores (.git/info/exclude):
#   bench   wheels/: onnx2torch, and ncnn and pnnx at bench/peers_requirements.txt's versions
#           (ResNet-50 is generated and converted on the GPU machine)
#   tests   node-opset23.tar.xz: the opset 18-23 node tests of tests/requirements.txt's onnx (from
#           .venv; the GPU machine's own onnx is another version, with other tests)
#   models  wheels/: onnx2torch and ncnn; peers/: the static-shape PP-OCRv4 det and rec and the
#           ncnn conversions of them and of the transformer (bench/peers.py prepare), so that
#           pnnx need not travel as well
#   iree    wheels/: IREE's runtime (without its Tracy build); peers/: PP-OCRv4 det and rec and
#           the IREE modules of them and of the transformer, compiled here for NVIDIA's Ampere
#           SPIR-V environment (bench/peers.py prepare with PEERS_IREE_COMPILE_FLAGS, which the
#           GPU run sets alike, so that it finds them made)
# and prints what it holds. Each part stays under what the GPU machine receives (64 MiB with the
# checkout and the bundle), which is why ResNet-50 and the OCR models are separate parts, why
# IREE's compiler (an 84 MB wheel) does not travel (its modules do) and why ResNet-50 runs on no
# IREE there (its module holds 100 MB of weights).
set -euo pipefail
cd "$(dirname "$0")/.."

part=${1:-}
case "$part" in
  bench|tests|models|iree) ;;
  *) echo "usage: bench/gpu_prepare.sh bench|tests|models|iree" >&2; exit 2 ;;
esac
ONNX2TORCH=onnx2torch==1.5.15
# IREE's Vulkan target for the GPU machine's NVIDIA H100/H200 (Hopper): the compiler knows no Hopper
# Vulkan target, and Ampere's SPIR-V environment is a subset of what Hopper has.
GPU_IREE_FLAGS="--iree-vulkan-target=ampere"
dest=.gpu-carry/$part
mkdir -p .gpu-carry
grep -qxF "/.gpu-carry/" .git/info/exclude 2>/dev/null || echo "/.gpu-carry/" >>.git/info/exclude
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"

# shellcheck source=bench/peers_venv.sh
. bench/peers_venv.sh
peers_venv

pinned() { grep -E "^$1==" bench/peers_requirements.txt | head -1; }
wheels() {  # wheels SPEC...: binary wheels for CPython 3.12 on manylinux x86-64
  mkdir -p "$dest.tmp/wheels"
  "$PEERS_PY" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$dest.tmp/wheels" "$@"
}

case "$part" in
  bench)
    wheels "$ONNX2TORCH" "$(pinned ncnn)" "$(pinned pnnx)" ;;
  tests)
    node=
    for d in .venv/lib/python3*/site-packages/onnx/backend/test/data/node; do [ -d "$d" ] && node=$d && break; done
    [ -n "$node" ] || { echo "error: no node tests in .venv (./setup.sh makes it)" >&2; exit 1; }
    tar -C "$(dirname "$node")" -cJf "$dest.tmp/node-opset23.tar.xz" node ;;
  models)
    wheels "$ONNX2TORCH" "$(pinned ncnn)"
    work=build/bench/peers
    "$PEERS_PY" bench/peers.py prepare --work "$work" --models ppocrv4-det,ppocrv4-rec,transformer \
      --runtimes ncnn-vulkan
    for m in ppocrv4-det ppocrv4-rec; do
      mkdir -p "$dest.tmp/peers/models"
      cp "$work/models/$m.onnx" "$work/models/$m.onnx.source" "$dest.tmp/peers/models/"
    done
    for m in ppocrv4-det ppocrv4-rec transformer; do
      mkdir -p "$dest.tmp/peers/artifacts/$m/ncnn"
      cp "$work/artifacts/$m/model.sha256" "$dest.tmp/peers/artifacts/$m/"
      cp "$work/artifacts/$m/ncnn/model.ncnn.param" "$work/artifacts/$m/ncnn/model.ncnn.bin" \
        "$dest.tmp/peers/artifacts/$m/ncnn/"
    done ;;
  iree)
    wheels "$(pinned iree-base-runtime)"
    # The Tracy build of the runtime (two thirds of the wheel) is never loaded without IREE_PY_RUNTIME=tracy.
    for w in "$dest.tmp"/wheels/iree_base_runtime-*.whl; do
      "$PEERS_PY" - "$w" <<'PY'
import sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as src, zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as dst:
    for item in src.infolist():
        if "/_runtime_libs_tracy/" not in item.filename:
            dst.writestr(item, src.read(item))
PY
      mv "$w.tmp" "$w"
    done
    # Its own work folder, models copied from the lavapipe one: the modules there are for lavapipe.
    work=build/bench/peers-gpu-iree
    mkdir -p "$work"
    [ ! -d build/bench/peers/models ] || cp -r build/bench/peers/models "$work/"
    PEERS_IREE_COMPILE_FLAGS=$GPU_IREE_FLAGS "$PEERS_PY" bench/peers.py prepare --work "$work" \
      --models ppocrv4-det,ppocrv4-rec,transformer --runtimes iree-vulkan
    echo "$GPU_IREE_FLAGS" >"$dest.tmp/iree-flags"  # bench/gpu.sh runs peers.py with the same
    mkdir -p "$dest.tmp/peers/models"
    for m in ppocrv4-det ppocrv4-rec; do
      cp "$work/models/$m.onnx" "$work/models/$m.onnx.source" "$dest.tmp/peers/models/"
    done
    for m in ppocrv4-det ppocrv4-rec transformer; do
      mkdir -p "$dest.tmp/peers/artifacts/$m/iree"
      cp "$work/artifacts/$m/model.sha256" "$dest.tmp/peers/artifacts/$m/"
      cp "$work/artifacts/$m/iree/model.vmfb" "$work/artifacts/$m/iree/iree-flags.txt" "$dest.tmp/peers/artifacts/$m/iree/"
    done ;;
esac
echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!.gpu-carry' || echo "+changes") prepared=$(date -u +%Y-%m-%d)" \
  >"$dest.tmp/source.txt"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
find "$dest" -type f -printf '%s %p\n' | sort -k2 | awk '{printf "  %6.1f MB  %s\n", $1 / 1e6, $2}'
echo "bench/gpu_prepare.sh: $dest holds $(du -sm "$dest" | cut -f1) MB; on the GPU machine: bash .gpu/gpu-run.sh 'bench/gpu.sh $part'"
