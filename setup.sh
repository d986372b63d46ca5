#!/usr/bin/env bash
# Installs vkgraphy's dependencies from Debian 12 packages and builds it into ./build.
#   ./setup.sh            install (as root, or through sudo) and build
#   SKIP_APT=1 ./setup.sh build only
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslang-tools glslang-dev spirv-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libcli11-dev nlohmann-json3-dev googletest libgtest-dev libgmock-dev
  python3-onnx python3-numpy
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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
