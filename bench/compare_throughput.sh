#!/usr/bin/env bash
# Comparison throughput as a ratio to the copy yardstick (memcpy of both outputs), the two run
# back to back in every round, at the same size and thread count, so that a busy moment on a
# shared machine slows both: prints each comparison's median ratio over the rounds (issue 5 asks
# for at least 0.25).
#
#   bench/compare_throughput.sh [build folder] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROUNDS=${2:-5}
BIN=$BUILD/bench/compare_throughput_bench

# One round at one size and thread count: the copy, then each comparison, in one process (the
# outputs are built once): prints "name milliseconds" lines.
round() {
  "$BIN" --benchmark_filter="^BM_[A-Za-z]+/$1/$2/real_time\$" --benchmark_min_time=0.2 \
    --benchmark_format=csv 2>/dev/null |
    awk -F, 'NR > 1 { gsub(/"/, "", $1); split($1, part, "/"); print part[1], $3 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "%-26s %7s %8s %10s %10s %9s\n" comparison size threads copy_ms ms vs_copy
for size in 16777216 1073741824; do
  label=$([ "$size" = 16777216 ] && echo 16MiB || echo 1GiB)
  for threads in 1 2; do
    rounds=$(mktemp)
    for r in $(seq "$ROUNDS"); do round "$size" "$threads" | sed "s/^/$r /"; done > "$rounds"
    for bench in CompareTensors CompareTensorsProfile CompareFuncSimple CompareFuncSimpleHalf; do
      # Per round: copy ms, comparison ms, their ratio; medians over the rounds.
      awk -v b="BM_$bench" '$2 == "BM_Copy" { c[$1] = $3 } $2 == b { t[$1] = $3 }
        END { for (r in t) print c[r], t[r], c[r] / t[r] }' "$rounds" > "$rounds.$bench"
      printf "%-26s %7s %8s %10.2f %10.2f %9.2f\n" "$bench" "$label" "$threads" \
        "$(cut -d' ' -f1 "$rounds.$bench" | median)" "$(cut -d' ' -f2 "$rounds.$bench" | median)" \
        "$(cut -d' ' -f3 "$rounds.$bench" | median)"
      rm -f "$rounds.$bench"
    done
    rm -f "$rounds"
  done
done
