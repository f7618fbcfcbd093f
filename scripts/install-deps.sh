#!/usr/bin/env bash
# Installs the Debian packages Parity builds and tests with. Does nothing when they are all
# present already, so the other scripts can call it every time.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev libopenblas-dev
  libgtest-dev libbenchmark-dev
  libsleef-dev libmpfr-dev
  pybind11-dev python3-dev python3-numpy python3-pytest python3-onnx libonnx-testdata
  python3-distributed python3-matplotlib
  python3-pip python3-venv python3-setuptools python3-wheel
  nodejs npm chromium clang-format
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from elsewhere than Debian; count them present if they run.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<< "${missing[*]}"
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
