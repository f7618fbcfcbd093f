#!/bin/sh
# Time and peak memory (RSS) of `parity surgeon sanitize --fold-constants`, `parity surgeon
# extract` and `parity convert --fp-to-fp16` on a model whose weights (external data) take
# SIZE_MB, beside a plain `cp` of the weights file (the yardstick: the same bytes read and written once).
# Both tools write to another folder, so every weight is copied into the new model's data file.
#
#   bench/surgeon_memory.sh build/parity [SIZE_MB]     (default 2560 MiB: ten 256 MiB tensors)
#
# Results are in bench/README.md.
set -eu
PARITY=${1:?usage: surgeon_memory.sh path/to/parity [SIZE_MB]}
SIZE_MB=${2:-2560}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/in" "$WORK/out"

# Ten weights, each added to the input, and a small constant chain that folding removes. The
# weights file is written tensor by tensor, so making the model needs no more memory than one.
/usr/bin/python3 - "$WORK/in" "$SIZE_MB" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
folder, size_mb = sys.argv[1], int(sys.argv[2])
count = 10
numel = size_mb * 1024 * 1024 // 4 // count
inits, nodes, outputs = [], [], []
with open(os.path.join(folder, "weights.bin"), "wb") as f:
    for i in range(count):
        offset = f.tell()
        np.full(numel, i, dtype=np.float32).tofile(f)
        t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[numel])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(numel * 4))):
            e = t.external_data.add(); e.key, e.value = k, v
        inits.append(t)
        nodes.append(helper.make_node("Add", ["xs", f"w{i}"], [f"y{i}"]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [numel]))
nodes.insert(0, helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.float32(2), "k")))
nodes.insert(1, helper.make_node("Mul", ["x", "k"], ["xs"]))
graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [numel])],
                          outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.save(model, os.path.join(folder, "big.onnx"))
PY

measure() {  # label, command...: prints label, seconds and peak RSS in MiB
  label=$1; shift
  sync
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/log" 2>&1 || { cat "$WORK/log"; exit 1; }
  read -r secs kib < "$WORK/time"
  printf '%-44s %8.2f s %8d MiB  %5.2fx the weights\n' "$label" "$secs" $((kib / 1024)) \
    "$(echo "$kib / 1024 / $SIZE_MB" | bc -l)"
}

echo "weights: $SIZE_MB MiB in external data"
measure "cp weights.bin (yardstick)" cp "$WORK/in/weights.bin" "$WORK/out/copy.bin"
rm -f "$WORK/out/copy.bin"
measure "surgeon sanitize --fold-constants" "$PARITY" surgeon sanitize "$WORK/in/big.onnx" \
  --fold-constants -o "$WORK/out/folded.onnx"
rm -f "$WORK/out/folded.onnx"*
measure "surgeon extract (all outputs)" "$PARITY" surgeon extract "$WORK/in/big.onnx" \
  --inputs x:auto:auto --outputs y0:auto y1:auto y2:auto y3:auto y4:auto y5:auto y6:auto \
  y7:auto y8:auto y9:auto -o "$WORK/out/sub.onnx"
rm -f "$WORK/out/sub.onnx"*
measure "surgeon sanitize --save-external-data" "$PARITY" surgeon sanitize "$WORK/in/big.onnx" \
  -o "$WORK/out/saved.onnx" --save-external-data
rm -f "$WORK/out/saved.onnx"*
measure "convert --fp-to-fp16 --save-external-data" "$PARITY" convert "$WORK/in/big.onnx" \
  --fp-to-fp16 -o "$WORK/out/fp16.onnx" --save-external-data
