#!/usr/bin/env bash
# Builds Parity if needed and runs the whole test suite: the C++ tests (ctest), which include
# the ONNX conformance harness and the CLI tests, then the Python module's tests (pytest).
# Ends with one "N passed, N failed" line that sums both.
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=${PARITY_BUILD_DIR:-$ROOT/build}
JOBS=${PARITY_JOBS:-$(nproc)}

scripts/install-deps.sh || exit 1
# ONNX Runtime from npm: 1.30.0 is the one Parity uses; the tests also run against 1.17.0 to
# prove the range of versions the hand-declared C API supports.
scripts/install-onnxruntime.sh 1.30.0 deps/onnxruntime-1.30.0 >/dev/null || exit 1
scripts/install-onnxruntime.sh 1.17.0 deps/onnxruntime-1.17.0 >/dev/null || exit 1

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release || exit 1
fi
cmake --build "$BUILD" -j"$JOBS" || exit 1

log=$(mktemp)
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" 2>&1 | tee "$log"
ctest_status=${PIPESTATUS[0]}

# ctest's own summary: "NN% tests passed, F tests failed out of T".
summary=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<< "$summary")
failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<< "$summary")
# Tests that skipped themselves (GTEST_SKIP) are listed by ctest as "(Skipped)": not passed.
skipped=$(grep -cE '^\s+[0-9]+ - .*\(Skipped\)' "$log" || true)
rm -f "$log"
if [ -z "$summary" ]; then
  echo "tests: 0 passed, 1 failed"
  exit 1
fi

# The Python module's tests (pytest, Debian's Python) against the module in the build tree.
# pytest's summary reads "2 failed, 129 passed, 1 error in 4.6s" (each part optional); exit
# status 5 means it collected no tests.
pylog=$(mktemp)
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" PARITY_BUILD_DIR="$BUILD" \
  PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest tests/python -q -p no:cacheprovider 2>&1 |
  tee "$pylog"
pytest_status=${PIPESTATUS[0]}
count() { grep -E "^=*[ ]*[0-9]+ (passed|failed|errors?|skipped)" "$pylog" | tail -n 1 |
  grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0; }
py_passed=$(count passed)
py_skipped=$(count skipped)
py_failed=$(( $(count failed) + $(count "errors?") ))
rm -f "$pylog"
if [ "$pytest_status" -ne 0 ] && [ "$pytest_status" -ne 5 ] && [ "$py_failed" -eq 0 ]; then
  py_failed=1  # pytest itself failed (no module, a crash): count it
fi

echo "tests: $((total - failed - skipped + py_passed)) passed, $((failed + py_failed)) failed, $((skipped + py_skipped)) skipped"
[ "$ctest_status" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$py_failed" -eq 0 ]
