#!/bin/bash
# `debug reduce` on a 1,000-node model with one disagreement (a float16 Cast+Add on which ONNX
# Runtime and the reference differ, tests/cli/fixtures/debug/mk_fp16.py): the native mode (both
# backends compared in this process, starting from the first divergence) against the --check
# mode (one `parity run` process per candidate), and, where Polygraphy is installed, Polygraphy's
# own reduce running the same check command as the yardstick. Prints seconds, candidates and the
# reduced model's nodes for each.
#
#   bench/debug_reduce.sh [build-dir] [nodes] [wrong-node-index]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
nodes=${2:-1000}
wrong=${3:-500}
parity="$build/parity"
polygraphy=${POLYGRAPHY:-/work/shared/tools/polygraphy/polygraphy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 "$here/tests/cli/fixtures/debug/mk_fp16.py" "$nodes" "$wrong" model.onnx

report() {  # name, log, seconds, reduced model
  local candidates ops
  candidates=$(grep -c "RUNNING | Iteration" "$2" || true)
  ops=$(/usr/bin/python3 -c "import onnx; print(' '.join(n.op_type for n in onnx.load('$4').graph.node))")
  printf '%-34s %8.2f s  %3d candidates  reduced to: %s\n' "$1" "$3" "$candidates" "$ops"
}
timed() {  # log, command...
  local log=$1 start end
  shift
  rm -f polygraphy_debug_replay*.json
  start=$(date +%s.%N)
  "$@" > "$log" 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

echo "model: $nodes-node chain, the float16 Cast+Add at node $wrong"
s=$(timed native.log "$parity" debug reduce model.onnx --onnxrt --pluginref -o native.onnx)
report "parity native (--onnxrt --pluginref)" native.log "$s" native.onnx
check=("$parity" run polygraphy_debug.onnx --onnxrt --pluginref)
s=$(timed check.log "$parity" debug reduce model.onnx -o check.onnx --check "${check[@]}")
report "parity --check 'parity run'" check.log "$s" check.onnx
s=$(timed linear.log "$parity" debug reduce check.onnx -o linear.onnx --mode linear --check "${check[@]}")
report "  then --mode linear on its result" linear.log "$s" linear.onnx
if [ -x "$polygraphy" ]; then
  s=$(timed polygraphy.log "$polygraphy" debug reduce model.onnx -o polygraphy.onnx --check "${check[@]}")
  report "polygraphy --check 'parity run'" polygraphy.log "$s" polygraphy.onnx
fi
