#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build folder
# (build-asan). With no argument: every C++ test (ctest) and the Python tests against the
# sanitized module. With arguments: only those test binaries, e.g. the loaders, io, statistics
# and comparator tests, which link only their own layers and so build in a fraction of the time
# (what CI runs):
#
#   scripts/sanitize.sh                                  # everything (hours on 2 cores)
#   scripts/sanitize.sh test_core test_onnx test_io test_stats test_comparator
#
# Any sanitizer report fails the run (halt_on_error, no recovery from UB).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${PARITY_ASAN_BUILD:-$ROOT/build-asan}
JOBS=${PARITY_JOBS:-$(nproc)}

scripts/install-deps.sh || exit 1
scripts/install-onnxruntime.sh 1.30.0 deps/onnxruntime-1.30.0 >/dev/null || exit 1
# -O1 -g1 rather than RelWithDebInfo's -O2 -g: the instrumented kernels are the bulk of the
# build, and at -O1 with line tables only a kernel file compiles in half the CPU time (measured
# on src/backend/ref/ops/activations.cc: 17.7 s against 34.8 s, release -O3 8.4 s), while the
# reports keep file:line stack traces. An existing build-asan/ keeps the flags it was made with.
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DPARITY_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null || exit 1
fi

# Leaks are reported too; ONNX Runtime's and protobuf's process-lifetime singletons are not
# Parity's (scripts/lsan-suppressions.txt). handle_segv=0: the containment tests' backends crash
# on purpose and their parent must see the signal (AddressSanitizer's handler would turn it
# into exit status 1); a real wild access still fails its test, without the sanitizer's trace.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:strict_string_checks=1:abort_on_error=0:handle_segv=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$ROOT/scripts/lsan-suppressions.txt
# The Python module is a shared library loaded by an unsanitized interpreter: the sanitizer
# runtimes must be preloaded, for pytest and for the Python children of `parity` (scripts,
# data loaders), which it starts as $PARITY_PYTHON. Leaks are not checked in Python's processes
# (the interpreter's own allocations at exit are not Parity's).
PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
mkdir -p "$BUILD"
printf '#!/bin/sh\nLD_PRELOAD="%s" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" exec /usr/bin/python3 "$@"\n' \
  "$PRELOAD" > "$BUILD/python3-sanitized"
chmod +x "$BUILD/python3-sanitized"
export PARITY_PYTHON=$BUILD/python3-sanitized
# Left out here, run by ./test.sh: the tests that bound a process's peak RSS, which under
# AddressSanitizer holds its shadow memory and quarantine (663 MiB where Parity's own is under
# 314), so the bound would measure the sanitizer.
RSS_BOUND_GTEST=CliLayerwise.MarkAllStaysInsideTheBudget
RSS_BOUND_PYTEST=tests/python/test_resources.py::test_large_constant_matmul_peaks_within_one_and_a_half_times_its_weights

if [ $# -gt 0 ]; then
  # The layer tests (tests/CMakeLists.txt, PARITY_LAYER_TESTS) build without the kernels; any
  # other test binary brings the `parity` executable and everything with it.
  nice cmake --build "$BUILD" -j"$JOBS" --target "$@" || exit 1
  status=0
  for t in "$@"; do
    echo "== $t (ASan + UBSan)"
    "$BUILD/tests/$t" --gtest_brief=1 --gtest_filter="-$RSS_BOUND_GTEST" || status=1
  done
  exit $status
fi

nice cmake --build "$BUILD" -j"$JOBS" || exit 1
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" -E "^$RSS_BOUND_GTEST\$"
ctest_status=$?
PYTHONPATH="$BUILD/python" PARITY_BUILD_DIR="$BUILD" PYTHONDONTWRITEBYTECODE=1 \
  "$PARITY_PYTHON" -m pytest tests/python -q -p no:cacheprovider --deselect "$RSS_BOUND_PYTEST"
pytest_status=$?
[ $ctest_status -eq 0 ] && [ $pytest_status -eq 0 ]
