#!/usr/bin/env bash
# Issue #14's model table: each model-zoo architecture (bench/zoo_models*.cc), the transformer
# block and the LSTM on the reference backend and on ONNX Runtime, at 1 and 2 threads, one
# backend per process (bench/ref_vs_ort). Each time is the median of K iterations, best of R
# runs; printed as a markdown table of ratios (reference / ONNX Runtime) and each backend's
# speed-up from 1 to 2 threads. "CPU" columns use the process's CPU time per iteration, which
# other jobs on the machine disturb less than wall time at 1 thread.
#
#   bench/model_table.sh [build folder] [iterations K] [runs R] [model ...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ITERS=${2:-5}
RUNS=${3:-3}
shift $(($# < 3 ? $# : 3))
MODELS=("$@")
if [ ${#MODELS[@]} -eq 0 ]; then
  MODELS=(resnet50 densenet121 inception_v1 inception_v2 squeezenet1.1 shufflenet_v1 vgg19
    alexnet zfnet512 transformer lstm)
fi
BIN=$BUILD/bench/ref_vs_ort

field() { sed -E "s/.*$1=([0-9.]+).*/\1/" <<< "$2"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

# Sets WALL and CPU to the best of R runs of one backend at one thread count.
best_of_runs() {
  WALL=""
  CPU=""
  for ((r = 0; r < RUNS; ++r)); do
    local line
    line=$("$BIN" --model "$1" --runner "$2" --threads "$3" --iterations "$ITERS")
    WALL=$(min "$(field median_ms "$line")" "$WALL")
    CPU=$(min "$(field cpu_ms "$line")" "$CPU")
  done
}

echo "load before: $(uptime)"
echo
echo "| model | ORT ms 1t | ref ms 1t | ratio 1t | ratio 1t, CPU time | ORT ms 2t | ref ms 2t |" \
  "ratio 2t | ref speed-up 1->2 | ORT speed-up 1->2 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for model in "${MODELS[@]}"; do
  best_of_runs "$model" ort 1; ort1=$WALL; ort1_cpu=$CPU
  best_of_runs "$model" ref 1; ref1=$WALL; ref1_cpu=$CPU
  best_of_runs "$model" ort 2; ort2=$WALL
  best_of_runs "$model" ref 2; ref2=$WALL
  echo "| $model | $ort1 | $ref1 | $(div "$ref1" "$ort1") | $(div "$ref1_cpu" "$ort1_cpu") |" \
    "$ort2 | $ref2 | $(div "$ref2" "$ort2") | $(div "$ref1" "$ref2") | $(div "$ort1" "$ort2") |"
done
echo
echo "load after: $(uptime)"
