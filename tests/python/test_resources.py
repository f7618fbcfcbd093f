"""What a run costs in memory and leaves on disk (issue 15): a large MatMul's peak RSS within
1.5 times its weights on the reference."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from conftest import PARITY_CLI, tensor
from parity.json import load_json

# Runs a command in a fresh Python process that reports the peak RSS (KiB) of its one child,
# so that earlier children of pytest do not count.
_PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(r.stdout + r.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(r.returncode)\n"
)


def peak_rss_mib(*command):
    r = subprocess.run([sys.executable, "-c", _PEAK_RSS, *command], capture_output=True, text=True)
    return r.returncode, int(r.stdout.split()[-1]) / 1024, r.stderr


def external_matmul_model(folder, m, k, n, seed=0):
    """x [m, k] @ w [k, n], w float32 in the external file weights.bin; returns (path, w)."""
    w = np.random.default_rng(seed).standard_normal((k, n), dtype=np.float32)
    w.tofile(os.path.join(folder, "weights.bin"))
    init = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[k, n])
    init.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(w.nbytes))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [tensor("x", TensorProto.FLOAT, [m, k])], [tensor("y", TensorProto.FLOAT, [m, n])],
        [init])
    path = os.path.join(folder, "matmul.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
              path)
    return path, w


def test_large_constant_matmul_peaks_within_one_and_a_half_times_its_weights(tmp_path):
    # 256 MiB of float32 weights: packed whole in float64 they would take 512 MiB more.
    model, w = external_matmul_model(str(tmp_path), 4, 8192, 8192)
    weights_mib = w.nbytes / 2**20
    saved = tmp_path / "out.json"
    rc, peak, log = peak_rss_mib(PARITY_CLI, "run", model, "--pluginref", "--save-inputs",
                                 str(tmp_path / "in.json"), "--save-outputs", str(saved))
    assert rc == 0, log
    assert peak <= 1.5 * weights_mib, f"peak RSS {peak:.0f} MiB for {weights_mib:.0f} MiB of weights"
    # And the product is right: against NumPy in float64, within float32 rounding.
    x = load_json(tmp_path / "in.json")[0]["x"]
    y = load_json(saved)[0][1][0]["y"]
    expected = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)
