#!/usr/bin/env bash
# `parity run` end to end on a tiny model (start-up, model load, data generation, inference,
# comparison, report), beside the cost of starting any process (/bin/true) as the floor.
# Polygraphy needs about 0.6 s for the same command on these machines (`polygraphy run -h`
# alone takes 0.4 s); the target is 20x faster.
#
#   bench/cli_run.sh [path/to/parity] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
PARITY=${1:-build/parity}
RUNS=${2:-50}
MODEL=examples/identity.onnx

time_runs() {  # prints the mean wall time in milliseconds of RUNS runs of "$@"
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / 1000000 / $RUNS" | bc
}

floor=$(time_runs /bin/true)
ref=$(time_runs "$PARITY" run "$MODEL" --pluginref)
both=$(time_runs "$PARITY" run "$MODEL" --pluginref --onnxrt)
cnn=$(time_runs "$PARITY" run examples/tiny_cnn.onnx --pluginref --onnxrt)
echo "runs per command:                        $RUNS"
echo "process start floor (/bin/true):         ${floor} ms"
echo "parity run identity --pluginref:         ${ref} ms  ($(echo "scale=1; 600 / $ref" | bc)x faster than Polygraphy's 0.6 s)"
echo "parity run identity --pluginref --onnxrt: ${both} ms"
echo "parity run tiny_cnn --pluginref --onnxrt: ${cnn} ms"
