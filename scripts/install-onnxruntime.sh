#!/bin/sh
# Installs ONNX Runtime's shared library from the npm package onnxruntime-node, which is the
# only source of a prebuilt Linux library reachable here, and prints the library's path.
#
#   scripts/install-onnxruntime.sh VERSION DEST
#   scripts/install-onnxruntime.sh 1.30.0 deps/onnxruntime-1.30.0
#
# --ignore-scripts is required: the package's postinstall script downloads CUDA provider
# libraries from NuGet, which fails offline and makes npm roll the whole install back.
# Running it again when the library is already there does nothing but print the path.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 VERSION DEST   (e.g. $0 1.30.0 deps/onnxruntime-1.30.0)" >&2
  exit 2
fi
version=$1
dest=$2

# Newer packages ship bin/napi-v6/linux/x64/libonnxruntime.so.1; older ones (1.17 and before)
# ship bin/napi-v3/linux/x64/libonnxruntime.so.1.X.Y. Prints the first library found.
find_library() {
  pkg="$dest/node_modules/onnxruntime-node/bin"
  for f in "$pkg"/napi-v*/linux/x64/libonnxruntime.so.1 \
           "$pkg"/napi-v*/linux/x64/libonnxruntime.so.1.*; do
    if [ -f "$f" ]; then
      echo "$f"
      return 0
    fi
  done
  return 1
}

if lib=$(find_library); then
  echo "$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm is needed to install ONNX Runtime (Debian: apt-get install npm)" >&2
  exit 1
fi

mkdir -p "$dest"
if [ ! -f "$dest/package.json" ]; then
  echo '{"name":"parity-onnxruntime","private":true}' > "$dest/package.json"
fi
(cd "$dest" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
  "onnxruntime-node@$version" >&2)

if ! lib=$(find_library); then
  echo "error: onnxruntime-node@$version installed into $dest but it holds no Linux x64" \
       "libonnxruntime.so (looked under $dest/node_modules/onnxruntime-node/bin)" >&2
  exit 1
fi
echo "$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
