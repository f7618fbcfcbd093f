#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, AddressSanitizer + UndefinedBehaviorSanitizer) and runs
# each for a bounded time on a corpus seeded from the repository's own files. Prints, per
# target, libFuzzer's final statistics (executions, speed) and any crash, which libFuzzer saves
# as crash-<sha1> in build-fuzz/findings/<target>/ (copy it to fuzz/regressions/<target>/ once
# fixed: every later run starts from it).
#
#   fuzz/run.sh [seconds per target, default 60] [targets...]
#   PARITY_FUZZ_JOBS=1 fuzz/run.sh 600 fuzz_npy       # one target, ten minutes, one core
#   PARITY_FUZZ_RUNS=10000000 fuzz/run.sh 3600        # each target to 10 million executions
#                                                     # (or an hour, whichever comes first)
#   PARITY_FUZZ_PROCS=2 fuzz/run.sh 9000 fuzz_prepare  # two processes of it at once, sharing
#                                                     # one corpus; their executions are summed
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${PARITY_FUZZ_BUILD:-$ROOT/build-fuzz}
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
# fuzz_prepare (every kernel) is left out by default: see fuzz/README.md.
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_npy fuzz_npz fuzz_json fuzz_cli_values fuzz_onnx_model)
JOBS=${PARITY_FUZZ_JOBS:-2}
PROCS=${PARITY_FUZZ_PROCS:-1}
if ! [[ $PROCS =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz/run.sh: PARITY_FUZZ_PROCS is '$PROCS'; it must be a positive number of processes per target, e.g. 2" >&2
  exit 2
fi
RUNS=()
if [ -n "${PARITY_FUZZ_RUNS:-}" ]; then
  if ! [[ $PARITY_FUZZ_RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz/run.sh: PARITY_FUZZ_RUNS is '$PARITY_FUZZ_RUNS'; it must be a positive number of executions, e.g. 10000000" >&2
    exit 2
  fi
  RUNS=(-runs="$PARITY_FUZZ_RUNS")
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPARITY_FUZZ=ON -DPARITY_BUILD_TESTS=OFF -DPARITY_BUILD_BENCH=OFF -DPARITY_BUILD_PYTHON=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -O1 -g" \
    >/dev/null || exit 1
fi
nice cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" || exit 1

# Seeds: the repository's models and data files, plus small files made here with NumPy and
# Parity's own writers (so every format has a valid example to mutate from).
SEEDS=$BUILD/seeds
mkdir -p "$SEEDS"/{onnx,npy,npz,json,cli}
cp examples/*.onnx "$SEEDS/onnx/" 2>/dev/null
find /usr/share/libonnx-testdata -name 'model.onnx' 2>/dev/null | head -200 | while read -r m; do
  cp "$m" "$SEEDS/onnx/$(echo "$m" | md5sum | cut -c1-12).onnx"
done
/usr/bin/python3 - "$SEEDS" <<'PY'
import base64, io, json, sys
import numpy as np
d = sys.argv[1]
arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]), np.array(7),
          np.zeros((0, 4), np.int8), np.array(['ab', 'c']), np.ones((2, 2), np.float16)]
for i, a in enumerate(arrays):
    np.save(f'{d}/npy/{i}.npy', a)
np.savez(f'{d}/npz/stored.npz', *arrays[:4])
np.savez_compressed(f'{d}/npz/deflated.npz', *arrays[:4])
def npy(a):
    b = io.BytesIO(); np.save(b, a); return base64.b64encode(b.getvalue()).decode()
feed = [{'x': {'array': npy(arrays[0]), 'polygraphy_class': 'ndarray'}}]
json.dump(feed, open(f'{d}/json/inputs.json', 'w'))
results = {'lst': [['runner', [{'outputs': {'y': {'array': npy(arrays[5]),
            'polygraphy_class': 'ndarray'}}, 'runtime': 0.1, 'runner_name': 'runner',
            'polygraphy_class': 'IterationResult'}]]], 'polygraphy_class': 'RunResults'}
json.dump(results, open(f'{d}/json/results.json', 'w'))
open(f'{d}/cli/0', 'w').write('1e-5\nout0:1e-3\nx:[1,3,224,224]\n[-1,1]\ny:[0,2]\n')
open(f'{d}/cli/1', 'w').write("x:[1,'batch',-1]\ninf\nnan\n")
PY

seed_of() {
  case $1 in
    fuzz_onnx_model|fuzz_prepare) echo onnx ;;
    fuzz_npy) echo npy ;; fuzz_npz) echo npz ;; fuzz_json) echo json ;; fuzz_cli_values) echo cli ;;
  esac
}

for t in "${TARGETS[@]}"; do
  corpus=$BUILD/corpus/$t findings=$BUILD/findings/$t
  mkdir -p "$corpus" "$findings"
  echo "== $t ($SECONDS_PER_TARGET s${PARITY_FUZZ_RUNS:+ or $PARITY_FUZZ_RUNS executions})"
  # -rss_limit_mb and -timeout turn a memory blow-up or a hang into a reported finding.
  # Inputs that once crashed (fuzz/regressions/<target>/) are seeds too.
  regressions=()
  [ -d "$ROOT/fuzz/regressions/$t" ] && regressions=("$ROOT/fuzz/regressions/$t")
  start=$SECONDS
  logs=()
  for ((k = 1; k <= PROCS; k++)); do
    logs+=("$(mktemp)")
    nice "$BUILD/fuzz/$t" "$corpus" "$SEEDS/$(seed_of "$t")" "${regressions[@]}" -max_total_time="$SECONDS_PER_TARGET" "${RUNS[@]}" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/" \
      2>&1 | grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" >"${logs[-1]}" &
  done
  wait
  total=0
  for ((k = 1; k <= PROCS; k++)); do
    if [ "$PROCS" -gt 1 ]; then sed "s/^/[process $k] /" "${logs[k - 1]}"; else cat "${logs[k - 1]}"; fi
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "${logs[k - 1]}")
    total=$((total + ${n:-0}))
    rm -f "${logs[k - 1]}"
  done
  [ "$PROCS" -gt 1 ] && echo "executions of the $PROCS processes: $total"
  echo "wall seconds: $((SECONDS - start))"
  rmdir "$findings" 2>/dev/null
done
