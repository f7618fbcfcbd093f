#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: installs the dependencies (Debian packages, ONNX
# Runtime from npm), builds Parity, installs the `parity` command into /usr/local, and runs
# Parity's main job: ONNX Runtime and the reference backend compared on an example model.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=${PARITY_BUILD_DIR:-$ROOT/build}
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

scripts/install-deps.sh
scripts/install-onnxruntime.sh 1.30.0 deps/onnxruntime-1.30.0 >/dev/null

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)" --target parity
$SUDO cmake --install "$BUILD"

echo
echo "== parity run examples/tiny_cnn.onnx --onnxrt --pluginref =="
parity run examples/tiny_cnn.onnx --onnxrt --pluginref --atol 1e-5 --rtol 1e-4
