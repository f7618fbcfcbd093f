#!/usr/bin/env bash
# The reference backend's time and peak memory as ratios to ONNX Runtime's, at the same
# thread count, on a ResNet-18-style network and a BERT-base-style encoder block.
#
#   bench/ref_vs_ort.sh [build folder] [threads] [iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
THREADS=${2:-2}
ITERS=${3:-5}
BIN=$BUILD/bench/ref_vs_ort

field() { sed -E "s/.*$1=([0-9.]+).*/\1/" <<< "$2"; }

printf "%-12s %8s %10s %10s %8s %10s %10s %8s\n" model threads ref_ms ort_ms time_x \
  ref_mb ort_mb mem_x
for model in resnet transformer; do
  ref=$("$BIN" --model "$model" --runner ref --threads "$THREADS" --iterations "$ITERS")
  ort=$("$BIN" --model "$model" --runner ort --threads "$THREADS" --iterations "$ITERS")
  rt=$(field median_ms "$ref"); ot=$(field median_ms "$ort")
  rm=$(field peak_rss_mb "$ref"); om=$(field peak_rss_mb "$ort")
  printf "%-12s %8s %10s %10s %8s %10s %10s %8s\n" "$model" "$THREADS" "$rt" "$ot" \
    "$(echo "scale=2; $rt / $ot" | bc)" "$rm" "$om" "$(echo "scale=2; $rm / $om" | bc)"
done
